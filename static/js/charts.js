// Draws every element with data-figure-id from the Plotly JSON embedded by json_script.
document.querySelectorAll("[data-figure-id]").forEach((el) => {
  const source = document.getElementById(el.dataset.figureId);
  if (!source || !window.Plotly) return;
  const figure = JSON.parse(source.textContent);
  window.Plotly.newPlot(el, figure.data, figure.layout, { responsive: true, displaylogo: false })
    .then(() => el.setAttribute("data-drawn", "true"));
});
