// The scaling pages: draws the embedded payload (#scaling-data), and on a filter change fetches the
// JSON endpoint, redraws, rebuilds the table, and puts the filters in the URL (and the CSV/JSON links).
(function () {
  "use strict";
  const COLOURS = ["#2f5fa7", "#d4a017", "#2e8b57", "#c0392b", "#8e44ad", "#16a085", "#e67e22", "#7f8c8d"];

  function text(value) { // agent-supplied names: Plotly reads a subset of HTML in labels, so escape it
    return String(value === null || value === undefined ? "" : value)
      .replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }
  function formatDuration(hours) { return window.medalboardDuration(hours * 3600); } // static/js/durations.js
  function label(e) {
    return text(e.agent + " + " + e.model + (e.hardware ? " · " + e.hardware : "") +
      (e.time_limit_hours !== null && e.time_limit_hours !== undefined ? " · " + formatDuration(e.time_limit_hours) : ""));
  }
  function incomplete(p) { return (p.runs_with_pending_snapshots || 0) + (p.runs_with_failed_snapshots || 0) > 0; }
  function incompleteNote(payload) {
    const points = [];
    payload.experiments.forEach((e) => e.points.forEach((p) => { if (incomplete(p)) points.push(p); }));
    const note = document.getElementById("scaling-incomplete");
    if (!note) return;
    note.hidden = !points.length;
    const pending = Math.max(0, ...points.map((p) => p.runs_with_pending_snapshots || 0));
    const failed = Math.max(0, ...points.map((p) => p.runs_with_failed_snapshots || 0));
    const runs = (n) => n + " run" + (n === 1 ? "" : "s");
    note.textContent = points.length ? points.length + " point" + (points.length > 1 ? "s are" : " is") +
      " incomplete (hollow markers): up to " + runs(pending) + " with snapshots still to be graded and " +
      runs(failed) + " with snapshots whose grading failed; those snapshots count as no medal." : "";
  }
  function rgba(hex, alpha) {
    const n = parseInt(hex.slice(1), 16);
    return "rgba(" + (n >> 16) + "," + ((n >> 8) & 255) + "," + (n & 255) + "," + alpha + ")";
  }
  function band(x, low, high, colour, group) {
    return [
      { x: x, y: high, mode: "lines", line: { width: 0 }, hoverinfo: "skip", showlegend: false, legendgroup: group },
      { x: x, y: low, mode: "lines", line: { width: 0 }, fill: "tonexty", fillcolor: rgba(colour, 0.18),
        hoverinfo: "skip", showlegend: false, legendgroup: group },
    ];
  }

  function timeTraces(payload) {
    const traces = [];
    const unit = payload.time_unit || { name: "hours", seconds: 3600 };
    incompleteNote(payload);
    payload.experiments.forEach((e, i) => {
      const colour = COLOURS[i % COLOURS.length], group = "e" + e.experiment_id;
      const x = e.points.map((p) => p.hours * 3600 / unit.seconds), y = e.points.map((p) => p.any_medal_pct);
      const sem = e.points.map((p) => p.any_medal_sem || 0);
      traces.push(...band(x, y.map((v, j) => v === null ? null : v - sem[j]), y.map((v, j) => v === null ? null : v + sem[j]), colour, group));
      traces.push({ x: x, y: y, mode: "lines+markers", name: label(e), legendgroup: group, line: { color: colour },
        marker: { size: 8, symbol: e.points.map((p) => incomplete(p) ? "circle-open" : "circle") },
        customdata: e.points.map((p) => formatDuration(p.hours) + (incomplete(p) ? " (incomplete: " +
          (p.runs_with_pending_snapshots || 0) + " runs with snapshots pending, " + (p.runs_with_failed_snapshots || 0) + " failed)" : "")),
        hovertemplate: "%{customdata}: %{y:.1f}% any medal<extra>" + label(e) + "</extra>" });
    });
    return { traces: traces, layout: { xaxis: { title: { text: "time budget (" + unit.name + ")" }, rangemode: "tozero" },
      yaxis: { title: { text: "any medal (%)" }, rangemode: "tozero" } } };
  }

  function passTraces(payload) {
    const traces = [];
    payload.experiments.forEach((e, i) => {
      const colour = COLOURS[i % COLOURS.length], group = "e" + e.experiment_id;
      const x = e.points.map((p) => p.k);
      traces.push(...band(x, e.points.map((p) => p.ci_low_pct), e.points.map((p) => p.ci_high_pct), colour, group));
      traces.push({ x: x, y: e.points.map((p) => p.pass_at_k_pct), mode: "lines+markers", name: label(e),
        legendgroup: group, line: { color: colour },
        hovertemplate: "pass@%{x}: %{y:.1f}%<extra>" + label(e) + "</extra>" });
    });
    return { traces: traces, layout: { xaxis: { title: { text: "k (attempts = seeds)" }, dtick: 1 },
      yaxis: { title: { text: "any medal, pass@k (%)" }, rangemode: "tozero" } } };
  }

  function hardwareTraces(payload) {
    const traces = payload.groups.map((g, i) => {
      const name = text(g.agent + " + " + g.model + (g.time_limit_hours !== null ? " · " + formatDuration(g.time_limit_hours) : ""));
      return { type: "bar", name: name, marker: { color: COLOURS[i % COLOURS.length] },
        x: [g.experiments.map(() => name), g.experiments.map((e) => text((e.hardware || (e.gpu_count + "x " + (e.gpu_type || "GPU"))) +
          (e.gpus_used && e.gpus_used !== "none" ? " (" + e.gpus_used + ")" : "")))],
        y: g.experiments.map((e) => e.any_medal_pct),
        error_y: { type: "data", array: g.experiments.map((e) => e.any_medal_sem || 0), visible: true },
        customdata: g.experiments.map((e) => e.n_seeds),
        hovertemplate: "%{x}<br>%{y:.1f}% any medal (%{customdata} seeds)<extra></extra>" };
    });
    return { traces: traces, layout: { yaxis: { title: { text: "any medal (%)" }, rangemode: "tozero" },
      xaxis: { type: "multicategory" } } };
  }

  const BUILDERS = { "time": timeTraces, "pass-at-k": passTraces, "hardware": hardwareTraces };

  function rows(payload) { // the same flattening as leaderboard.analysis.scaling.csv_rows
    const out = [];
    (payload.experiments || []).forEach((e) => {
      const head = Object.assign({}, e); delete head.points;
      e.points.forEach((p) => out.push(Object.assign({}, head, p)));
    });
    (payload.groups || []).forEach((g) => {
      const head = Object.assign({}, g); delete head.experiments;
      g.experiments.forEach((e) => out.push(Object.assign({}, head, e)));
    });
    return out;
  }

  // As leaderboard/web/scaling.py's table_for_people: hours written as durations, `hours` left out beside `budget`.
  const PEOPLE_HEADERS = { time_limit_hours: "time limit", hours: "time budget" };
  function fillTable(table, payload) {
    const data = rows(payload);
    const keys = data.length ? Object.keys(data[0]).filter((k) => !(k === "hours" && "budget" in data[0])) : [];
    const cell = (r, k) => r[k] === null || r[k] === undefined ? "–" : (k in PEOPLE_HEADERS ? formatDuration(r[k]) : r[k]);
    table.tHead.replaceChildren(row(keys.map((k) => PEOPLE_HEADERS[k] || k), "th"));
    table.tBodies[0].replaceChildren(...data.map((r) => row(keys.map((k) => cell(r, k)), "td")));
  }
  function row(values, tag) {
    const tr = document.createElement("tr");
    values.forEach((v) => { const cell = document.createElement(tag); cell.textContent = String(v); tr.appendChild(cell); });
    return tr;
  }

  function draw(el, payload) {
    const built = BUILDERS[el.dataset.kind](payload);
    // As leaderboard/web/scaling.py's why_empty: say what an empty chart lacks instead of drawing bare axes.
    const experiments = (payload.experiments || []).concat(...(payload.groups || []).map((g) => g.experiments));
    const state = !experiments.length ? "none" : experiments.some((e) => e.n_seeds) ? "" : "incomplete";
    const note = document.getElementById("scaling-empty");
    note.hidden = !state;
    if (state) note.textContent = note.dataset[state];
    el.hidden = Boolean(state);
    const layout = Object.assign({ margin: { l: 60, r: 20, t: 20, b: 60 }, height: 460, template: "plotly_white",
      legend: { orientation: "h", y: -0.2 } }, built.layout);
    const wasHidden = el.dataset.drawnHidden === "true";
    return window.Plotly.react(el, built.traces, layout, { responsive: true, displaylogo: false }).then(() => {
      if (wasHidden && !el.hidden) window.Plotly.Plots.resize(el);  // drawn while hidden: no size then
      el.dataset.drawnHidden = String(el.hidden);
      el.dataset.revision = String(Number(el.dataset.revision || 0) + 1);
      el.dataset.drawn = "true";
    });
  }

  function query(form) {
    const search = new URLSearchParams();
    new FormData(form).forEach((value, key) => { if (String(value).trim() !== "") search.append(key, String(value).trim()); });
    return search.toString();
  }

  async function refresh(form, el, table) {
    const qs = query(form);
    history.replaceState(null, "", location.pathname + (qs ? "?" + qs : ""));
    document.getElementById("scaling-csv").href = form.dataset.apiUrl + "?" + (qs ? qs + "&" : "") + "format=csv";
    document.getElementById("scaling-json").href = form.dataset.apiUrl + (qs ? "?" + qs : "");
    document.getElementById("scaling-export").href = "?" + (qs ? qs + "&" : "") + "export=html";
    const response = await fetch(form.dataset.apiUrl + "?" + qs, { headers: { Accept: "application/json" }, credentials: "same-origin" });
    const errors = document.getElementById("scaling-errors");
    if (!response.ok) {
      el.dataset.error = JSON.stringify(await response.json());
      return;
    }
    if (errors) errors.hidden = true;
    delete el.dataset.error;
    const payload = await response.json();
    if (table) fillTable(table, payload);
    await draw(el, payload);
  }

  const el = document.getElementById("scaling-chart");
  if (!el || !window.Plotly) return;
  const source = document.getElementById("scaling-data");
  if (source) draw(el, JSON.parse(source.textContent));
  const form = document.getElementById("scaling-filters");
  if (!form) return;
  const table = document.getElementById("scaling-table");
  form.addEventListener("submit", (event) => { event.preventDefault(); refresh(form, el, table); });
  form.addEventListener("change", () => refresh(form, el, table).catch((error) => console.error(error)));
})();
