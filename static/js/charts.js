// Draws every element with data-figure-id from the Plotly JSON embedded by json_script.
document.querySelectorAll("[data-figure-id]").forEach((el) => {
  const source = document.getElementById(el.dataset.figureId);
  if (!source || !window.Plotly) return;
  const figure = JSON.parse(source.textContent);
  window.Plotly.newPlot(el, figure.data, figure.layout, { responsive: true, displaylogo: false })
    .then(() => {
      el.setAttribute("data-drawn", "true");
      // Marks that stand for a run carry its page's path: a click opens it.
      el.on("plotly_click", (event) => {
        const url = event.points[0] && event.points[0].customdata;
        if (typeof url === "string" && url.startsWith("/") && !url.startsWith("//")) window.location.href = url;
      });
    });
});
