// Client-side sorting of tables with class "sortable": click a header to sort, again to reverse.
// Cells may carry data-value (numbers); empty values always sort last.
(function () {
  "use strict";
  function cellValue(row, index, numeric) {
    const cell = row.cells[index];
    const raw = cell.dataset.value !== undefined ? cell.dataset.value : cell.textContent.trim();
    if (!numeric) return raw.toLowerCase();
    return raw === "" ? null : parseFloat(raw);
  }
  for (const table of document.querySelectorAll("table.sortable")) {
    const headers = table.tHead.rows[0].cells;
    Array.from(headers).forEach(function (th, index) {
      if (!th.dataset.sort) return;
      th.style.cursor = "pointer";
      th.title = "Sort";
      th.addEventListener("click", function () {
        const numeric = th.dataset.sort === "num";
        const descending = th.dataset.order !== "desc";
        Array.from(headers).forEach(h => { delete h.dataset.order; h.removeAttribute("aria-sort"); });
        th.dataset.order = descending ? "desc" : "asc";
        th.setAttribute("aria-sort", descending ? "descending" : "ascending");
        const body = table.tBodies[0];
        const rows = Array.from(body.rows).filter(r => r.cells.length === headers.length);
        rows.sort(function (a, b) {
          const x = cellValue(a, index, numeric), y = cellValue(b, index, numeric);
          if (x === null || y === null) return (x === null) - (y === null);
          const order = x < y ? -1 : x > y ? 1 : 0;
          return descending ? -order : order;
        });
        rows.forEach(r => body.appendChild(r));
      });
    });
  }
})();
