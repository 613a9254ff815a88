"""manage.py import_run: run folders, MLE-bench run groups, grading reports and trajectory files."""

from __future__ import annotations

import json
import shutil
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from leaderboard.competitions import medals
from leaderboard.models import Artifact, Run
from tests.runs.test_submission import TRAJECTORIES, answers_for, submission
from tests.trajectories.import_support import stored_steps

UUID = "0a1b2c3d-4e5f-6789-abcd-ef0123456789"


def import_run(*args) -> str:
    out = StringIO()
    call_command("import_run", *[str(a) for a in args], stdout=out)
    return out.getvalue()


def run_folder(root: Path, competition: str, uuid: str = UUID, correct: int = 40) -> Path:
    folder = root / f"{competition}_{uuid}"
    (folder / "submission").mkdir(parents=True)
    (folder / "submission" / "submission.csv").write_bytes(submission(correct).read())
    (folder / "logs").mkdir()
    (folder / "logs" / "agent.log").write_text("step 1: read the data\nstep 2: train\n")
    (folder / "code").mkdir()
    (folder / "code" / "train.py").write_text("import pandas\n")
    return folder


def test_a_run_group_imports_every_run_and_grades_them(catalogue, tmp_path, alice):
    answers_for(tmp_path, catalogue)
    group = tmp_path / "runs" / "2024-10-01_run-group_aide"
    run_folder(group, "spaceship-titanic")
    run_folder(group, "spaceship-titanic", uuid=UUID.replace("0a", "ff"), correct=20)
    run_folder(group, "not-in-the-catalogue")
    (group / "metadata.json").write_text(json.dumps({"agent": "aide", "model": "o1-preview"}))
    output = import_run(group, "--owner", "alice", "--grade-now", "--time-limit", 24)
    assert "3 run(s) imported" in output
    runs = Run.objects.filter(owner=alice).order_by("seed", "task_name")
    assert {(r.task_name, r.seed) for r in runs} == {
        ("spaceship-titanic", 0), ("spaceship-titanic", 1), ("not-in-the-catalogue", 0)}
    spaceship = runs.get(task_name="spaceship-titanic", seed=0)
    assert spaceship.origin == Run.Origin.IMPORT and spaceship.status == Run.Status.GRADED
    assert spaceship.gold_medal and spaceship.verification == Run.Verification.VERIFIED
    assert str(spaceship.experiment) == "aide + o1-preview" and spaceship.experiment.time_limit_hours == 24
    assert set(spaceship.artifacts.values_list("kind", flat=True)) >= {
        Artifact.Kind.SUBMISSION, Artifact.Kind.LOG, Artifact.Kind.CODE}
    assert spaceship.n_steps > 0  # the folder's logs and code became steps
    assert runs.get(task_name="not-in-the-catalogue").competition is None
    assert "0 run(s) imported, 3 already there" in import_run(group, "--owner", "alice", "--time-limit", 24)


def test_a_single_run_folder_with_options(catalogue, tmp_path):
    folder = run_folder(tmp_path, "spaceship-titanic")
    import_run(folder, "--agent", "mlab", "--model", "gpt-4o", "--seed", 4)
    run = Run.objects.get()
    assert run.seed == 4 and run.experiment.agent.name == "mlab" and run.status == Run.Status.PENDING


def test_split_option_skips_other_competitions(catalogue, tmp_path):
    group = tmp_path / "group"
    run_folder(group, "spaceship-titanic")  # a dev competition, not in Lite
    run_folder(group, "aerial-cactus-identification")
    output = import_run(group, "--agent", "a", "--model", "m", "--split", "lite")
    assert "1 outside the split" in output
    assert list(Run.objects.values_list("task_name", flat=True)) == ["aerial-cactus-identification"]


def test_grading_report_scores_are_taken_and_medals_recomputed(catalogue, tmp_path):
    spaceship = catalogue.get(slug="spaceship-titanic")
    report = {"competition_reports": [
        {"competition_id": "spaceship-titanic", "score": spaceship.silver_threshold, "gold_medal": True,
         "any_medal": True, "valid_submission": True, "submission_exists": True},
        {"competition_id": "aerial-cactus-identification", "score": None, "valid_submission": False,
         "submission_exists": False},
    ]}
    path = tmp_path / "grading_report.json"
    path.write_text(json.dumps(report))
    import_run(path, "--agent", "aide", "--model", "gpt-4o")
    graded = Run.objects.get(task_name="spaceship-titanic")
    assert graded.verification == Run.Verification.SELF_REPORTED and graded.status == Run.Status.GRADED
    assert graded.score == spaceship.silver_threshold
    assert graded.medals() == medals.award(spaceship.silver_threshold, spaceship.thresholds())
    assert graded.silver_medal and not graded.gold_medal  # recomputed here, not copied from the report
    missing = Run.objects.get(task_name="aerial-cactus-identification")
    assert missing.score is None and not missing.valid_submission and not missing.any_medal


