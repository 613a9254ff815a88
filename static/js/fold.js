// Folds (<details class="fold-on-phone" open>) are open in the HTML, so a wide screen, a browser without
// JavaScript and a saved page show everything; on a phone they close, so the first screen shows the
// table or the steps rather than prose and controls, each one tap from open. medalboard.css hides
// their summaries on wide screens, so a wide screen must never leave one closed.
(function () {
  "use strict";
  const phone = window.matchMedia("(max-width: 700px)");
  function fold(closed) {
    document.querySelectorAll("details.fold-on-phone").forEach((d) => { d.open = !closed; });
  }
  if (phone.matches) fold(true);
  phone.addEventListener("change", (event) => { if (!event.matches) fold(false); });
})();
