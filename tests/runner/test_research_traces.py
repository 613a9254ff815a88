"""An MLAgentBench log folder imported onto a research task is scored by the task's eval.py on a runner,
like a job's workspaces: the final score and each step's (Snapshots at the steps' times, so the best-step
statistics read them), its step files kept as artifacts (links never followed), asked for by name."""

from __future__ import annotations

import io
import os
import zipfile

import pytest
from django.core.management import call_command

from leaderboard.analysis.research import research_results
from leaderboard.models import Artifact, Run
from leaderboard.runs import recovery, research_traces
from runner import tasks as runner_tasks
from runner.backends.local import LocalBackend
from runner.research.traces import score_trace
from tests.competitions.research_fixture import build_task, expected_scores
from tests.research_support import load_eval, write_mlagentbench_log
from webapp import queue

TASK = "tiny-accuracy"
# MLAgentBench's steps: (action, seconds after the first, the submission its files hold then)
PLAN = [("List Files", 0.0, None), ("Execute Script", 10.0, False), ("Edit Script (AI)", 40.0, False),
        ("Execute Script", 60.0, True), ("Final Answer", 70.0, True)]


@pytest.fixture
def task_dir(db, tmp_path, settings, fast_jobs):
    settings.RESEARCH_DIR = tmp_path / "stored"
    build_task(tmp_path / "tasks", TASK)
    call_command("import_research_tasks", str(tmp_path / "tasks" / TASK), "--baseline-score",
                 str(expected_scores()[0]), stdout=io.StringIO())
    return settings.RESEARCH_DIR / TASK


@pytest.fixture
def sent(monkeypatch):
    """What the site publishes to the runners: (task name, args, queue)."""
    calls = []

    def publish(task, args, *, what, **options):
        if task.startswith("runner."):
            calls.append((task, args, options.get("queue")))
        return object()

    monkeypatch.setattr("webapp.queue.publish", publish)
    return calls


def import_log(folder, django_capture_on_commit_callbacks, *extra) -> Run:
    with django_capture_on_commit_callbacks(execute=True):
        call_command("import_run", str(folder), "--competition", TASK, "--agent", "ResearchAgent", "--model", "m",
                     *extra, stdout=io.StringIO())
    return Run.objects.latest("pk")


def zip_names(artifact: Artifact) -> set[str]:
    with artifact.file.open("rb") as f, zipfile.ZipFile(f) as zf:
        return set(zf.namelist())


def test_a_trace_is_scored_by_eval_py_per_step_on_a_runner(tmp_path, task_dir, sent, client,
                                                           django_capture_on_commit_callbacks):
    # The agent had the improved model at step 3, then left the starter's submission as its final files
    log = write_mlagentbench_log(tmp_path / "log", task_dir, PLAN, final=False)
    run = import_log(log, django_capture_on_commit_callbacks)
    assert sent == [(queue.SCORE_TRACE, [run.pk], "jobs.cpu")]  # by name: the site runs no task code
    assert queue.SCORE_TRACE == runner_tasks.score_trace.name
    assert run.status == Run.Status.PENDING and run.verification == Run.Verification.SELF_REPORTED
    steps = {a.name: a for a in run.artifacts.filter(name__startswith="workspace-snapshots/")}
    assert set(steps) == {f"workspace-snapshots/{s:g}.zip" for _, s, _ in PLAN}
    assert zip_names(steps["workspace-snapshots/60.zip"]) == {"train.py", "data_description.txt", "submission.csv"}
    finals = set(run.artifacts.filter(kind=Artifact.Kind.CODE).values_list("name", flat=True))
    assert {"workspace/submission.csv", "workspace/train.py"} <= finals

    assert score_trace(run.pk, backend=LocalBackend()) == Run.Status.GRADED
    run.refresh_from_db()
    get_score = load_eval(task_dir).get_score
    starter, improved = expected_scores()
    assert run.score == pytest.approx(get_score(str(log / "env_log" / "traces" / "step_final_files"))) \
        == pytest.approx(starter)
    assert run.verification == Run.Verification.VERIFIED and run.status == Run.Status.GRADED
    assert run.grading_report["research"]["files"] == research_traces.FILES_SCORED  # the files are the uploader's
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert 'id="scored-files"' in page and "the files it scored are the uploader" in page
    snapshots = list(run.snapshots.order_by("elapsed_seconds"))
    assert [(s.elapsed_seconds, s.score) for s in snapshots] == [
        (0.0, None), (10.0, pytest.approx(starter)), (40.0, pytest.approx(starter)), (60.0, pytest.approx(improved)),
        (70.0, pytest.approx(improved)), (75.0, pytest.approx(starter))]  # the curve ends at overall_time.txt
    assert "submission.csv" in snapshots[0].grading_error  # step 0 had none: eval.py said why
    assert all(s.artifact_id for s in snapshots[:-1])
    assert run.failure_classes == [] and run.agent_steps == len(PLAN) and run.duration_s == 75.0

    result, = research_results(Run.objects.filter(pk=run.pk).select_related("competition", "experiment"))
    assert result.verified and result.success_at[10] == 0.0  # the final files are the starter's
    assert result.best_success_at[10] == 100.0  # the best step (60 s) was the improved model


