"""The OpenAPI 3.1 document of the API.

The schemas come from the pydantic models that validate requests and shape
responses (``models_json_schema``, i.e. ``model_json_schema`` for several
models sharing one set of definitions); the paths are assembled here.
"""

from __future__ import annotations

import copy
from functools import lru_cache
from typing import Any, cast

from pydantic.json_schema import models_json_schema

from truedeal import __version__ as _version

from .config import WebConfig
from .models import (
    DEAL_FORMATS,
    CountResult,
    JobRequest,
    JobStatus,
    ProblemDetails,
    Spec,
)

_REF = "#/components/schemas/{model}"


@lru_cache(maxsize=1)
def schemas() -> dict[str, Any]:
    """Component schemas of every model the API uses."""
    _, top = models_json_schema(
        [
            (Spec, "validation"),
            (JobRequest, "validation"),
            (CountResult, "serialization"),
            (JobStatus, "serialization"),
            (ProblemDetails, "serialization"),
        ],
        ref_template=_REF,
    )
    return top["$defs"]


def _ref(name: str) -> dict[str, str]:
    return {"$ref": _REF.format(model=name)}


def _problem(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/problem+json": {"schema": _ref("ProblemDetails")}}}


def _json(description: str, schema: str, headers: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"description": description, "content": {"application/json": {"schema": _ref(schema)}}}
    if headers:
        out["headers"] = headers
    return out


_JOB_ID = {
    "name": "job_id",
    "in": "path",
    "required": True,
    "description": "Job id: 32 lowercase hex digits.",
    "schema": {"type": "string", "pattern": "^[0-9a-f]{32}$"},
}


def document(config: WebConfig) -> dict[str, Any]:
    """The whole OpenAPI document for a server with ``config``."""
    common = {
        "401": _problem("Missing or invalid API key (only when the server requires keys)."),
        "429": _problem("Too many requests: the rate limit, too many wrong API keys, or (count) a count of this client still running."),
        "503": _problem("The job store, the queue or the counting processes are unavailable or busy."),
    }
    extra = cast(dict[str, Any], Spec.model_config.get("json_schema_extra") or {})
    spec_example = extra.get("examples", [{}])[0]
    paths: dict[str, Any] = {
        "/api/count": {
            "post": {
                "operationId": "countSpec",
                "summary": "Exact count and probability of a spec",
                "description": (
                    "Counts the deals that satisfy the spec exactly (Pavlicek's listing), at once and without a job. "
                    "A spec no deal satisfies answers 200 with `possible: false`. Results are cached per canonical spec."
                ),
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": _ref("Spec"), "example": spec_example}},
                },
                "responses": {
                    "200": _json("The count.", "CountResult"),
                    "400": _problem("The body is not JSON."),
                    "413": _problem("The body is too large."),
                    "415": _problem("The body is not sent as application/json."),
                    "422": _problem("Invalid spec (the detail is one line naming the problem), or a spec too wide or too slow to count."),
                    **common,
                },
            }
        },
        "/api/jobs": {
            "post": {
                "operationId": "submitJob",
                "summary": "Submit a generation job",
                "description": (
                    "Validates the request (spec, count, seed, format) and queues the job. "
                    f"At most `TRUEDEAL_MAX_JOB_DEALS` deals per job (here {config.max_job_deals:,}); more answers 413."
                ),
                "requestBody": {"required": True, "content": {"application/json": {"schema": _ref("JobRequest")}}},
                "responses": {
                    "202": _json(
                        "Accepted; poll the Location.", "JobStatus",
                        {"Location": {"description": "The job's URL.", "schema": {"type": "string"}}},
                    ),
                    "400": _problem("The body is not JSON."),
                    "413": _problem("The body is too large, or the count is above the server's maximum (the schema's maximum)."),
                    "415": _problem("The body is not sent as application/json."),
                    "422": _problem("Invalid spec or request, or a spec no deal satisfies."),
                    **common,
                },
            }
        },
        "/api/jobs/{job_id}": {
            "parameters": [_JOB_ID],
            "get": {
                "operationId": "getJob",
                "summary": "State, progress, count and timestamps of a job",
                "responses": {
                    "200": _json("The job.", "JobStatus"),
                    "404": _problem("Unknown job (never existed, or expired)."),
                    **common,
                },
            },
            "delete": {
                "operationId": "cancelJob",
                "summary": "Cancel a job (idempotent)",
                "description": "Stops the job's work and discards its deals; a job that already ended is returned unchanged.",
                "responses": {
                    "200": _json("The job after cancelling.", "JobStatus"),
                    "404": _problem("Unknown job."),
                    **common,
                },
            },
        },
        "/api/jobs/{job_id}/deals": {
            "parameters": [_JOB_ID],
            "get": {
                "operationId": "getDeals",
                "summary": "The deals of a finished job, streamed",
                "parameters": [
                    {"name": "format", "in": "query", "required": False,
                     "description": "Output format (default: the job's format).",
                     "schema": {"type": "string", "enum": list(DEAL_FORMATS)}},
                    {"name": "offset", "in": "query", "required": False, "description": "Deals to skip.",
                     "schema": {"type": "integer", "minimum": 0}},
                    {"name": "limit", "in": "query", "required": False, "description": "Most deals to return.",
                     "schema": {"type": "integer", "minimum": 0}},
                    {"name": "download", "in": "query", "required": False,
                     "description": "Answer with Content-Disposition: attachment.",
                     "schema": {"type": "boolean"}},
                ],
                "responses": {
                    "200": {
                        "description": "The deals: deal numbers (one per line), PBN 2.1, JSON Lines, text diagrams or BBO LIN.",
                        "headers": {"X-Deal-Count": {"description": "Deals in this response.", "schema": {"type": "integer"}}},
                        "content": {
                            "text/plain": {"schema": {"type": "string"}},
                            "application/x-pbn": {"schema": {"type": "string"}},
                            "application/x-ndjson": {"schema": {"type": "string"}},
                        },
                    },
                    "400": _problem("Bad format, offset or limit."),
                    "404": _problem("Unknown job."),
                    "409": _problem("The job is not done yet."),
                    "410": _problem("The job was cancelled or failed: its deals will never exist (the detail says why)."),
                    **common,
                },
            },
        },
        "/healthz": {
            "get": {
                "operationId": "health",
                "summary": "Liveness: 200 when the job store answers",
                "security": [],
                "responses": {
                    "200": {"description": "Healthy.", "content": {"application/json": {"schema": {
                        "type": "object", "properties": {"status": {"type": "string"}, "redis": {"type": "string"}},
                        "required": ["status", "redis"]}}}},
                    "503": _problem("The job store cannot be reached."),
                },
            }
        },
        "/api/openapi.json": {
            "get": {
                "operationId": "openapi",
                "summary": "This document",
                "security": [],
                "responses": {"200": {"description": "OpenAPI 3.1 document.",
                                      "content": {"application/json": {"schema": {"type": "object"}}}}},
            }
        },
    }
    paths.update(_set_paths(common))
    paths.update(_distribution_path(common))
    # The models cap a job at the engine's limit; this server's own cap
    # (TRUEDEAL_MAX_JOB_DEALS) is what a client may send without a 413.
    components = copy.deepcopy(schemas())
    components["JobRequest"]["properties"]["count"]["maximum"] = config.max_job_deals
    doc: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {
            "title": "truedeal",
            "version": _version,
            "description": (
                "Exactly uniform constrained bridge deals. Count a spec at once, or submit a generation job, "
                "poll it and stream its deals. Every error is RFC 9457 application/problem+json."
            ),
        },
        "jsonSchemaDialect": "https://spec.openapis.org/oas/3.1/dialect/base",
        "servers": [{"url": "/"}],
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {
                "bearerAuth": {"type": "http", "scheme": "bearer",
                               "description": "An API key from TRUEDEAL_API_KEYS (only when the server sets any)."}
            },
        },
    }
    if config.api_keys:
        doc["security"] = [{"bearerAuth": []}]
    return doc


