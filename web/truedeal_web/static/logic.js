// truedeal page logic with no DOM: form values <-> spec, progress wording,
// hand points. Loaded by the page before app.js (window.TruedealLogic) and
// by the tests under node (module.exports), so the same code is tested.
(function (root) {
  "use strict";

  var SEATS = ["north", "east", "south", "west"];
  var SUITS = ["spades", "hearts", "diamonds", "clubs"];
  var LIMITS = { hcp: 37, spades: 13, hearts: 13, diamonds: 13, clubs: 13 };
  var FIELDS = ["hcp"].concat(SUITS);
  var HCP = { A: 4, K: 3, Q: 2, J: 1 };
  var BALANCED = "any 4333 + any 4432 + any 5332";

  function readNumber(raw) {
    raw = raw === undefined || raw === null ? "" : String(raw).trim();
    if (raw === "") return null;
    var n = Number(raw);
    return Number.isFinite(n) ? n : raw; // the server names what is wrong
  }

  // {north: {hcp: ["15", "17"], spades: ["", ""], ..., shape: "..."}, ...} -> spec.
  // A range that allows every value ([0, 37] for points, [0, 13] for a suit)
  // constrains nothing and is left out: sending it would only slow the count.
  function specFromFields(fields) {
    var spec = {};
    SEATS.forEach(function (seat) {
      var f = fields[seat] || {};
      var out = {};
      FIELDS.forEach(function (field) {
        var pair = f[field] || ["", ""];
        var lo = readNumber(pair[0]);
        var hi = readNumber(pair[1]);
        if (lo === null && hi === null) return;
        lo = lo === null ? 0 : lo;
        hi = hi === null ? LIMITS[field] : hi;
        if (lo === 0 && hi === LIMITS[field]) return;
        out[field] = [lo, hi];
      });
      var shape = (f.shape || "").trim();
      if (shape) out.shape = shape;
      if (Object.keys(out).length) spec[seat] = out;
    });
    return spec;
  }

  var ALIASES = { n: "north", e: "east", s: "south", w: "west" };

  function isObject(v) {
    return v !== null && typeof v === "object" && !Array.isArray(v);
  }

  function isNumber(v) {
    return typeof v === "number" && Number.isFinite(v);
  }

  // What the form's boxes can hold: a number, or [min, max] of numbers
  // (hcp and suit lengths), or a shape string.
  function showable(field, v) {
    if (field === "shape") return typeof v === "string";
    if (FIELDS.indexOf(field) < 0) return false;
    return isNumber(v) || (Array.isArray(v) && v.length === 2 && isNumber(v[0]) && isNumber(v[1]));
  }

  function emptyFields() {
    var fields = {};
    SEATS.forEach(function (seat) { fields[seat] = { shape: "" }; FIELDS.forEach(function (f) { fields[seat][f] = ["", ""]; }); });
    return fields;
  }

  // A spec (as the API answers it, or as a user pastes it) -> {fields, rest,
  // hidden}: `fields` the form values of what the form can show, `rest` a
  // spec of everything else (controls, a suit's object, condition, script,
  // any_of ... and whatever the API will refuse, which it names), `hidden`
  // the names of what is in `rest` ("north.controls", "condition").
  // Throws an Error with a one-line message only when `spec` is no JSON object.
  function splitSpec(spec) {
    if (!isObject(spec)) throw new Error("a spec is a JSON object");
    var fields = emptyFields(), rest = {}, hidden = [];
    Object.keys(spec).forEach(function (key) {
      var seat = ALIASES[key.toLowerCase()] || key.toLowerCase();
      var s = spec[key];
      if (SEATS.indexOf(seat) < 0 || !isObject(s)) {
        if (s === null && SEATS.indexOf(seat) >= 0) return; // an empty seat
        rest[key] = s;
        hidden.push(key);
        return;
      }
      Object.keys(s).forEach(function (field) {
        var v = s[field];
        if (v === null) return;
        if (!showable(field, v)) {
          (rest[seat] = rest[seat] || {})[field] = v;
          hidden.push(seat + "." + field);
        } else if (field === "shape") {
          fields[seat].shape = v;
        } else {
          fields[seat][field] = isNumber(v) ? [String(v), String(v)] : [String(v[0]), String(v[1])];
        }
      });
    });
    return { fields: fields, rest: rest, hidden: hidden };
  }

  // The form values of what the form can show of `spec` (see splitSpec).
  function fieldsFromSpec(spec) {
    return splitSpec(spec).fields;
  }

  // The form's spec with the `rest` of a pasted spec (splitSpec) put back:
  // a seat's fields are the form's, beside the rest's fields of that seat; a
  // field in both (the form's spades beside a spades object) is the form's,
  // since the user typed it last.
  function mergeSpec(formSpec, rest) {
    var spec = {};
    Object.keys(rest).forEach(function (key) {
      spec[key] = isObject(rest[key]) ? Object.assign({}, rest[key], formSpec[key] || {}) : rest[key];
    });
    Object.keys(formSpec).forEach(function (key) {
      if (!(key in spec)) spec[key] = formSpec[key];
    });
    return spec;
  }

  function group(n) {
    return Number(n).toLocaleString("en-US");
  }

  // The progress line, naming the phase the job is in.
  function progressText(s) {
    var p = s.progress, e = p.enumeration, d = p.drawing;
    switch (s.state) {
      case "queued":
        return "Queued: waiting for a worker" + (s.note ? " (" + s.note + ")" : "");
      case "enumerating":
        return "Listing the cases: " + group(e.done) + " of " + group(e.total) + " parts";
      case "drawing":
        return "Dealing: " + group(p.done) + " of " + group(p.total) + " deals";
      case "done":
        return "Done: " + group(p.total) + " of " + group(p.total) + " deals";
      case "cancelled":
        return "Cancelled after " + group(p.done) + " of " + group(p.total) + " deals";
      default:
        return "Failed" + (s.error ? ": " + s.error : "");
    }
  }

  // High-card points of one hand written "AKQ.T98.J2.-" (PBN, suits by dots).
  function handHcp(holding) {
    var total = 0;
    for (var i = 0; i < holding.length; i++) total += HCP[holding.charAt(i).toUpperCase()] || 0;
    return total;
  }

  // What the probability box says for a count result from the API.
  function oddsLine(c) {
    if (!c.possible) return "No deal fits";
    return c.odds;
  }

  // The set panel's limits: a dealing machine's file holds 99 boards.
  var SET_LIMITS = { sessions: 20, boards: 99 };

  function wholeIn(raw, lo, hi, what) {
    var n = Number(String(raw).trim());
    if (!Number.isInteger(n) || n < lo || n > hi) throw new Error(what + ": a whole number from " + lo + " to " + hi + ".");
    return n;
  }

  // The set panel's values -> a set file (docs/tournaments.md) dealing `spec`.
  // Sessions are named 1, 2, ... and each holds boards 1..boards, as at a
  // club's multi-session event. Throws an Error whose message names the field.
  function setFromForm(f, spec) {
    var n = wholeIn(f.sessions, 1, SET_LIMITS.sessions, "Sessions");
    var boards = wholeIn(f.boards, 1, SET_LIMITS.boards, "Boards per session");
    var sessions = [];
    for (var i = 1; i <= n; i++) sessions.push({ name: String(i), boards: [1, boards] });
    var set = {
      event: (f.event || "").trim() || "?", site: (f.site || "").trim() || "?", date: f.date || "?",
      sessions: sessions, spec: spec, dealer: f.dealer || "rotate",
      vulnerability: f.vulnerability || "rotate", double_dummy: !!f.doubleDummy
    };
    if (f.rotateToDealer) set.rotate_to_dealer = true;
    return set;
  }

  // What the set panel says of a set's status from the API.
  function setPhaseText(s) {
    if (s.state === "failed") return "Failed" + (s.error ? ": " + s.error : "");
    if (s.state === "done") return "Done: " + group(s.boards) + " boards";
    if (s.state === "cancelled") return "Cancelled";
    var phase = s.phase || s.state; // the answer to POST /api/sets has no phase yet
    return phase.charAt(0).toUpperCase() + phase.slice(1);
  }

  var api = {
    SEATS: SEATS, SUITS: SUITS, LIMITS: LIMITS, BALANCED: BALANCED,
    specFromFields: specFromFields, fieldsFromSpec: fieldsFromSpec, splitSpec: splitSpec, mergeSpec: mergeSpec,
    progressText: progressText, handHcp: handHcp, oddsLine: oddsLine,
    SET_LIMITS: SET_LIMITS, setFromForm: setFromForm, setPhaseText: setPhaseText
  };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else root.TruedealLogic = api;
})(this);