def test_links_in_a_trace_are_never_followed_nor_kept(tmp_path, task_dir, sent, django_capture_on_commit_callbacks):
    log = write_mlagentbench_log(tmp_path / "log", task_dir, PLAN[:2], final=True)
    final = log / "env_log" / "traces" / "step_final_files"
    (final / "answer.csv").symlink_to(task_dir / "scripts" / "answer.csv")
    (final / "scripts").symlink_to(task_dir / "scripts", target_is_directory=True)
    (log / "env_log" / "traces" / "step_1_files" / "answers.csv").symlink_to(task_dir / "scripts" / "answer.csv")
    os.mkfifo(log / "env_log" / "traces" / "step_1_files" / "pipe")  # never opened: it would block the import
    run = import_log(log, django_capture_on_commit_callbacks)
    names = set(run.artifacts.values_list("name", flat=True))
    assert not {n for n in names if "answer" in n or n.startswith("workspace/scripts")}
    assert not {"answers.csv", "pipe"} & zip_names(run.artifacts.get(name="workspace-snapshots/10.zip"))
    assert any("step_final_files/answer.csv: not a regular file" in w for w in run.import_warnings)
    assert score_trace(run.pk, backend=LocalBackend()) == Run.Status.GRADED
    run.refresh_from_db()
    assert run.score == pytest.approx(expected_scores()[1])


def test_a_second_delivery_scores_nothing_again(tmp_path, task_dir, sent, django_capture_on_commit_callbacks):
    run = import_log(write_mlagentbench_log(tmp_path / "log", task_dir, PLAN[:2], final=True),
                     django_capture_on_commit_callbacks)
    assert score_trace(run.pk, backend=LocalBackend()) == Run.Status.GRADED
    assert score_trace(run.pk, backend=LocalBackend()) == "not pending"
    assert run.snapshots.count() == 3  # steps 0 and 1, then the final files at 75 s


def test_a_trace_without_final_files_has_no_score_as_in_mlagentbench(tmp_path, task_dir, sent,
                                                                      django_capture_on_commit_callbacks):
    log = write_mlagentbench_log(tmp_path / "log", task_dir, PLAN[:4], with_final=False, overall_time=None,
                                 error="Traceback ...\nKeyboardInterrupt")
    run = import_log(log, django_capture_on_commit_callbacks)
    assert score_trace(run.pk, backend=LocalBackend()) == Run.Status.GRADED
    run.refresh_from_db()
    assert run.score is None and "step_final_files" in run.grading_error and not run.valid_submission
    assert "error" in run.failure_classes  # error.txt, no overall_time.txt: left out of the statistics
    assert run.snapshots.filter(score__isnull=False).count() == 3


def test_a_given_score_is_kept_as_reported_and_the_computed_one_counts(tmp_path, task_dir, sent,
                                                                        django_capture_on_commit_callbacks):
    run = import_log(write_mlagentbench_log(tmp_path / "log", task_dir, PLAN[:2], final=True),
                     django_capture_on_commit_callbacks, "--score", "0.99")
    assert run.status == Run.Status.PENDING
    score_trace(run.pk, backend=LocalBackend())
    run.refresh_from_db()
    assert run.score == pytest.approx(expected_scores()[1])
    assert run.grading_report["research"]["reported_score"] == 0.99


def test_a_trace_imported_before_its_task_is_scored_once_the_task_is(tmp_path, settings, db, fast_jobs, sent,
                                                                     django_capture_on_commit_callbacks):
    settings.RESEARCH_DIR = tmp_path / "stored"
    task = build_task(tmp_path / "tasks", TASK)
    run = import_log(write_mlagentbench_log(tmp_path / "log", task, PLAN[:2], final=True),
                     django_capture_on_commit_callbacks)
    assert run.competition is None and run.status == Run.Status.GRADED and not sent
    with django_capture_on_commit_callbacks(execute=True):
        call_command("import_research_tasks", str(task), "--baseline-score", "0.5", stdout=io.StringIO())
    run.refresh_from_db()
    assert run.status == Run.Status.PENDING and (queue.SCORE_TRACE, [run.pk], "jobs.cpu") in sent
    assert score_trace(run.pk, backend=LocalBackend()) == Run.Status.GRADED


