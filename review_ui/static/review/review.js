// Disables competing actions while one write is in flight: the first submitted action
// form marks the page busy and disables every other action button. The form itself
// carries its idempotency key and revision, so a browser retry repeats the same request.
"use strict";
document.addEventListener("submit", function (event) {
  var form = event.target;
  if (!form.classList || !form.classList.contains("action")) return;
  if (document.body.getAttribute("aria-busy") === "true") { event.preventDefault(); return; }
  document.body.setAttribute("aria-busy", "true");
  var buttons = document.querySelectorAll("form.action button, a.button");
  for (var i = 0; i < buttons.length; i++) {
    buttons[i].setAttribute("aria-disabled", "true");
    if (buttons[i].tagName === "BUTTON") buttons[i].disabled = true;
    else buttons[i].classList.add("disabled");
  }
  var feedback = document.getElementById("feedback");
  if (feedback) { feedback.hidden = false; feedback.className = "feedback pending"; feedback.textContent = "Working…"; }
});
// A page restored from the back/forward cache must not keep the busy state.
window.addEventListener("pageshow", function () { document.body.removeAttribute("aria-busy"); });