def test_a_list_of_reports_is_accepted_too(catalogue, tmp_path):
    path = tmp_path / "reports.json"
    path.write_text(json.dumps([{"competition_id": "spaceship-titanic", "score": 0.5}] * 2))
    import_run(path, "--agent", "aide", "--model", "gpt-4o")
    assert sorted(Run.objects.values_list("seed", flat=True)) == [0, 1]


@pytest.mark.parametrize("relative, fmt", [
    ("aide/translucent-spaniel_journal.json", "aide"),
    ("swe-agent/6e44b9__sweagenttestrepo-1c2844.traj", "sweagent"),
    ("openhands/basic_gui_mode.json", "openhands"),
    ("mlagentbench/gemini-pro_cifar10_0_trace.json", "mlagentbench"),
])
def test_trajectory_files_import_with_their_task(catalogue, tmp_path, relative, fmt):
    source = TRAJECTORIES / relative
    if not source.exists():
        pytest.skip(f"{source} is not available")
    import_run(source, "--competition", "some-task-outside-the-catalogue")
    run = Run.objects.get()
    assert run.trajectory_format == fmt and run.n_steps > 0
    assert run.competition is None and run.task_name == "some-task-outside-the-catalogue"
    assert run.artifacts.filter(kind=Artifact.Kind.TRAJECTORY).count() == 1


def test_inspect_eval_log_gives_one_run_per_sample(catalogue):
    source = next((TRAJECTORIES / "inspect").glob("*.eval"), None)
    if source is None:
        pytest.skip("no Inspect .eval fixture")
    import_run(source, "--agent", "inspect-agent", "--model", "gpt-4o")
    runs = Run.objects.all()
    # ten different samples are ten tasks, each with its one epoch as seed 0 (only epochs are repeats)
    assert runs.count() == 10 and {r.seed for r in runs} == {0}
    assert sorted(r.task_name for r in runs) == sorted(f"popularity/{i}" for i in range(1, 11))
    assert all(r.trajectory_format == "inspect" for r in runs)


def test_unreadable_paths_are_a_clear_error(catalogue, tmp_path):
    with pytest.raises(CommandError, match="no such file"):
        import_run(tmp_path / "missing")
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x00\x01 nothing we know")
    with pytest.raises(CommandError, match="not a run folder"):
        import_run(junk)
    with pytest.raises(CommandError, match="no user"):
        import_run(run_folder(tmp_path, "spaceship-titanic"), "--owner", "nobody")
    assert not Run.objects.exists()


def test_a_copied_mlagentbench_run_is_idempotent(catalogue, tmp_path):
    source = TRAJECTORIES / "mlagentbench" / "gemini-pro_cifar10_0_trace.json"
    if not source.exists():
        pytest.skip("no MLAgentBench fixture")
    copy = tmp_path / "trace.json"
    shutil.copy(source, copy)
    import_run(copy, "--agent", "ResearchAgent", "--model", "gemini-pro")
    assert "already there" in import_run(copy, "--agent", "ResearchAgent", "--model", "gemini-pro")
    assert Run.objects.count() == 1


def _mlagentbench_log_folder(root: Path) -> Path:
    """The layout MLAgentBench writes: <log>/env_log/trace.json and <log>/agent_log/main_log."""
    folder = root / "cifar10_log"
    (folder / "env_log").mkdir(parents=True)
    (folder / "agent_log").mkdir()
    shutil.copy(TRAJECTORIES / "mlagentbench" / "gemini-pro_cifar10_0_trace.json", folder / "env_log" / "trace.json")
    shutil.copy(TRAJECTORIES / "mlagentbench" / "gemini-pro_cifar10_0_main_log", folder / "agent_log" / "main_log")
    return folder


def test_an_mlagentbench_log_folder_merges_the_main_log(catalogue, tmp_path):
    trace = json.loads((TRAJECTORIES / "mlagentbench" / "gemini-pro_cifar10_0_trace.json").read_text())
    import_run(_mlagentbench_log_folder(tmp_path), "--agent", "ResearchAgent", "--model", "gemini-pro",
               "--competition", "cifar10")
    run = Run.objects.get()
    assert run.trajectory_format == "mlagentbench" and run.task_name == "cifar10" and run.competition is None
    steps = stored_steps(run)
    actions = sum(1 for s in steps if s.kind in ("action", "submission"))
    assert actions == len(trace["steps"])  # one action per trace step, the last one the Final Answer
    assert any(s.kind == "plan" for s in steps)  # Reflection / Research Plan / Thought blocks from main_log
    assert run.n_steps == len(steps) > 2 * len(trace["steps"])


