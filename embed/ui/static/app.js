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
  // Disable a form's submit button while it is sent (uploads take a moment)
  // and say so, so nobody submits twice.
  document.querySelectorAll("form[method=post]").forEach(function (f) {
    f.addEventListener("submit", function () {
      var b = f.querySelector("button[type=submit]");
      if (b && !f.hasAttribute("data-confirm")) {
        window.setTimeout(function () { b.disabled = true; b.setAttribute("aria-busy", "true"); }, 0);
      }
    });
  });
  // Move focus to the first field with an error so keyboard and screen
  // reader users land on it.
  var bad = document.querySelector("[aria-invalid=true]");
  if (bad) { bad.focus(); }
})();
