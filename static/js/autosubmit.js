// A <select data-autosubmit> submits its form when changed (no inline handlers: the CSP forbids them).
document.querySelectorAll("select[data-autosubmit]").forEach((select) => {
  select.addEventListener("change", () => select.form.submit());
});
