// Job page: poll the job's JSON while it is active and refresh each task row. Values are agent-adjacent
// (errors, runner names), so everything is written with textContent: nothing is parsed as HTML.
(function () {
  const table = document.getElementById("tasks");
  if (!table) return;
  const url = table.dataset.jsonUrl;
  const statusEl = document.getElementById("job-status");
  const ACTIVE = new Set(["queued", "running"]);

  function text(el, value) { el.textContent = value === null || value === undefined ? "–" : String(value); }

  function statusCell(cell, task) {
    cell.textContent = "";
    const badge = document.createElement("span");
    badge.className = "status " + task.status;
    badge.textContent = task.state;
    cell.appendChild(badge);
    if (task.error) {
      const err = document.createElement("div");
      err.className = "small grading-error";
      err.textContent = task.error;
      cell.appendChild(err);
    }
  }

  function scoreCell(cell, task) {
    text(cell, task.score);
    if (task.grading_error) {
      const why = document.createElement("div");
      why.className = "small grading-error";
      why.textContent = "not scored: " + task.grading_error;
      cell.appendChild(why);
    }
  }

  function runCell(cell, task) {
    cell.textContent = "";
    if (!task.run) { cell.textContent = "–"; return; }
    const link = document.createElement("a");
    link.href = "/runs/" + task.run + "/";
    link.textContent = "run " + task.run;
    cell.appendChild(link);
  }

  function update(job) {
    statusEl.textContent = job.state;
    statusEl.className = "status " + job.status;
    // A finished job has nothing to cancel: the button goes with the state that offered it.
    const cancel = document.getElementById("cancel-form");
    if (cancel && !ACTIVE.has(job.status)) cancel.remove();
    for (const task of job.tasks) {
      const row = table.querySelector('tr[data-task="' + task.id + '"]');
      if (!row) continue;
      const cell = (name) => row.querySelector('[data-field="' + name + '"]');
      statusCell(cell("status"), task);
      text(cell("attempts"), task.attempts + " / " + task.max_attempts);
      text(cell("runner"), (task.runner || "–") + (task.gpu_indices.length ? " · GPU " + task.gpu_indices.join(", ") : ""));
      text(cell("elapsed"), task.elapsed_s === null ? null : window.medalboardDuration(task.elapsed_s));
      scoreCell(cell("score"), task);
      text(cell("medal"), task.medal);
      runCell(cell("run"), task);
    }
    table.dataset.status = job.status;
    return ACTIVE.has(job.status) || job.tasks.some((t) => t.run_status && !["graded", "failed", "waiting"].includes(t.run_status));
  }

  async function poll() {
    try {
      const response = await fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" });
      if (response.ok && !update(await response.json())) {
        document.getElementById("live-note").textContent = "The job has finished.";
        return;
      }
    } catch (err) { /* a dropped poll is retried below */ }
    setTimeout(poll, 2000);
  }
  setTimeout(poll, 1000);
})();
