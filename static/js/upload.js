// Upload form: filter the competition select as you type; while a worker imports an upload, poll
// its intake until it is imported or failed (the page then shows the run's progress or the reason);
// after that, poll the run's status endpoint until grading has finished, then go to the run page.
(function () {
  "use strict";
  const filter = document.getElementById("competition-filter");
  const select = document.getElementById("id_competition");
  if (filter && select) {
    filter.addEventListener("input", function () {
      const q = filter.value.trim().toLowerCase();
      let first = null;
      for (const option of select.options) {
        const match = !q || option.value.toLowerCase().includes(q) || option.text.toLowerCase().includes(q);
        option.hidden = !match;
        if (match && option.value && first === null) first = option;
      }
      if (first && (select.selectedOptions.length === 0 || select.selectedOptions[0].hidden)) first.selected = true;
    });
  }
  const form = document.getElementById("upload-form");
  if (form) {
    form.addEventListener("submit", function () {
      document.getElementById("upload-busy").hidden = false;
      document.getElementById("upload-submit").disabled = true;
    });
  }
  // Poll a JSON status URL, backing off to every 5 s, until onData returns true (done).
  function follow(url, onData, onUnreachable) {
    let delay = 500;
    async function poll() {
      try {
        const response = await fetch(url, {headers: {Accept: "application/json"}});
        if (response.ok && onData(await response.json())) return;
      } catch (err) {
        onUnreachable();
      }
      delay = Math.min(delay * 1.5, 5000);
      window.setTimeout(poll, delay);
    }
    poll();
  }
  const intake = document.getElementById("intake");
  if (intake && intake.dataset.done !== "true") {
    const intakeStatus = document.getElementById("intake-status");
    follow(intake.dataset.statusUrl, function (data) {
      intakeStatus.textContent = data.progress;
      intakeStatus.dataset.status = data.status;
      if (data.done) window.location.reload();  // the server shows the run's progress, or why it failed
      return data.done;
    }, function () { intakeStatus.textContent = "could not reach the server; retrying…"; });
  }
  const progress = document.getElementById("progress");
  if (!progress) return;
  const statusEl = document.getElementById("run-status");
  const resultEl = document.getElementById("run-result");
  follow(progress.dataset.statusUrl, function (data) {
    statusEl.textContent = data.progress || data.state;
    statusEl.dataset.status = data.status;
    if (data.done) {
      // The run's state in the site's words (Run.state), its score where it has one, its reason where not.
      resultEl.textContent = data.score !== null ? data.state + ": score " + data.score + ", medal: " + data.medal
        : data.state + (data.grading_error ? ": " + data.grading_error : "");
      window.location.assign(data.url || progress.dataset.runUrl);
    }
    return data.done;
  }, function () { resultEl.textContent = "Could not reach the server; retrying…"; });
})();
