// Runs index: at most two runs picked to compare; the compare button says what is still missing.
(function () {
  "use strict";
  const form = document.getElementById("compare-picker");
  if (!form) return;
  const button = document.getElementById("compare-submit");
  const hint = document.getElementById("compare-hint");
  const boxes = () => Array.from(form.querySelectorAll("input[name=runs]"));
  function update() {
    const picked = boxes().filter((box) => box.checked);
    for (const box of boxes()) box.disabled = picked.length >= 2 && !box.checked;
    button.disabled = picked.length !== 2;
    hint.textContent = picked.length === 2 ? "Runs " + picked.map((b) => b.value).join(" and ") + " picked."
      : "Tick " + (2 - picked.length) + " more run" + (picked.length === 1 ? "" : "s") + " to compare.";
  }
  form.addEventListener("change", update);
  form.addEventListener("submit", function (event) {
    // /compare/ takes ?runs=<a>,<b>
    event.preventDefault();
    const ids = boxes().filter((box) => box.checked).map((box) => box.value);
    window.location.assign(form.action + "?runs=" + encodeURIComponent(ids.join(",")));
  });
  update();
})();
