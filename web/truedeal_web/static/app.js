// truedeal page: build a spec seat by seat, show its exact probability live,
// submit a job, follow its progress and show the first deals.
// Plain JavaScript, no build step.
(function () {
  "use strict";

  var L = window.TruedealLogic; // static/logic.js: the DOM-free part, tested under node
  var SEATS = L.SEATS;
  var SUITS = L.SUITS;
  var SYMBOLS = { spades: "\u2660", hearts: "\u2665", diamonds: "\u2666", clubs: "\u2663" };
  var DEBOUNCE_MS = 250;
  var POLL_MS = 400;

  var form = document.getElementById("spec-form");
  var keysRequired = form.dataset.keysRequired === "true";
  var previewDeals = parseInt(form.dataset.previewDeals, 10) || 8;
  var $ = function (id) { return document.getElementById(id); };

  // ------------------------------------------------------------------ helpers

  function apiKey() {
    var el = $("api-key");
    return el ? el.value.trim() : "";
  }

  function headers(extra) {
    var h = extra || {};
    if (keysRequired && apiKey()) h["Authorization"] = "Bearer " + apiKey();
    return h;
  }

  // fetch + JSON; rejects with {status, problem} for non-2xx answers
  function api(method, url, body, signal) {
    var init = { method: method, headers: headers(body === undefined ? {} : { "Content-Type": "application/json" }), signal: signal };
    if (body !== undefined) init.body = JSON.stringify(body);
    return fetch(url, init).then(function (resp) {
      var ct = resp.headers.get("Content-Type") || "";
      var parse = ct.indexOf("json") >= 0 ? resp.json() : resp.text().then(function (t) { return { detail: t }; });
      return parse.then(function (data) {
        if (!resp.ok) throw { status: resp.status, problem: data || {} };
        return { status: resp.status, data: data, headers: resp.headers };
      });
    });
  }

  function problemText(err) {
    if (err && err.problem) return err.problem.detail || err.problem.title || ("HTTP " + err.status);
    return (err && err.message) || String(err);
  }

  function groupDigits(s) {
    return s.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  }

  // ------------------------------------------------------------------ the spec

  function input(seat, field, bound) {
    var fs = $("seat-" + seat);
    return bound ? fs.querySelector('[data-field="' + field + '"][data-bound="' + bound + '"]')
                 : fs.querySelector('[data-field="' + field + '"]');
  }

  function readFields() {
    var fields = {};
    SEATS.forEach(function (seat) {
      fields[seat] = { shape: input(seat, "shape").value };
      ["hcp"].concat(SUITS).forEach(function (field) {
        fields[seat][field] = [input(seat, field, "min").value, input(seat, field, "max").value];
      });
    });
    return fields;
  }

  function writeFields(fields) {
    SEATS.forEach(function (seat) {
      input(seat, "shape").value = fields[seat].shape;
      ["hcp"].concat(SUITS).forEach(function (field) {
        input(seat, field, "min").value = fields[seat][field][0];
        input(seat, field, "max").value = fields[seat][field][1];
      });
    });
  }

  // A pasted spec the form shows only part of: {spec, rest, formKey}. The
  // JSON is then the source of truth: counted and dealt as given while the
  // form is untouched (formKey: the form's own spec right after pasting),
  // and with the form's edits put beside its rest once the form is edited.
  var pasted = null;

  function buildSpec() {
    var formSpec = L.specFromFields(readFields());
    if (!pasted) return formSpec;
    if (JSON.stringify(formSpec) === pasted.formKey) return pasted.spec;
    return L.mergeSpec(formSpec, pasted.rest);
  }

  // Show `spec` in the form, keeping what the form cannot show (see pasted);
  // throws only for what is no JSON object. One calm line names what the
  // form leaves out: the server, not the page, says whether it is valid.
  function applySpec(spec) {
    var parts = L.splitSpec(spec);
    writeFields(parts.fields);
    pasted = parts.hidden.length ? { spec: spec, rest: parts.rest, formKey: JSON.stringify(L.specFromFields(readFields())) } : null;
    var note = $("spec-partial");
    note.hidden = !pasted;
    note.textContent = pasted ? "The form shows only part of this spec (it has no box for " + hiddenList(parts.hidden) +
                                "): the JSON spec is what is counted and dealt." : "";
  }

  var HIDDEN_SHOWN = 4;

  function hiddenList(names) {
    if (names.length <= HIDDEN_SHOWN) return names.join(", ");
    return names.slice(0, HIDDEN_SHOWN).join(", ") + " and " + (names.length - HIDDEN_SHOWN) + " more";
  }

  // ------------------------------------------------------------------ live count

  var countTimer = null;
  var countSeq = 0;
  var countAbort = null;
  var scheduledKey = null; // the spec whose count is pending or shown
  var specOk = false;

  function setOdds(state, text, detail, error) {
    var p = $("probability");
    p.dataset.state = state;
    $("one-in").textContent = text;
    $("count-detail").textContent = detail || "";
    $("spec-error").textContent = error || "";
    specOk = state === "ok";
    updateSubmit();
  }

  function scheduleCount() {
    var spec = buildSpec();
    if (document.activeElement !== $("spec-json")) $("spec-json").value = JSON.stringify(spec, null, 1);
    var key = JSON.stringify(spec);
    if (key === scheduledKey) return;
    scheduledKey = key;
    clearTimeout(countTimer);
    countSeq++; // answers to earlier specs are stale from now on
    if (countAbort) { countAbort.abort(); countAbort = null; }
    $("probability").dataset.state = "pending";
    specOk = false;
    updateSubmit();
    countTimer = setTimeout(function () { runCount(spec, key); }, DEBOUNCE_MS);
  }

  function runCount(spec, key) {
    var seq = countSeq;
    countAbort = window.AbortController ? new AbortController() : null;
    $("probability").dataset.state = "counting";
    api("POST", "/api/count", spec, countAbort ? countAbort.signal : undefined).then(function (r) {
      if (seq !== countSeq) return;
      var c = r.data;
      var p = $("probability");
      p.dataset.oneIn = c.one_in === null ? "" : String(c.one_in);
      p.dataset.deals = c.deals_text || "";
      p.dataset.spec = key;
      if (!c.possible) {
        setOdds("impossible", "No deal fits", "These constraints cannot all hold: change them before dealing.");
        return;
      }
      var detail;
      if (c.exact) {
        detail = groupDigits(c.deals_text) + " deals fit exactly" + (c.cases == null ? "" : " (" + c.cases.toLocaleString("en-US") + (c.cases === 1 ? " case)" : " cases)"));
        // counted exactly by complements, drawn by rejection: say how many listed deals are kept
        if (c.rejection) detail += "; drawn by rejection, " + percent(c.rejection.acceptance_rate) + " of listed deals kept (exact)";
      } else if (c.deals_expected) {
        detail = c.deals_estimate.toPrecision(4) + " deals expected, exactly (rnd() weighed: each deal drawn with the chance the script keeps it)";
      } else {
        detail = "about " + c.deals_estimate.toPrecision(4) + " deals fit (estimate: " + c.method + ")";
      }
      setOdds("ok", L.oddsLine(c), detail);
    }).catch(function (err) {
      if (seq !== countSeq || (err && err.name === "AbortError")) return;
      if (!(err && err.status === 422)) scheduledKey = null; // let the next edit retry
      $("probability").dataset.spec = key;
      $("probability").dataset.oneIn = "";
      var type = (err && err.problem && err.problem.type) || "";
      if (err && (err.status === 429 || err.status === 503)) {
        // our previous (slow) count still runs, or the server is busy: ask again shortly
        $("probability").dataset.state = "pending";
        setTimeout(function () { if (seq === countSeq) runCount(spec, key); }, 2000);
        return;
      }
      if (/count-timeout$/.test(type)) {
        // too slow for a web request, but the workers have no such limit: dealing stays possible
        setOdds("slow", "Too slow to count here",
                "The workers can still deal it: press Deal, the count comes with the job.");
        specOk = true;
        updateSubmit();
        return;
      }
      setOdds(err && err.status === 422 ? "invalid" : "error", "–", "", problemText(err));
    });
  }

  // ------------------------------------------------------------------ jobs

  var job = null; // {id, url, timer}
  var submitting = false;

  function updateSubmit() {
    var active = job && !job.final;
    $("submit").disabled = !specOk || submitting || !!active || $("submit").title === "the job system is not installed";
  }

  function submit(ev) {
    ev.preventDefault();
    if (!specOk || submitting) return;
    var count = Number($("deal-count").value);
    if (!Number.isInteger(count) || count < 1) {
      showJobPanel();
      $("job-error").textContent = "Ask for at least 1 deal (a whole number).";
      return;
    }
    postJob(buildSpec(), count);
  }

  // POST /api/jobs with the form's seed; then follow the job (or show why not)
  function postJob(constraints, count) {
    var body = { constraints: constraints, count: count };
    if ($("seed").value.trim()) body.seed = $("seed").value;
    if ($("stream").value !== "v1") body.stream = $("stream").value;
    submitting = true;
    updateSubmit();
    api("POST", "/api/jobs", body).then(function (r) {
      submitting = false;
      startJob(r.data);
    }).catch(function (err) {
      submitting = false;
      showJobPanel();
      $("job-error").textContent = problemText(err);
      updateSubmit();
    });
  }

  function showJobPanel() {
    $("job").hidden = false;
  }

  function startJob(status) {
    if (job && job.timer) clearTimeout(job.timer);
    job = { id: status.id, url: status.links.self, final: false, timer: null };
    $("job-id").textContent = status.id;
    $("job-error").textContent = "";
    $("downloads").hidden = true;
    $("diagrams").innerHTML = "";
    $("job-progress").value = 0;
    showJobPanel();
    if (window.history && history.replaceState) history.replaceState(null, "", "?job=" + status.id);
    showStatus(status);
  }

  function poll() {
    if (!job || job.final) return;
    var current = job;
    api("GET", current.url).then(function (r) {
      if (job === current) showStatus(r.data);
    }).catch(function (err) {
      if (job !== current) return;
      $("job-error").textContent = problemText(err);
      if (err && err.status === 404) { current.final = true; updateSubmit(); return; }
      current.timer = setTimeout(poll, POLL_MS * 5);
    });
  }

  function showStatus(s) {
    var prog = s.progress;
    $("job-progress").value = prog.fraction;
    $("job-progress").dataset.fraction = String(prog.fraction);
    $("job-progress-text").textContent = L.progressText(s);
    $("job-state").textContent = s.state;
    $("job-state").dataset.state = s.state;
    $("job-error").textContent = s.error || "";
    var final = s.state === "done" || s.state === "failed" || s.state === "cancelled";
    $("cancel").hidden = final;
    job.final = final;
    updateSubmit();
    if (!final) {
      job.timer = setTimeout(poll, POLL_MS);
      return;
    }
    if (s.state === "done") showDeals(s);
  }

  function cancel() {
    if (!job || job.final) return;
    api("DELETE", job.url).then(function (r) { showStatus(r.data); })
      .catch(function (err) { $("job-error").textContent = problemText(err); });
  }

  // ------------------------------------------------------------------ results

  function setDownload(id, url, name) {
    saveLink($(id), url, name, $("job-error"));
  }

  // a download link; with API keys, a plain link cannot send the key, so
  // the click fetches the file with it and saves the blob
  function saveLink(a, url, name, errorEl) {
    a.href = url;
    a.setAttribute("download", name);
    a.onclick = null;
    if (!keysRequired) return;
    a.onclick = function (ev) {
      ev.preventDefault();
      fetch(url, { headers: headers() }).then(function (resp) {
        if (!resp.ok) throw new Error("HTTP " + resp.status);
        return resp.blob();
      }).then(function (blob) {
        var tmp = document.createElement("a");
        tmp.href = URL.createObjectURL(blob);
        tmp.download = name;
        document.body.appendChild(tmp);
        tmp.click();
        setTimeout(function () { URL.revokeObjectURL(tmp.href); tmp.remove(); }, 1000);
      }).catch(function (err) { errorEl.textContent = problemText(err); });
    };
  }

  function showDeals(s) {
    var base = s.links.deals;
    var short = s.id.slice(0, 8);
    setDownload("download-pbn", base + "?format=pbn&download=1", "truedeal-" + short + ".pbn");
    setDownload("download-numbers", base + "?format=numbers&download=1", "truedeal-" + short + ".numbers.txt");
    setDownload("download-lin", base + "?format=lin&download=1", "truedeal-" + short + ".lin");
    $("downloads").hidden = false;
    fetch(base + "?format=json&limit=" + previewDeals, { headers: headers() }).then(function (resp) {
      if (!resp.ok) return resp.json().then(function (p) { throw { status: resp.status, problem: p }; });
      return resp.text();
    }).then(function (text) {
      var box = $("diagrams");
      box.innerHTML = "";
      text.split("\n").forEach(function (line) {
        if (line.trim()) box.appendChild(diagram(JSON.parse(line)));
      });
    }).catch(function (err) { $("job-error").textContent = problemText(err); });
  }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // "N:AKQ.T98.. E.. S.. W.." (North first) -> hand element
  function handEl(seat, holding) {
    var box = el("div", "hand hand-" + seat);
    var name = el("div", "seat-name", seat.charAt(0).toUpperCase() + seat.slice(1) + " ");
    name.appendChild(el("span", "hcp", L.handHcp(holding) + " HCP"));
    box.appendChild(name);
    holding.split(".").forEach(function (cards, i) {
      var line = el("div", "holding");
      line.appendChild(el("span", "suit suit-" + SUITS[i], SYMBOLS[SUITS[i]]));
      line.appendChild(document.createTextNode(" " + (cards ? cards.split("").map(function (c) { return c === "T" ? "10" : c; }).join(" ") : "\u2014")));
      box.appendChild(line);
    });
    return box;
  }

  function diagram(d) {
    var hands = d.deal.slice(2).split(" ");
    var box = el("div", "diagram");
    box.dataset.board = String(d.board);
    if (d.number) box.dataset.number = d.number;
    var center = el("div", "table-center");
    center.appendChild(el("div", "board", "Board " + d.board));
    center.appendChild(el("div", "dealer", "Dealer " + d.dealer));
    center.appendChild(el("div", "vul", "Vul " + d.vulnerable));
    if (d.number) center.appendChild(el("div", "number", "Deal " + d.number));
    box.appendChild(handEl("north", hands[0]));
    box.appendChild(handEl("west", hands[3]));
    box.appendChild(center);
    box.appendChild(handEl("east", hands[1]));
    box.appendChild(handEl("south", hands[2]));
    return box;
  }

  // ------------------------------------------------------------------ dealer script

  var scriptTimer = null;
  var scriptSeq = 0;
  var scriptOk = false;

  function scriptSpec() {
    return { script: $("script").value };
  }

  function setScriptOdds(state, text, detail, error) {
    $("script-one-in").dataset.state = state;
    $("script-one-in").textContent = text;
    $("script-detail").textContent = detail || "";
    $("script-error").textContent = error || "";
    scriptOk = state === "ok" || state === "slow";
    $("script-deal").disabled = !scriptOk || submitting || $("submit").title === "the job system is not installed";
  }

  function scheduleScriptCount() {
    clearTimeout(scriptTimer);
    var seq = ++scriptSeq;
    if (!$("script").value.trim()) { setScriptOdds("idle", "\u2013"); return; }
    $("script-one-in").dataset.state = "pending";
    scriptTimer = setTimeout(function () { runScriptCount(seq); }, DEBOUNCE_MS);
  }

  function runScriptCount(seq) {
    api("POST", "/api/count", scriptSpec()).then(function (r) {
      if (seq !== scriptSeq) return;
      var c = r.data;
      if (!c.possible) { setScriptOdds("impossible", "No deal fits", "The script's condition cannot hold."); return; }
      var how = c.exact ? groupDigits(c.deals_text) + " deals fit exactly"
                        : "estimate: " + c.method;
      setScriptOdds("ok", L.oddsLine(c), how);
    }).catch(function (err) {
      if (seq !== scriptSeq) return;
      var type = (err && err.problem && err.problem.type) || "";
      if (err && (err.status === 429 || err.status === 503)) {
        setTimeout(function () { if (seq === scriptSeq) runScriptCount(seq); }, 2000);
        return;
      }
      if (/count-timeout$/.test(type)) {
        setScriptOdds("slow", "Too slow to count here", "The workers can still deal it.");
        return;
      }
      setScriptOdds(err && err.status === 422 ? "invalid" : "error", "\u2013", "", problemText(err));
    });
  }

  function submitScript() {
    var count = Number($("deal-count").value);
    if (!scriptOk || submitting || !Number.isInteger(count) || count < 1) return;
    postJob(scriptSpec(), count);
  }

  // ------------------------------------------------------------------ distribution

  var distSeq = 0;

  function showDistribution() {
    var seq = ++distSeq;
    $("dist-error").textContent = "";
    $("dist-result").textContent = "Counting\u2026";
    var body = { constraints: buildSpec(), of: $("dist-expr").value.trim() };
    api("POST", "/api/distribution", body).then(function (r) {
      if (seq === distSeq) renderDistribution(r.data);
    }).catch(function (err) {
      if (seq !== distSeq) return;
      $("dist-result").textContent = "";
      $("dist-error").textContent = problemText(err);
    });
  }

  function share(row) {
    return row.probability !== undefined ? row.probability : row.probability_estimate;
  }

  function percent(p) {
    return (p >= 0.0001 ? (100 * p).toFixed(2) : (100 * p).toPrecision(2)) + "%";
  }

  function renderDistribution(d) {
    var box = $("dist-result");
    box.textContent = "";
    box.dataset.exact = String(d.exact);
    box.appendChild(el("p", "detail", d.exact ? "Exact, over " + groupDigits(d.deals_text) + " deals"
                                              : "Estimate, not exact: " + d.method));
    var top = Math.max.apply(null, d.distribution.map(share));
    var table = el("table", "dist-table");
    d.distribution.forEach(function (row) {
      var tr = el("tr");
      tr.appendChild(el("th", "", String(row.value)));
      var bar = el("div", "bar");
      bar.style.width = (top > 0 ? 100 * share(row) / top : 0).toFixed(1) + "%";
      var cell = el("td", "bar-cell");
      cell.appendChild(bar);
      tr.appendChild(cell);
      tr.appendChild(el("td", "pct", percent(share(row)) + (d.exact ? "" : " \u00b1 " + percent(row.stderr))));
      table.appendChild(tr);
    });
    box.appendChild(table);
    var mean = d.exact ? d.mean : d.mean_estimate;
    if (typeof mean === "number") {
      var exactMean = d.exact && d.mean_exact.length <= 40 ? " (exactly " + d.mean_exact + ")" : "";
      box.appendChild(el("p", "detail mean", "Mean " + mean.toFixed(3) + exactMean +
                         (d.exact ? "" : " \u00b1 " + d.mean_stderr.toFixed(3))));
    }
  }

  // ------------------------------------------------------------------ wiring

  form.addEventListener("input", function (ev) {
    if (ev.target && (ev.target.id === "deal-count" || ev.target.id === "seed" || ev.target.id === "api-key" ||
                      ev.target.id === "spec-json" || ev.target.id === "spec-file" || ev.target.id === "dist-expr" ||
                      ev.target.id === "script" || ev.target.id === "script-preset")) {
      if (ev.target.id === "api-key") { scheduledKey = null; scheduleCount(); }
      return;
    }
    scheduleCount();
  });
  form.addEventListener("submit", submit);
  $("cancel").addEventListener("click", cancel);

  if (keysRequired && window.sessionStorage) {
    var k = $("api-key");
    k.value = sessionStorage.getItem("truedeal-api-key") || "";
    k.addEventListener("change", function () { sessionStorage.setItem("truedeal-api-key", k.value); });
  }

  // the spec panel: paste or load a spec, then use it
  function useSpec(text) {
    try {
      applySpec(JSON.parse(text));
    } catch (e) {
      $("spec-json-error").textContent = "Not a spec: " + e.message;
      return;
    }
    $("spec-json-error").textContent = "";
    scheduleCount();
  }
  $("spec-apply").addEventListener("click", function () { useSpec($("spec-json").value); });
  $("spec-file").addEventListener("change", function () {
    var f = $("spec-file").files[0];
    if (f) f.text().then(useSpec);
  });
  Array.prototype.forEach.call(document.querySelectorAll("button.balanced"), function (b) {
    b.addEventListener("click", function () {
      input(b.dataset.seat, "shape").value = L.BALANCED;
      scheduleCount();
    });
  });
  $("print").addEventListener("click", function () { window.print(); });
  $("dist-run").addEventListener("click", showDistribution);
  $("script").addEventListener("input", scheduleScriptCount);
  $("script-preset").addEventListener("change", function () {
    var opt = $("script-preset").selectedOptions[0];
    if (opt && opt.dataset.script) { $("script").value = opt.dataset.script; scheduleScriptCount(); }
    $("script-preset").value = ""; // the same preset can be chosen again after an edit
  });
  $("script-deal").addEventListener("click", submitScript);
  $("dist-expr").addEventListener("keydown", function (ev) {
    if (ev.key === "Enter") { ev.preventDefault(); showDistribution(); } // not the form's Deal
  });

  // ?job=ID: show the job under the spec, count and seed it was made from
  function restoreForm(status) {
    try { applySpec(status.constraints); } catch (e) { /* the job stands on its own */ }
    $("deal-count").value = status.count;
    $("seed").value = status.seed_generated ? "" : status.seed;
    $("stream").value = status.stream || "v1";
    scheduleCount();
  }

  // what static/sets.js (the tournament-set panel) builds on
  window.TruedealPage = {
    api: api, headers: headers, problemText: problemText, saveLink: saveLink,
    buildSpec: buildSpec, scriptSpec: scriptSpec,
    specOk: function () { return specOk; }, scriptOk: function () { return scriptOk; }
  };

  scheduleCount();
  var resume = new URLSearchParams(window.location.search).get("job");
  if (resume && /^[0-9a-f]{32}$/.test(resume)) {
    api("GET", "/api/jobs/" + resume).then(function (r) { restoreForm(r.data); startJob(r.data); })
      .catch(function (err) { showJobPanel(); $("job-error").textContent = problemText(err); });
  }
})();
