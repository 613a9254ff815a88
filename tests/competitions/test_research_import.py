"""import_research_tasks: task folders in MLAgentBench's layout become research competitions, with
their scripts kept private; folders that cannot be hosted are refused with the reason."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from leaderboard.competitions import research_import
from leaderboard.models import Competition, CompetitionAnswers, ResearchTask
from tests.competitions.research_fixture import build_task


@pytest.fixture
def research_dir(settings, tmp_path):
    settings.RESEARCH_DIR = tmp_path / "stored"
    return settings.RESEARCH_DIR


@pytest.fixture
def sent(monkeypatch):
    """The baseline requests the command publishes, by task name, instead of a broker."""
    from webapp import queue

    calls = []
    monkeypatch.setattr(queue, "publish", lambda task, args, **kw: calls.append((task, args, kw)))
    return calls


def run(*args) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("import_research_tasks", *map(str, args), stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_a_task_folder_becomes_a_research_competition(db, tmp_path, research_dir, sent,
                                                      django_capture_on_commit_callbacks):
    folder = build_task(tmp_path / "benchmarks")
    with django_capture_on_commit_callbacks(execute=True):
        out, _ = run(tmp_path / "benchmarks", "--split", "mine", "--time-limit-minutes", "5")
    competition = Competition.objects.get(slug="tiny-accuracy")
    assert competition.kind == Competition.Kind.RESEARCH and competition.is_lower_better is False
    assert set(competition.splits.values_list("slug", flat=True)) == {"research", "mine"}
    assert competition.description.startswith("Improve the test accuracy")
    assert "Two features x1, x2" in competition.description  # the env's description file
    assert Path(competition.public_data_dir) == research_dir / "tiny-accuracy" / "env"
    assert (Path(competition.public_data_dir) / "train.py").read_text() == (folder / "env" / "train.py").read_text()
    scripts = Path(CompetitionAnswers.objects.get(competition=competition).research_scripts_dir)
    assert (scripts / "eval.py").is_file() and (scripts / "answer.csv").is_file()
    assert not (Path(competition.public_data_dir) / "answer.csv").exists()
    task = ResearchTask.objects.get(competition=competition)
    assert task.entry_script == "train.py" and task.time_limit_s == 300
    assert set(task.read_only_files) == {"train.csv", "test.csv"}
    assert task.baseline_status == ResearchTask.Baseline.PENDING and competition.baseline_score is None
    assert sent == [("runner.research.compute_baseline", [task.pk], {
        "what": f"the baseline of research task {task.pk}", "queue": "jobs.cpu"})]
    assert "tiny-accuracy: imported" in out


def test_importing_again_changes_nothing_and_a_changed_task_is_copied_again(db, tmp_path, research_dir, sent,
                                                                            django_capture_on_commit_callbacks):
    folder = build_task(tmp_path)
    run(folder, "--baseline-score", "0.5")
    out, _ = run(folder)
    assert "unchanged" in out and Competition.objects.get(slug="tiny-accuracy").baseline_score == 0.5
    (folder / "env" / "train.py").write_text("print('new starter')\n")
    with django_capture_on_commit_callbacks(execute=True):
        out, _ = run(folder)
    assert "imported" in out
    assert (research_dir / "tiny-accuracy" / "env" / "train.py").read_text() == "print('new starter')\n"
    task = ResearchTask.objects.get(competition__slug="tiny-accuracy")
    assert task.baseline_status == ResearchTask.Baseline.PENDING and len(sent) == 1


def test_baseline_score_and_direction_from_the_command(db, tmp_path, research_dir, sent):
    build_task(tmp_path, "tiny-error", lower_is_better=True)
    build_task(tmp_path, "tiny-accuracy")
    run(tmp_path, "--lower-is-better", "tiny-error", "--baseline-score", "tiny-error=0.35",
        "--baseline-score", "tiny-accuracy=0.65")
    error, accuracy = Competition.objects.get(slug="tiny-error"), Competition.objects.get(slug="tiny-accuracy")
    assert error.is_lower_better is True and accuracy.is_lower_better is False
    assert (error.baseline_score, accuracy.baseline_score) == (0.35, 0.65)
    assert error.research.baseline_status == ResearchTask.Baseline.GIVEN and not sent
    with pytest.raises(CommandError, match="needs one task"):
        run(tmp_path, "--baseline-score", "0.3")


@pytest.mark.parametrize(("eval_source", "reason"), [
    (False, "no scripts/eval.py"),
    ("def score(folder):\n    return 1\n", "no get_score(submission_folder) function"),
    ("class X:\n    def get_score(self, folder):\n        return 1\n", "no get_score(submission_folder) function"),
    ("def get_score():\n    return 1\n", "takes no argument"),
    ("def get_score(folder:\n", "not valid Python"),
])
def test_a_task_the_site_cannot_grade_is_refused_with_the_reason(db, tmp_path, research_dir, sent, eval_source,
                                                                  reason):
    build_task(tmp_path, "bad-task", eval_source=eval_source)
    build_task(tmp_path, "good-task")
    with pytest.raises(CommandError, match="refused 1") as refused:
        run(tmp_path, "--baseline-score", "good-task=0.6")
    assert reason in str(refused.value) and "bad-task" in str(refused.value)
    assert not Competition.objects.filter(slug="bad-task").exists()
    assert not (research_dir / "bad-task").exists()
    assert Competition.objects.filter(slug="good-task").exists()  # the others are imported


def test_a_task_whose_prepare_py_has_not_run_is_refused_as_mlagentbench_would(db, tmp_path, research_dir, sent):
    # MLAgentBench's prepare_task runs scripts/prepare.py (which downloads the data) and then writes
    # scripts/prepared; a task with the one and not the other has no data yet.
    for slug in ("unprepared-task", "prepared-task"):
        task = build_task(tmp_path, slug)
        (task / "scripts" / "prepare.py").write_text("print('downloads the data')\n")
    (tmp_path / "prepared-task" / "scripts" / "prepared").write_text("success")
    with pytest.raises(CommandError, match="refused 1") as refused:
        run(tmp_path, "--baseline-score", "prepared-task=0.6")
    assert "unprepared-task: not prepared: scripts/prepare.py has not been run (no scripts/prepared" in str(
        refused.value)
    assert not Competition.objects.filter(slug="unprepared-task").exists()
    assert Competition.objects.filter(slug="prepared-task").exists()


def test_eval_is_read_never_run(db, tmp_path, research_dir, sent):
    marker = tmp_path / "ran"
    source = f"open({str(marker)!r}, 'w').write('x')\n\ndef get_score(folder):\n    return 1.0\n"
    build_task(tmp_path, "tiny-accuracy", eval_source=source)
    run(tmp_path / "tiny-accuracy", "--baseline-score", "0.5")
    assert Competition.objects.filter(slug="tiny-accuracy").exists() and not marker.exists()


def test_links_and_clashes_are_refused(db, tmp_path, research_dir, sent, catalogue):
    folder = build_task(tmp_path / "a")
    (folder / "env" / "secret").symlink_to("/etc/passwd")
    with pytest.raises(CommandError, match="env/secret is a symbolic link"):
        run(folder)
    clash = build_task(tmp_path / "b", "spaceship-titanic")
    with pytest.raises(CommandError, match="already exists"):
        run(clash)
    assert Competition.objects.get(slug="spaceship-titanic").kind == Competition.Kind.KAGGLE
    with pytest.raises(CommandError, match="no task folder"):
        run(tmp_path / "b" / "spaceship-titanic" / "env")


def test_read_only_patterns_follow_mlagentbench():
    patterns = ["./train.csv", "data/*"]
    assert research_import.read_only_matches("train.csv", patterns)
    assert research_import.read_only_matches("data/batch_1", patterns)
    assert research_import.read_only_matches("data/sub/x.png", patterns)
    assert not research_import.read_only_matches("train.py", patterns)
    assert not research_import.read_only_matches("mydata/x", patterns)


def test_a_task_already_in_storage_is_registered_where_it_is(db, research_dir, sent):
    build_task(research_dir, "tiny-accuracy")
    run(research_dir, "--baseline-score", "tiny-accuracy=0.5")
    run(research_dir)  # again: unchanged
    competition = Competition.objects.get(slug="tiny-accuracy")
    assert Path(competition.public_data_dir) == research_dir / "tiny-accuracy" / "env"
    assert (research_dir / "tiny-accuracy" / "env" / "train.py").is_file()
    assert sorted(p.name for p in research_dir.iterdir()) == ["tiny-accuracy"]  # nothing staged beside it


def test_the_catalogue_never_takes_over_a_research_task(db, tmp_path, research_dir, sent):
    """import_research_tasks then import_competitions with the same id: the task stays a research task,
    with its env, scripts and splits; the catalogue's other competitions are imported; stderr says which not."""
    build_task(tmp_path / "benchmarks", "tiny-accuracy")
    run(tmp_path / "benchmarks", "--baseline-score", "0.5", "--split", "mine")
    task = Competition.objects.get(slug="tiny-accuracy")
    public = task.public_data_dir
    catalogue = tmp_path / "catalogue"
    for cid in ("tiny-accuracy", "tiny-other"):
        (catalogue / "competitions" / cid).mkdir(parents=True)
        (catalogue / "competitions" / cid / "config.yaml").write_text(
            f"id: {cid}\nname: {cid}\ncompetition_type: simple\nawards_medals: true\n"
            "grader:\n  name: accuracy\n  grade_fn: mlebench.competitions.x.grade:grade\n")
        (catalogue / "competitions" / cid / "description.md").write_text(f"# {cid} from the catalogue\n")
    (catalogue / "splits").mkdir()
    (catalogue / "splits" / "both.txt").write_text("tiny-accuracy\ntiny-other\n")
    out, err = io.StringIO(), io.StringIO()
    call_command("import_competitions", str(catalogue), stdout=out, stderr=err)
    task.refresh_from_db()
    assert task.kind == Competition.Kind.RESEARCH and task.public_data_dir == public
    assert task.description.startswith("Improve the test accuracy")
    assert set(task.splits.values_list("slug", flat=True)) == {"research", "mine"}
    assert CompetitionAnswers.objects.get(competition=task).research_scripts_dir
    assert Competition.objects.get(slug="tiny-other").kind == Competition.Kind.KAGGLE
    assert "Not imported" in err.getvalue() and "tiny-accuracy" in err.getvalue()
    assert "Imported 1 competitions" in out.getvalue()


