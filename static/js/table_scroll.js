// A table wider than its box scrolls sideways (.table-scroll); say so above it, as its scrollbar sits at
// the table's foot, out of sight on a long table. Checked again when the window or the table changes.
(function () {
  "use strict";
  function mark(box) {
    const hint = box.previousElementSibling && box.previousElementSibling.classList.contains("scroll-hint")
      ? box.previousElementSibling : null;
    const wide = box.scrollWidth > box.clientWidth + 1;
    if (wide && !hint) {
      const p = document.createElement("p");
      p.className = "scroll-hint";
      p.textContent = "More columns to the right: scroll the table sideways →";
      box.before(p);
    } else if (!wide && hint) {
      hint.remove();
    }
  }
  function markAll() { document.querySelectorAll(".table-scroll").forEach(mark); }
  document.addEventListener("DOMContentLoaded", () => {
    markAll();
    window.addEventListener("resize", markAll);
    if (window.ResizeObserver) {
      const observer = new ResizeObserver(markAll);
      document.querySelectorAll(".table-scroll table").forEach((table) => observer.observe(table));
    }
  });
})();