def test_the_sweep_asks_a_runner_again_by_name(tmp_path, task_dir, settings, monkeypatch,
                                               django_capture_on_commit_callbacks):
    monkeypatch.setattr("webapp.queue.publish", lambda *a, **k: None)  # the broker was down at import
    run = import_log(write_mlagentbench_log(tmp_path / "log", task_dir, PLAN[:2], final=True),
                     django_capture_on_commit_callbacks)
    sent_again = []
    monkeypatch.setattr("webapp.queue.send", lambda name, args, queue: sent_again.append((name, args)))
    settings.STALE_PENDING_S = 0
    Run.objects.filter(pk=run.pk).update(updated_at=run.updated_at.replace(year=2000))
    assert recovery.sweep_grading()["requeued_pending"] == 1
    assert sent_again == [(queue.SCORE_TRACE, [run.pk])]


@pytest.mark.docker
def test_a_trace_is_scored_in_the_docker_grading_sandbox(tmp_path, task_dir, sent, settings,
                                                         django_capture_on_commit_callbacks):
    import uuid

    from runner.backends.docker import DockerBackend

    backend = DockerBackend(runner_name=f"test-trace-runner-{uuid.uuid4().hex[:8]}")
    if not backend.image_exists(settings.MEDALBOARD_AGENT_IMAGE):
        pytest.skip(f"agent image {settings.MEDALBOARD_AGENT_IMAGE} not built")
    run = import_log(write_mlagentbench_log(tmp_path / "log", task_dir, PLAN[:4], final=True),
                     django_capture_on_commit_callbacks)
    assert score_trace(run.pk, backend=backend) == Run.Status.GRADED
    run.refresh_from_db()
    assert run.score == pytest.approx(expected_scores()[1])
    assert [s.score is not None for s in run.snapshots.order_by("elapsed_seconds")] == [False, True, True, True, True]
    assert backend.remove_stale() == 0


def test_grading_here_hands_a_trace_to_a_runner(tmp_path, task_dir, sent, django_capture_on_commit_callbacks):
    """`import_run --grade-now` (or a regrade) reaches the site's grade_run: it asks a runner instead of
    grading a research trace without its task's eval.py."""
    log = write_mlagentbench_log(tmp_path / "log", task_dir, PLAN[:2], final=True)
    run = import_log(log, django_capture_on_commit_callbacks, "--grade-now")
    assert run.status == Run.Status.PENDING and not run.grading_error
    assert sent.count((queue.SCORE_TRACE, [run.pk], "jobs.cpu")) == 2  # at import, then by grade_run
    assert score_trace(run.pk, backend=LocalBackend()) == Run.Status.GRADED


def test_the_step_files_are_kept_within_the_run_output_limits(tmp_path, task_dir, sent, settings,
                                                              django_capture_on_commit_callbacks):
    settings.JOB_OUTPUT_TOTAL_BYTES = 4 * 1500  # the step zips get a quarter: about one step's zip of ~1 kB
    log = write_mlagentbench_log(tmp_path / "log", task_dir, PLAN, final=True)
    (log / "env_log" / "traces" / "step_final_files" / "big.bin").write_bytes(b"x" * 20_000)
    run = import_log(log, django_capture_on_commit_callbacks)
    steps = run.artifacts.filter(name__startswith="workspace-snapshots/")
    assert 1 <= steps.count() < len(PLAN) and sum(a.size for a in steps) <= 1500, [a.size for a in steps]
    assert not run.artifacts.filter(name="workspace/big.bin").exists()
    assert any("big.bin" in w and "limits" in w for w in run.import_warnings)
    assert any(w.startswith("step_") and "limits" in w for w in run.import_warnings)
    assert score_trace(run.pk, backend=LocalBackend()) == Run.Status.GRADED
    run.refresh_from_db()
    assert run.score == pytest.approx(expected_scores()[1])  # the final files it kept are scored all the same


def test_a_runner_without_the_tasks_scripts_scores_nothing_and_says_why(tmp_path, task_dir, sent,
                                                                        django_capture_on_commit_callbacks):
    run = import_log(write_mlagentbench_log(tmp_path / "log", task_dir, PLAN[:2], final=True),
                     django_capture_on_commit_callbacks)
    (task_dir / "scripts" / "eval.py").rename(task_dir / "scripts" / "eval.py.moved")
    assert score_trace(run.pk, backend=LocalBackend()) == Run.Status.FAILED
    run.refresh_from_db()
    assert run.verification == Run.Verification.SELF_REPORTED and run.score is None
    assert "not on this runner" in run.grading_error and not run.snapshots.exists()


@pytest.mark.parametrize("seconds", [0.0, 12.5, 30.0, 17999.9, 123456.7, 1e7])
def test_a_steps_zip_name_keeps_its_time(seconds):
    """No exponent form (1.23457e+05): two steps a second apart past a day keep their own times."""
    name = f"{research_traces.STEPS_FOLDER}/{research_traces.seconds_name(seconds)}.zip"
    assert research_traces.step_seconds(name) == seconds
