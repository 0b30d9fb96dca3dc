// Live updates without a reload: poll the ledger's change stamp (its newest occurrence and
// schedule event IDs); when it changes, fetch this
// page again and swap in its live region (#live). A region holding a focused or edited form field
// is left alone until the person is done with it.
(function () {
  "use strict";
  var region = document.getElementById("live");
  if (!region) { return; }
  var seen = null;
  var busy = false;
  function editing() {
    var active = document.activeElement;
    if (active && region.contains(active) && active.form) { return true; }
    var fields = region.querySelectorAll("input[type=text], textarea");
    for (var i = 0; i < fields.length; i++) { if (fields[i].value) { return true; } }
    var radios = region.querySelectorAll("input[type=radio]:checked");
    return radios.length > 0;
  }
  function refresh() {
    return fetch(window.location.href, { headers: { "X-Almanac-Live": "1" }, credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (html === null) { return; }
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.getElementById("live");
        if (fresh) { region.innerHTML = fresh.innerHTML; region.setAttribute("data-refreshed", String(seen)); }
      });
  }
  function tick() {
    if (busy || document.hidden) { return; }
    busy = true;
    fetch("/live/stamp", { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (stamp) {
        if (stamp === null) { return; }
        var changed = seen !== null && stamp.event !== seen;
        seen = stamp.event;
        if (changed && !editing()) { return refresh(); }
      })
      .catch(function () { /* the console is restarting: try again on the next tick */ })
      .then(function () { busy = false; });
  }
  var every = Number(document.body.getAttribute("data-live-ms")) || 3000;
  tick();
  window.setInterval(tick, every);
}());
