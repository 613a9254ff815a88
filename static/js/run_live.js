// Run page of an agent at work: poll the run's live JSON, show status, elapsed against the limit and
// the output tail (textContent only: agent output is untrusted), and append new steps to the replay.
(function () {
  const box = document.getElementById("live");
  if (!box) return;
  const url = box.dataset.liveUrl;
  const el = (id) => document.getElementById(id);
  let shown = Number(el("live-steps").textContent) || 0;

  async function growReplay(n) {
    const replay = window.medalboardReplay;
    if (!replay || n <= shown) return;
    shown = n;
    const scrubber = el("scrubber");
    if (scrubber) scrubber.max = String(n - 1);
    replay.root.dataset.nSteps = String(n);
    await replay.queue(async () => {
      if (!replay.cards().length) replay.place(await replay.fetchWindow({}), "replace");
      else { replay.loadNext.hidden = false; await replay.loadAdjacent(1); }
    });
    replay.loadOutline().catch(() => {});
  }

  function show(data) {
    el("live-status").textContent = data.task_state || data.status;
    el("live-attempts").textContent = data.attempts === undefined ? "–" : String(data.attempts);
    // One count of steps on the page: the live line, the run's facts and the player's "step i / n".
    el("live-steps").textContent = String(data.n_steps);
    el("live-steps-so-far").textContent = data.done ? "" : " so far";
    const facts = el("run-steps"), position = el("position");
    if (facts) facts.textContent = String(data.n_steps);
    if (position) position.textContent = position.textContent.replace(/\/ \d+$/, "/ " + data.n_steps);
    if (data.elapsed_s !== null && data.elapsed_s !== undefined) {
      el("live-elapsed").value = Math.min(data.elapsed_s, data.time_limit_s);
      el("live-elapsed-text").textContent = window.medalboardDuration(data.elapsed_s) + " of " +
        window.medalboardDuration(data.time_limit_s);
    }
    el("live-log").textContent = data.log_tail || "";
    el("live-error").hidden = !data.error;
    el("live-error").textContent = data.error || "";
    box.dataset.status = data.done ? "done" : (data.task_status || data.status);
  }

  async function poll() {
    try {
      const response = await fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" });
      if (response.ok) {
        const data = await response.json();
        show(data);
        await growReplay(data.n_steps);
        if (data.done) { box.dataset.done = "true"; return; }
      }
    } catch (err) { /* retried below */ }
    setTimeout(poll, 1500);
  }
  setTimeout(poll, 500);
})();