def test_the_api_accepts_a_zipped_mlagentbench_log_folder(catalogue, tmp_path, alice):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from tests.api.test_runs import token_client

    folder = _mlagentbench_log_folder(tmp_path)
    archive = shutil.make_archive(str(tmp_path / "cifar10_log"), "zip", root_dir=tmp_path, base_dir=folder.name)
    response = token_client(alice).post("/api/runs/", {
        "competition": "cifar10", "agent": "ResearchAgent", "model": "gemini-pro",
        "trajectory_files": [SimpleUploadedFile("cifar10_log.zip", Path(archive).read_bytes())],
    }, format="multipart")
    assert response.status_code == 201, response.content
    run = Run.objects.get(pk=response.json()["id"])
    assert run.trajectory_format == "mlagentbench" and run.task_name == "cifar10"
    assert any(s.kind == "plan" for s in stored_steps(run))


def test_grade_now_grades_the_snapshots_the_import_brought(catalogue, tmp_path):
    """No worker runs here (and the embedded broker is never read): --grade-now must leave nothing pending."""
    from leaderboard.models import Snapshot

    answers_for(tmp_path, catalogue)
    folder = run_folder(tmp_path / "runs", "spaceship-titanic")
    (folder / "snapshots").mkdir()
    (folder / "snapshots" / "600.csv").write_bytes(submission(20).read())
    (folder / "snapshots" / "1200.csv").write_bytes(b"not,a\nsubmission\n")
    (folder / "snapshots" / "1800.csv").write_bytes(submission(40).read())
    import_run(folder, "--grade-now", "--agent", "aide", "--model", "o1-preview")
    run = Run.objects.get(task_name="spaceship-titanic")
    states = list(Snapshot.objects.filter(run=run).order_by("elapsed_seconds").values_list("status", "any_medal"))
    assert states == [("graded", False), ("graded", False), ("graded", True)]
    assert json.loads(run.snapshot_timeline) == [[600.0, 0], [1200.0, 0], [1800.0, 1]]


def test_grade_now_grades_the_snapshots_of_every_run_in_a_group(catalogue, tmp_path):
    """An MLE-bench run group whose runs carry snapshots, imported with --grade-now and no worker: every
    snapshot is graded, and the time curve counts their medals at once (not 0.0 until a worker comes)."""
    from rest_framework.test import APIClient

    from leaderboard.models import Benchmark, Snapshot, Split

    answers_for(tmp_path, catalogue)
    group = tmp_path / "runs" / "2024-10-02_run-group_aide"
    for n, uuid in enumerate((UUID, UUID.replace("0a", "ee"), UUID.replace("0a", "dd"))):
        folder = run_folder(group, "spaceship-titanic", uuid=uuid)
        (folder / "snapshots").mkdir()
        (folder / "snapshots" / "60.csv").write_bytes(submission(20).read())  # no medal
        (folder / "snapshots" / "120.csv").write_bytes(submission(40 if n < 2 else 20).read())  # two of three medal
    (group / "metadata.json").write_text(json.dumps({"agent": "aide", "model": "o1-preview"}))
    assert "3 run(s) imported" in import_run(group, "--grade-now", "--time-limit", 0.05)
    runs = Run.objects.filter(task_name="spaceship-titanic")
    assert runs.count() == 3 and set(runs.values_list("status", flat=True)) == {"graded"}
    assert set(Snapshot.objects.filter(run__in=runs).values_list("status", flat=True)) == {"graded"}
    split = Split.objects.create(benchmark=Benchmark.objects.get(slug="mle-bench"), slug="group-test", name="G")
    split.competitions.set(catalogue.filter(slug="spaceship-titanic"))
    data = APIClient().get("/api/scaling/time/", {"split": "group-test", "hours": f"{90 / 3600},{150 / 3600}"}).json()
    (curve,) = data["experiments"]
    assert [p["any_medal_pct"] for p in curve["points"]] == [0.0, pytest.approx(200 / 3, abs=0.005)]
    assert all(p["runs_with_pending_snapshots"] == 0 and p["runs_with_failed_snapshots"] == 0
               for p in curve["points"])