_SET_ID = {"name": "set_id", "in": "path", "required": True, "description": "Set id: 16 lowercase hex digits.",
           "schema": {"type": "string"}}
_OBJECT = {"type": "object"}
_VALUE = {"type": "string", "minLength": 1, "maxLength": 1000}


def _object(description: str, status: str = "200") -> dict[str, Any]:
    return {status: {"description": description, "content": {"application/json": {"schema": _OBJECT}}}}


def _set_paths(common: dict[str, Any]) -> dict[str, Any]:
    """Tournament sets (docs/tournaments.md): submit, status, cancel, public value, manifest, keys, files."""
    file_types = ("text/plain", "text/csv", "text/html", "application/pdf", "application/octet-stream")
    return {
        "/api/sets": {"post": {
            "operationId": "submitSet",
            "summary": "Queue a tournament set: deal it, solve it double dummy, write its files",
            "description": "With public_value_to_come (and no seed or public_value) the set is only committed: "
                           "its manifest can be published now, and POST /api/sets/{set_id}/public-value deals it.",
            "requestBody": {"required": True, "content": {"application/json": {"schema": {
                "type": "object", "required": ["set"],
                "properties": {"set": _OBJECT, "seed": _VALUE, "public_value": _VALUE,
                               "public_value_to_come": _VALUE}}}}},
            "responses": {**_object("The set's id and links.", "202"),
                          "400": _problem("Not JSON."), "413": _problem("Body too large."),
                          "415": _problem("Not application/json."), "422": _problem("An invalid set file."), **common},
        }},
        "/api/sets/{set_id}": {"parameters": [_SET_ID], "get": {
            "operationId": "getSet", "summary": "State, phase and progress of a set; its files once done",
            "responses": {**_object("The set."), "404": _problem("Unknown set."), **common}}, "delete": {
            "operationId": "cancelSet", "summary": "Cancel a set (idempotent): its queued work then does nothing",
            "responses": {**_object("The set, cancelled (or as it ended)."), "404": _problem("Unknown set."), **common}}},
        "/api/sets/{set_id}/public-value": {"parameters": [_SET_ID], "post": {
            "operationId": "giveSetPublicValue",
            "summary": "Deal a committed set with its public value, now drawn",
            "requestBody": {"required": True, "content": {"application/json": {"schema": {
                "type": "object", "required": ["public_value"], "properties": {"public_value": _VALUE}}}}},
            "responses": {**_object("The set, queued.", "202"), "404": _problem("Unknown set."),
                          "409": _problem("The set is not waiting for a public value."),
                          "415": _problem("Not application/json."), "422": _problem("No public value."), **common}}},
        "/api/sets/{set_id}/manifest": {"parameters": [_SET_ID], "get": {
            "operationId": "getSetManifest", "summary": "The set's public manifest (commitments)",
            "responses": {**_object("The manifest."), "404": _problem("Unknown set."), **common}}},
        "/api/sets/{set_id}/keys": {"parameters": [_SET_ID], "get": {
            "operationId": "getSetKeys", "summary": "The session keys (keys.json) of a finished set, for verify",
            "responses": {**_object("The keys."), "404": _problem("Unknown set."),
                          "409": _problem("The set is not finished."), **common}}},
        "/api/sets/{set_id}/files/{name}": {
            "parameters": [_SET_ID, {"name": "name", "in": "path", "required": True,
                                     "description": "SESSION.EXT, EXT one of pbn lin dup dlm bri csv html pdf.",
                                     "schema": {"type": "string"}}],
            "get": {"operationId": "getSetFile", "summary": "One file of a finished set",
                    "responses": {"200": {"description": "The file.",
                                          "content": {t: {"schema": {"type": "string"}} for t in file_types}},
                                  "404": _problem("Unknown set or file."), "409": _problem("The set is not finished."),
                                  **common}}},
    }


