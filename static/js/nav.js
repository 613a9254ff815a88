// Phones: the navigation and account links fold behind a "Menu" button (CSS shows them from 700 px up).
document.addEventListener("DOMContentLoaded", function () {
  "use strict";
  const toggle = document.getElementById("nav-toggle");
  if (!toggle) return;
  const bar = toggle.closest(".topbar");
  toggle.addEventListener("click", function () {
    const open = bar.classList.toggle("nav-open");
    toggle.setAttribute("aria-expanded", open ? "true" : "false");
  });
});
