"""The sets API: problem+json errors, submission, status and the manifest
(real Redis, db 15; no worker is needed for these)."""

import uuid

import pytest

redis = pytest.importorskip("redis")

PREFIX = f"tdsetweb-{uuid.uuid4().hex[:8]}:"
SET = {"sessions": [{"name": "1", "boards": [1, 4]}], "spec": {}, "double_dummy": False}


@pytest.fixture(scope="module")
def client():
    from truedeal_web.app import create_app

    r = redis.Redis(db=15)
    try:
        r.ping()
    except redis.exceptions.ConnectionError as exc:
        pytest.skip(f"no Redis: {exc}")
    app = create_app({"redis_url": "redis://127.0.0.1:6379/15", "key_prefix": PREFIX})
    yield app.test_client()
    keys = list(r.scan_iter(match=PREFIX + "*"))
    if keys:
        r.delete(*keys)


@pytest.mark.parametrize("body,status,detail", [
    ({"set": {**SET, "spec": "/etc/passwd"}}, 422, "inline"),
    ({"set": {**SET, "spec": {"north": {"hcp": [17, 15]}}}}, 422, "reversed"),
    ({"set": {**SET, "dealer": "up"}}, 422, "not a seat"),
    ({"set": SET, "seed": 5}, 422, "seed must be text"),
    ({"set": {**SET, "sessions": [{"name": "1", "boards": [1, 30000]}]}}, 422, "at most 20,000"),
    ([1], 422, "send"),
])
def test_bad_sets_are_problems(client, body, status, detail):
    r = client.post("/api/sets", json=body)
    assert r.status_code == status
    assert r.headers["Content-Type"] == "application/problem+json"
    assert detail in r.json["detail"]


def test_submit_status_manifest(client):
    r = client.post("/api/sets", json={"set": SET, "seed": "w", "public_value": "7"})
    assert r.status_code == 202
    set_id = r.json["id"]
    assert r.headers["Location"] == f"/api/sets/{set_id}"
    st = client.get(f"/api/sets/{set_id}").json
    assert (st["state"], st["boards"], st["phase"]) == ("queued", 4, "queued")
    man = client.get(f"/api/sets/{set_id}/manifest").json
    assert man["public_value"] == "7" and len(man["sessions"][0]["commitment"]) == 64
    r = client.get(f"/api/sets/{set_id}/files/1.pbn")
    assert r.status_code == 409 and r.headers["Content-Type"] == "application/problem+json"
    assert client.get("/api/sets/nothing").status_code == 404
    assert client.get(f"/api/sets/{set_id}/files/1.exe").status_code == 404


def test_delete_cancels_a_set_idempotently(client):
    set_id = client.post("/api/sets", json={"set": SET, "seed": "c"}).json["id"]
    for _ in range(2):
        r = client.delete(f"/api/sets/{set_id}")
        assert r.status_code == 200 and (r.json["state"], r.json["phase"]) == ("cancelled", "cancelled")
    assert client.get(f"/api/sets/{set_id}").json["state"] == "cancelled"
    r = client.get(f"/api/sets/{set_id}/files/1.pbn")
    assert r.status_code == 409 and "not finished (cancelled)" in r.json["detail"]
    missing = client.delete("/api/sets/0123456789abcdef")
    assert missing.status_code == 404 and missing.headers["Content-Type"] == "application/problem+json"


def test_a_set_committed_to_a_value_to_come_waits_for_it(client):
    """Committed: the manifest announces the value, nothing is dealt, keys and files are refused; the value
    queues it once, and only a committed set takes one."""
    r = client.post("/api/sets", json={"set": SET, "public_value_to_come": "Friday's lottery"})
    assert r.status_code == 202 and r.json["state"] == "committed" and "public value" in r.json["phase"]
    set_id = r.json["id"]
    man = client.get(f"/api/sets/{set_id}/manifest").json
    assert man["public_value"] is None and man["public_value_to_come"] == "Friday's lottery"
    for path in ("keys", "files/1.pbn"):
        refused = client.get(f"/api/sets/{set_id}/{path}")
        assert refused.status_code == 409 and refused.headers["Content-Type"] == "application/problem+json"
    for body in ({}, {"public_value": ""}, {"public_value": 7}, {"public_value": "7", "seed": "s"}):
        assert client.post(f"/api/sets/{set_id}/public-value", json=body).status_code == 422
    r = client.post(f"/api/sets/{set_id}/public-value", json={"public_value": "4 8 15 16 23 42"})
    assert r.status_code == 202 and r.json["state"] == "queued"
    man = client.get(f"/api/sets/{set_id}/manifest").json
    assert (man["public_value"], man["public_value_to_come"]) == ("4 8 15 16 23 42", "Friday's lottery")
    again = client.post(f"/api/sets/{set_id}/public-value", json={"public_value": "1"})
    assert again.status_code == 409 and "not waiting for a public value (it is queued)" in again.json["detail"]
    assert client.post("/api/sets/0123456789abcdef/public-value", json={"public_value": "1"}).status_code == 404
    plain = client.post("/api/sets", json={"set": SET, "seed": "p"}).json["id"]
    assert client.post(f"/api/sets/{plain}/public-value", json={"public_value": "1"}).status_code == 409


@pytest.mark.parametrize("extra", [{"seed": "s"}, {"public_value": "v"}])
def test_a_value_to_come_excludes_a_seed_and_a_value(client, extra):
    r = client.post("/api/sets", json={"set": SET, "public_value_to_come": "later", **extra})
    assert r.status_code == 422 and "excludes a seed and a public value" in r.json["detail"]
