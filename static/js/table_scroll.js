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
    window.addEventListener("load", markAll); // after images and charts have taken their room
    if (window.ResizeObserver) {
      const observer = new ResizeObserver(markAll);
      // the box too: it narrows without a window resize when the page gains a vertical scrollbar
      document.querySelectorAll(".table-scroll, .table-scroll table").forEach((el) => observer.observe(el));
    }
  });
})();
