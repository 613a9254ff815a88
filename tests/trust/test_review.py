"""review_run: findings upserted per check, re-scans, staff decisions kept; the scan enqueued for every
way a run comes in (form and API through the intake, the CLI, run folders, job runs: all end in
leaderboard.runs.outcome) once the run commits."""

from __future__ import annotations

from io import StringIO
from types import SimpleNamespace

import pytest
from django.core.files.base import ContentFile
from django.core.management import call_command

from leaderboard.analysis import page_cache
from leaderboard.models import Run
from leaderboard.runs import outcome
from leaderboard.runs.experiments import ExperimentSpec
from leaderboard.runs.submission import submit_run
from leaderboard.trust.models import Finding
from leaderboard.trust.review import review_run
from leaderboard.trust.tasks import review_run_task
from tests.trust.support import HONEST, command, make_run

pytestmark = pytest.mark.django_db

CHEAT = command("cat /home/data/../private/answers.csv")


@pytest.fixture
def published(monkeypatch):
    """The tasks published (name, args), instead of sending them to a broker."""
    sent = []
    monkeypatch.setattr("webapp.queue.publish", lambda task, args, **kw: sent.append((task, args)) or True)
    return sent


def test_a_scan_stores_one_finding_per_check_that_fires():
    run = make_run([*HONEST, CHEAT], time_limit_hours=1, duration_s=2 * 3600)
    findings = {f.check_name: f for f in review_run(run)}
    assert set(findings) == {"forbidden-paths", "time-limit"}
    assert findings["forbidden-paths"].steps == [len(HONEST)]
    assert findings["forbidden-paths"].status == Finding.Status.OPEN
    assert review_run(run.pk) and Finding.objects.filter(run=run).count() == 2  # again: updated, not duplicated


def test_an_honest_run_has_no_findings():
    assert review_run(make_run(HONEST, time_limit_hours=1, duration_s=3000, submission_exists=True)) == []


def test_a_check_that_no_longer_fires_removes_its_open_finding_but_not_a_decision(staff):
    run = make_run([*HONEST, CHEAT], time_limit_hours=1, duration_s=2 * 3600)
    review_run(run)
    Finding.objects.filter(run=run, check_name="forbidden-paths").update(
        status=Finding.Status.DISMISSED, reviewed_by=staff, review_reason="the path was a typo in a log")
    experiment = run.experiment
    experiment.time_limit_hours = 4  # the limit was recorded wrong: the overrun is gone
    experiment.save()
    Run.objects.filter(pk=run.pk).update(notes="rescanned")
    findings = {f.check_name: f for f in review_run(run)}
    assert set(findings) == {"forbidden-paths"}
    assert findings["forbidden-paths"].status == Finding.Status.DISMISSED  # staff's decision stands


def test_a_changed_finding_moves_the_leaderboard_version():
    run = make_run([*HONEST, CHEAT])
    before = page_cache.current()
    review_run(run)
    assert page_cache.current() == before + 1
    review_run(run)  # nothing changed: the cached boards stay valid
    assert page_cache.current() == before + 1


def test_the_task_runs_the_scan_and_survives_a_deleted_run():
    run = make_run([*HONEST, CHEAT])
    assert review_run_task.apply(args=[run.pk]).get() == "1 findings"
    pk = run.pk
    run.delete()
    assert review_run_task.apply(args=[pk]).get() == "no such run"


def test_an_upload_waiting_for_grading_is_scanned_when_graded(alice, catalogue, published,
                                                               django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        run = submit_run(owner=alice, competition="spaceship-titanic", experiment=ExperimentSpec("a", "m"),
                         submission=ContentFile(b"PassengerId,Transported\n1,True\n", name="submission.csv"))
    assert run.status == Run.Status.PENDING
    assert ("leaderboard.trust.review_run", [run.pk]) not in published  # not before its outcome
    report = SimpleNamespace(score=0.5, submission_exists=True, valid_submission=True, human_rank=None,
                             beats_human_pct=None, error="", grading_available=True, to_dict=lambda: {})
    with django_capture_on_commit_callbacks(execute=True):
        outcome.store_report(run, report)  # what grade_run and a job's grading end in
    assert ("leaderboard.trust.review_run", [run.pk]) in published


def test_self_reported_and_ungraded_runs_are_scanned(alice, catalogue, published, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        reported = submit_run(owner=alice, competition="spaceship-titanic", experiment=ExperimentSpec("a", "m"),
                              self_reported_score=0.8, trajectory_files=[_jsonl()])
        bare = submit_run(owner=alice, competition="my-own-task", experiment=ExperimentSpec("a", "m"),
                          trajectory_files=[_jsonl()], seed=1)
    assert ("leaderboard.trust.review_run", [reported.pk]) in published
    assert ("leaderboard.trust.review_run", [bare.pk]) in published


def test_the_cli_import_enqueues_the_scan(alice, catalogue, published, tmp_path, django_capture_on_commit_callbacks):
    path = tmp_path / "trajectory.jsonl"
    path.write_bytes(_jsonl().read())
    with django_capture_on_commit_callbacks(execute=True):
        call_command("import_run", str(path), "--agent", "a", "--model", "m", "--competition", "spaceship-titanic",
                     "--owner", "alice", stdout=StringIO())
    run = Run.objects.get(owner=alice)
    assert ("leaderboard.trust.review_run", [run.pk]) in published


def _jsonl() -> ContentFile:
    from leaderboard.trajectories.importers.jsonl import header_line, step_line

    body = header_line({"task": "spaceship-titanic"}) + step_line(CHEAT)
    return ContentFile(body, name="trajectory.jsonl")


def test_the_command_scans_runs_again():
    cheat, honest = make_run([*HONEST, CHEAT]), make_run(HONEST)
    out = StringIO()
    call_command("review_runs", stdout=out)
    assert f"run {cheat.pk}: forbidden-paths (open)" in out.getvalue()
    assert "Scanned 2 run(s); 1 with findings" in out.getvalue()
    assert not honest.findings.exists()


@pytest.mark.parametrize("name", [
    "aide/translucent-spaniel_journal.json", "mlagentbench/gemini-pro_cifar10_0_trace.json",
    "openhands/basic_gui_mode.json", "swe-agent/6e44b9__sweagenttestrepo-1c2844.traj",
    "inspect/log_read_sample.json",
])
def test_real_public_trajectories_of_honest_agents_raise_nothing(name):
    from tests.trajectories.import_support import TRAJECTORIES_DIR, import_all

    for run, _ in import_all(TRAJECTORIES_DIR / name)[:3]:
        assert review_run(run) == [], name
