// Enhancement only: every page works without this script.
(function () {
  "use strict";
  // Submit the organization switcher and list filters as soon as a choice
  // is made; their submit buttons stay for keyboard and no-script use.
  document.querySelectorAll("select[data-autosubmit]").forEach(function (sel) {
    sel.addEventListener("change", function () { if (sel.form) { sel.form.requestSubmit ? sel.form.requestSubmit() : sel.form.submit(); } });
  });
  // Ask before destructive actions.
  document.querySelectorAll("form[data-confirm]").forEach(function (f) {
    f.addEventListener("submit", function (e) { if (!window.confirm(f.getAttribute("data-confirm"))) { e.preventDefault(); } });
  });
  // Say at once when a chosen file is over the upload limit, next to the
  // field (the server refuses it anyway and says so on the page).
  document.querySelectorAll("input[type=file][data-max-bytes]").forEach(function (inp) {
    var max = parseInt(inp.getAttribute("data-max-bytes"), 10);
    function check() {
      var f = inp.files && inp.files[0];
      var msg = f && max > 0 && f.size > max ? "The file is larger than the upload limit of " + inp.getAttribute("data-max-label") + ". Choose a smaller file." : "";
      var id = inp.id + "-error", p = document.getElementById(id);
      if (msg) {
        if (!p) { p = document.createElement("p"); p.className = "field-error"; p.id = id; inp.insertAdjacentElement("afterend", p); }
        p.textContent = msg;
        inp.setAttribute("aria-invalid", "true");
        inp.setAttribute("aria-describedby", id);
      } else if (p && f) {
        p.remove();
        inp.removeAttribute("aria-invalid");
        inp.removeAttribute("aria-describedby");
      }
      return !msg;
    }
    inp.addEventListener("change", check);
    if (inp.form) { inp.form.addEventListener("submit", function (e) { if (!check()) { e.preventDefault(); inp.focus(); } }); }
  });
  // Disable a form's submit button while it is sent (uploads take a moment)
  // and say so, so nobody submits twice.
  document.querySelectorAll("form[method=post]").forEach(function (f) {
    f.addEventListener("submit", function (e) {
      if (e.defaultPrevented) { return; }
      var b = f.querySelector("button[type=submit]");
      if (b && !f.hasAttribute("data-confirm")) {
        window.setTimeout(function () { b.disabled = true; b.setAttribute("aria-busy", "true"); }, 0);
      }
    });
  });
  // Incident forms: the UTC offset of the times entered defaults to the
  // browser's own, unless the form already holds times (shown in UTC) or
  // says to keep it.
  document.querySelectorAll("select[data-tz]:not([data-keep])").forEach(function (sel) {
    var f = sel.form, filled = false;
    if (f) { f.querySelectorAll("input[type=datetime-local]").forEach(function (i) { if (i.value) { filled = true; } }); }
    if (filled || sel.value !== "+00:00") { return; }
    var m = -new Date().getTimezoneOffset(), a = Math.abs(m);
    var off = (m < 0 ? "-" : "+") + String(Math.floor(a / 60)).padStart(2, "0") + ":" + String(a % 60).padStart(2, "0");
    if (sel.querySelector("option[value='" + off + "']")) { sel.value = off; }
  });
  // Reporting clocks count down while the page is open; the text the server
  // rendered is right at load and stays right without this script.
  var clocks = document.querySelectorAll("time[data-countdown]");
  function tick() {
    var now = Date.now();
    clocks.forEach(function (el) {
      var due = Date.parse(el.getAttribute("datetime"));
      if (isNaN(due)) { return; }
      var d = Math.round((due - now) / 60000), past = d < 0;
      d = Math.abs(d);
      var days = Math.floor(d / 1440), h = Math.floor((d % 1440) / 60), min = d % 60;
      var s = days > 0 ? days + " d " + h + " h" : (h > 0 ? h + " h " + min + " min" : min + " min");
      el.textContent = past ? "overdue by " + s : "in " + s;
    });
  }
  if (clocks.length) { window.setInterval(tick, 30000); }
  // The sidebar is a <details> the server sends open: on a narrow screen
  // it starts as a closed "Menu" and opens on demand; on a wide one it
  // stays open. Without this script it works the same, only starting open.
  var side = document.querySelector("details[data-sidebar]");
  if (side && window.matchMedia) {
    var narrow = window.matchMedia("(max-width: 899px)");
    var sync = function () { side.open = !narrow.matches; };
    sync();
    if (narrow.addEventListener) { narrow.addEventListener("change", sync); }
  }
  // Move focus to the first field with an error so keyboard and screen
  // reader users land on it.
  var bad = document.querySelector("[aria-invalid=true]");
  if (bad) { bad.focus(); }
})();
