"""A runner killed (kill -9) while a research baseline's starter runs loses nothing: the baseline's
lease, renewed while the starter runs, runs out within seconds, the sweep of another runner asks for
it again, and it is computed and stored once, on the second attempt, whatever the task's time limit
(an hour here)."""

from __future__ import annotations

import io
import time

import pytest
from django.core.management import call_command

from leaderboard.models import Competition, ResearchTask
from tests.competitions.research_fixture import STARTER, build_task, expected_scores
from tests.job_support import WorkerProcess, done_once_by_the_survivor, kill_the_holder, slow_work_env, wait_until
from webapp.celery import app

pytestmark = pytest.mark.django_db(transaction=True)
# The runners' leases and sweeps, scaled down from a minute and 30 s; the starter runs two leases.
LEASE_S, SWEEP_S, SLOW_S = 3.0, 1.0, 6.0


@pytest.mark.alone  # seconds-long leases on real workers: timing the parallel load would upset
def test_a_baseline_whose_runner_was_killed_is_computed_once_by_another(catalogue, tmp_path, settings):
    """Two real runners on the baseline queue, each sweeping every second; the one running the
    starter is killed while the starter's process runs."""
    settings.RESEARCH_DIR = tmp_path / "stored"
    settings.RUNNER_WORK_DIR = tmp_path / "work"
    app.control.purge()
    log = tmp_path / "work.log"
    build_task(tmp_path / "tasks", "tiny-accuracy", starter=f"import time\ntime.sleep({SLOW_S})\n" + STARTER)
    env = slow_work_env(log, 0, RESEARCH_BASELINE_LEASE_S=str(LEASE_S), SWEEP_INTERVAL_S=str(SWEEP_S),
                        RESEARCH_BASELINE_RUNS="1",
                        RESEARCH_DIR=str(settings.RESEARCH_DIR))
    runners = [WorkerProcess(tmp_path / f"runner-{n}.log", settings.RESEARCH_BASELINE_QUEUE,
                             runner=f"research-runner-{n}", extra_env=env) for n in (1, 2)]
    try:
        call_command("import_research_tasks", str(tmp_path / "tasks"), stdout=io.StringIO())
        task = ResearchTask.objects.get(competition__slug="tiny-accuracy")
        holder, survivor, killed = kill_the_holder(runners, log, LEASE_S, "started", lambda: _mid_starter(task))
        wait_until(lambda: ResearchTask.objects.get(pk=task.pk).baseline_status not in (
            ResearchTask.Baseline.PENDING, ResearchTask.Baseline.RUNNING), 120, "computed by the survivor", survivor)
        took = time.time() - killed
    finally:
        for runner in runners:
            runner.stop()
    task.refresh_from_db()
    assert task.baseline_status == ResearchTask.Baseline.DONE, task.baseline_error
    assert task.baseline_attempts == 2 and task.baseline_lease_expires_at is None
    assert Competition.objects.get(pk=task.competition_id).baseline_score == pytest.approx(expected_scores()[0])
    assert "majority class: 0" in task.baseline_log and task.baseline_seconds >= SLOW_S
    noticed = done_once_by_the_survivor(log, holder, survivor, killed, within=LEASE_S + SWEEP_S + 10)
    print(f"killed mid-starter: started again {noticed:.1f} s after the kill, done {took:.1f} s after it")


def _mid_starter(task: ResearchTask) -> None:
    task.refresh_from_db()
    assert task.baseline_status == ResearchTask.Baseline.RUNNING and task.baseline_attempts == 1