def test_read_only_patterns_that_match_nothing_are_said(db, tmp_path, research_dir, sent):
    """amp-parkinsons lists ./train_peptide.csv, a typo: that file stays writable. Say so at import."""
    folder = build_task(tmp_path / "b")
    (folder / "scripts" / "read_only_files.txt").write_text("./train.csv\n./train_peptide.csv\ndata/*\n")
    out, err = run(folder, "--baseline-score", "0.5")
    assert "tiny-accuracy: read-only pattern(s) that match no file" in err
    assert "./train_peptide.csv" in err and "data/*" in err and "./train.csv" not in err.split("no file")[1]


@pytest.mark.parametrize(("slug", "args", "direction_file", "lower", "said"), [
    ("house-price", [], None, True, "MLAgentBench's list"),
    ("vectorization", [], None, True, "MLAgentBench's list"),
    ("cifar10", [], None, False, "the default"),
    ("my-task", [], "lower\n", True, "as scripts/direction.txt says"),
    ("house-price", [], "higher is better\n", False, "as scripts/direction.txt says"),
    ("house-price", ["--higher-is-better", "house-price"], None, False, "as given on the command line"),
    ("cifar10", ["--lower-is-better", "cifar10"], "higher", True, "as given on the command line"),
])
def test_the_direction_comes_from_the_task_or_mlagentbench_and_is_said(db, tmp_path, research_dir, sent, slug,
                                                                       args, direction_file, lower, said):
    folder = build_task(tmp_path / "d", slug)
    if direction_file is not None:
        (folder / "scripts" / "direction.txt").write_text(direction_file)
    out, _ = run(folder, "--baseline-score", "0.5", *args)
    assert Competition.objects.get(slug=slug).is_lower_better is lower
    assert f"{'lower' if lower else 'higher'} is better ({said}" in out


def test_a_direction_file_that_says_neither_is_refused(db, tmp_path, research_dir, sent):
    folder = build_task(tmp_path / "e")
    (folder / "scripts" / "direction.txt").write_text("maximise\n")
    with pytest.raises(CommandError, match="direction.txt must say 'lower' or 'higher'"):
        run(folder)


def test_a_failed_baseline_asked_again_is_said_and_a_given_one_forgets_the_old_time(db, research_dir, sent):
    build_task(research_dir, "tiny-accuracy")
    run(research_dir)
    task = ResearchTask.objects.get(competition__slug="tiny-accuracy")
    ResearchTask.objects.filter(pk=task.pk).update(baseline_status=ResearchTask.Baseline.FAILED, baseline_seconds=5.2)
    out, _ = run(research_dir)
    assert "tiny-accuracy: unchanged, its failed baseline asked for again" in out
    out, _ = run(research_dir, "--baseline-score", "0.5")
    task.refresh_from_db()
    assert task.baseline_status == ResearchTask.Baseline.GIVEN and task.baseline_seconds is None
    out, _ = run(research_dir)
    assert "tiny-accuracy: unchanged," in out and "asked for again" not in out