_ROW_EXACT = {"type": "object", "required": ["value", "deals", "probability_exact"], "properties": {
    "value": {"type": ["integer", "string"]}, "deals": {"type": "integer"}, "deals_text": {"type": "string"},
    "probability_exact": {"type": "string", "description": "p/q"}, "probability": {"type": "number"}}}
_ROW_ESTIMATE = {"type": "object", "required": ["value", "samples", "probability_estimate", "stderr"], "properties": {
    "value": {"type": ["integer", "string"]}, "samples": {"type": "integer"},
    "probability_estimate": {"type": "number"}, "stderr": {"type": "number"}}}
_LAW = {"type": "object", "required": ["feature", "exact", "distribution"], "properties": {
    "feature": {"type": "string"}, "exact": {"type": "boolean"},
    "deals": {"type": "integer"}, "deals_text": {"type": "string"},
    "distribution": {"type": "array", "items": {"anyOf": [_ROW_EXACT, _ROW_ESTIMATE]}},
    "mean_exact": {"type": ["string", "null"]}, "mean": {"type": ["number", "null"]},
    "variance_exact": {"type": ["string", "null"]}, "sd": {"type": ["number", "null"]},
    "method": {"type": "string"}, "samples": {"type": "integer"}, "seed": {"type": "string"},
    "mean_estimate": {"type": ["number", "null"]}, "mean_stderr": {"type": ["number", "null"]},
    "sd_estimate": {"type": ["number", "null"]}}}


def _distribution_path(common: dict[str, Any]) -> dict[str, Any]:
    """POST /api/distribution (docs/analysis.md)."""
    body = {"type": "object", "required": ["constraints", "of"], "additionalProperties": False, "properties": {
        "constraints": _ref("Spec"),
        "of": {"type": "string", "minLength": 1, "maxLength": 500,
               "description": "Any dealer number (hcp(north)+hcp(south), controls(west), losers(north) ...), "
                              "or 'shape class of SEAT'; 'EXPR given COND' conditions it."}}}
    return {"/api/distribution": {"post": {
        "operationId": "distribution",
        "summary": "Exact distribution of an expression over every deal of a spec",
        "description": ("Exact deal counts and fractions for each value, with the exact mean and variance, and no deal "
                        "drawn. Only where no exact answer exists (tricks, rnd, products of too many values, rejection) the answer has "
                        "`exact: false` and is a sampled estimate with standard errors. Runs under the count time limit."),
        "requestBody": {"required": True, "content": {"application/json": {"schema": body, "example": {
            "constraints": {"north": {"hcp": [15, 17]}}, "of": "hcp(north)+hcp(south)"}}}},
        "responses": {"200": {"description": "The law.", "content": {"application/json": {"schema": _LAW}}},
                      "400": _problem("Not JSON."), "413": _problem("Body too large."),
                      "415": _problem("Not application/json."),
                      "422": _problem("Invalid spec or expression (with a pointer), no deal fits, or too slow to count."),
                      **common}}}}
