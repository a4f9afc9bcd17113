// truedeal page: the tournament-set panel. Builds a set file from the panel
// and the spec (or script) above, posts it to /api/sets, follows the
// workers' phases, then links every session file and previews the hand
// record. Loaded after app.js, whose helpers it uses (window.TruedealPage).
(function () {
  "use strict";

  var L = window.TruedealLogic;
  var P = window.TruedealPage;
  var POLL_MS = 500;
  var EXTENSIONS = ["pbn", "lin", "dup", "dlm", "bri", "csv", "html", "pdf"];
  var $ = function (id) { return document.getElementById(id); };

  var current = null; // {id, url, timer, final}

  // the spec the set deals, or an Error naming why it cannot
  function chosenSpec() {
    var source = $("set-source").value;
    if (source === "any") return {};
    if (source === "script") {
      if (!P.scriptOk()) throw new Error("The dealer script above is empty or has an error.");
      return P.scriptSpec();
    }
    if (!P.specOk()) throw new Error("The spec above is not valid or no deal fits it.");
    return P.buildSpec();
  }

  function panelValues() {
    return {
      event: $("set-event").value, site: $("set-site").value, date: $("set-date").value,
      sessions: $("set-sessions").value, boards: $("set-boards").value,
      dealer: $("set-dealer").value, vulnerability: $("set-vulnerability").value,
      rotateToDealer: $("set-rotate").checked, doubleDummy: $("set-dd").checked
    };
  }

  function submit(ev) {
    ev.preventDefault();
    var body;
    try {
      body = { set: L.setFromForm(panelValues(), chosenSpec()) };
    } catch (e) {
      $("set-form-error").textContent = e.message;
      return;
    }
    if ($("set-seed").value.trim()) body.seed = $("set-seed").value;
    $("set-form-error").textContent = "";
    $("set-make").disabled = true;
    P.api("POST", "/api/sets", body).then(function (r) {
      follow(r.data);
    }).catch(function (err) {
      $("set-make").disabled = false;
      $("set-form-error").textContent = P.problemText(err);
    });
  }

  function follow(status) {
    if (current && current.timer) clearTimeout(current.timer);
    current = { id: status.id, url: status.links.self, timer: null, final: false };
    $("set-id").textContent = status.id;
    $("set-error").textContent = "";
    $("set-files").hidden = true;
    $("set-preview-row").hidden = true;
    $("set-preview").hidden = true;
    $("set-job").hidden = false;
    if (window.history && history.replaceState) history.replaceState(null, "", "?set=" + status.id);
    show(status);
  }

  function poll() {
    var me = current;
    P.api("GET", me.url).then(function (r) { if (me === current) show(r.data); }).catch(function (err) {
      if (me !== current) return;
      $("set-error").textContent = P.problemText(err);
      if (err && err.status === 404) { me.final = true; $("set-make").disabled = false; return; }
      me.timer = setTimeout(poll, POLL_MS * 5);
    });
  }

  function show(s) {
    var fraction = s.state === "done" ? 1 : (s.boards ? s.solved / s.boards : 0);
    $("set-progress").value = fraction;
    $("set-phase").textContent = L.setPhaseText(s);
    $("set-phase").dataset.state = s.state;
    if (s.error) $("set-error").textContent = s.error;
    current.final = s.state === "done" || s.state === "failed" || s.state === "cancelled";
    $("set-cancel").hidden = current.final;
    $("set-make").disabled = !current.final;
    if (!current.final) current.timer = setTimeout(poll, POLL_MS);
    else if (s.state === "done") showFiles(s);
  }

  function cancel() {
    if (!current || current.final) return;
    P.api("DELETE", current.url).then(function (r) { show(r.data); })
      .catch(function (err) { $("set-error").textContent = P.problemText(err); });
  }

  // one row per session: its name and a link per file
  function showFiles(s) {
    var table = document.createElement("table");
    s.sessions.forEach(function (name) {
      var row = table.insertRow();
      row.insertCell().textContent = "Session " + name;
      EXTENSIONS.forEach(function (ext) {
        var a = document.createElement("a");
        a.textContent = ext.toUpperCase();
        a.className = "set-file set-file-" + ext;
        P.saveLink(a, s.files[name][ext], "truedeal-" + s.id.slice(0, 8) + "-" + name + "." + ext, $("set-error"));
        row.insertCell().appendChild(a);
      });
    });
    var box = $("set-files");
    box.innerHTML = "";
    box.appendChild(table);
    box.hidden = false;
    var pick = $("set-preview-session");
    pick.innerHTML = "";
    s.sessions.forEach(function (name) { pick.add(new Option(name, s.files[name].html)); });
    $("set-preview-row").hidden = false;
    preview(pick.value);
  }

  // the session's printable hand record (HTML), fetched with the API key
  // and shown in a sandboxed frame
  function preview(url) {
    fetch(url, { headers: P.headers() }).then(function (resp) {
      if (!resp.ok) throw new Error("HTTP " + resp.status);
      return resp.text();
    }).then(function (html) {
      var frame = $("set-preview");
      frame.srcdoc = html;
      frame.hidden = false;
    }).catch(function (err) { $("set-error").textContent = P.problemText(err); });
  }

  $("set-form").addEventListener("submit", submit);
  $("set-cancel").addEventListener("click", cancel);
  $("set-preview-session").addEventListener("change", function () { preview($("set-preview-session").value); });
  if (!$("set-date").value) $("set-date").value = new Date().toISOString().slice(0, 10);

  // ?set=ID: show a set made earlier (everything it made is reachable by its id)
  var resume = new URLSearchParams(window.location.search).get("set");
  if (resume && /^[0-9a-f]{16}$/.test(resume)) {
    $("set-panel").open = true;
    P.api("GET", "/api/sets/" + resume).then(function (r) { follow(r.data); })
      .catch(function (err) { $("set-job").hidden = false; $("set-error").textContent = P.problemText(err); });
  }
})();
