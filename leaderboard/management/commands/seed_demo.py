"""Demo content so a fresh site is not empty; every demo run says DEMO in its agent name or notes.

1. Real agent trajectories from ../shared/data/trajectories (read in place), imported through the
   same importers and service as any upload.
2. Graded runs for two Lite competitions, with SYNTHETIC answers made from scikit-learn's bundled
   datasets: "demo: synthetic answers, not the real Kaggle test set". The answers are written under
   var/demo/ and used for these runs only; they are never registered as the competition's answers,
   so real uploads are never graded against them.

Running it again changes nothing (uploads are idempotent by content).
"""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import numpy as np
from django.conf import settings
from django.core.files.base import ContentFile
from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.db import transaction

from leaderboard.models import Benchmark, Competition, Run, Split
from leaderboard.runs import artifacts, outcome
from leaderboard.runs import submission as services
from leaderboard.runs.experiments import ExperimentSpec

SYNTHETIC_LABEL = "DEMO: synthetic answers, not the real Kaggle test set"
# (file, agent, model, task as the fixture's source describes it in PROVENANCE.md; "" = as the log names it)
TRAJECTORY_FILES = [
    ("aide/translucent-spaniel_journal.json", "AIDE", "gpt-4o", "house-prices"),
    ("mlagentbench/gemini-pro_cifar10_0_trace.json", "MLAgentBench ResearchAgent", "gemini-pro", "cifar10"),
    ("swe-agent/6e44b9__sweagenttestrepo-1c2844.traj", "SWE-agent", "", ""),
    ("openhands/basic_gui_mode.json", "OpenHands", "", ""),
    ("inspect/log_read_sample.json", "Inspect agent", "", ""),
]
SEEDS = (0, 1, 2)
DEMO_COMPETITIONS = ("tabular-playground-series-may-2022", "tabular-playground-series-dec-2021")


class Command(BaseCommand):
    help = "Create clearly labelled DEMO runs: real trajectories and synthetic-answer graded runs."

    def add_arguments(self, parser):
        parser.add_argument("--trajectories", default=str(Path(settings.SHARED_DIR) / "data"
                                                           / "trajectories"))

    def handle(self, *args, trajectories: str, **options):
        self.import_trajectories(Path(trajectories))
        self.graded_demo_runs()
        self.demo_split()

    def import_trajectories(self, root: Path) -> None:
        if not root.is_dir():
            self.stdout.write(f"{root} not found: skipping the demo trajectories")
            return
        for relative, agent, model, task in TRAJECTORY_FILES:
            path = root / relative
            if not path.exists():
                self.stdout.write(f"{path} not found: skipped")
                continue
            args = [str(path), "--agent", f"{agent} (DEMO import)",
                    "--notes", f"DEMO: a real public trajectory ({relative}, see PROVENANCE.md), imported as-is"]
            if model:
                args += ["--model", model]
            if task:
                args += ["--competition", task]
            out = StringIO()
            call_command("import_run", *args, stdout=out)
            self.stdout.write(out.getvalue().strip().splitlines()[-1] + f" ({relative})")

    def demo_split(self) -> None:
        """A split of the demo competitions, so the leaderboard has complete seeds to aggregate."""
        benchmark = Benchmark.objects.filter(slug="mle-bench").first()
        if benchmark is None:
            return
        split, _ = Split.objects.update_or_create(benchmark=benchmark, slug="demo", defaults={
            "name": "Demo (synthetic answers)", "position": 99,
            "description": "The two demo competitions; " + SYNTHETIC_LABEL})
        split.competitions.set(Competition.objects.filter(slug__in=DEMO_COMPETITIONS))

    def graded_demo_runs(self) -> None:
        demo_dir = Path(settings.VAR_DIR) / "demo"
        demo_dir.mkdir(parents=True, exist_ok=True)
        for slug, make in zip(DEMO_COMPETITIONS, (_binary_task, _multiclass_task), strict=True):
            competition = Competition.objects.filter(slug=slug).first()
            if competition is None:
                self.stdout.write(f"{slug} is not in the catalogue: run import_competitions first")
                continue
            answers, submissions = make()
            answers_path = demo_dir / f"{slug}-synthetic-answers.csv"
            answers_path.write_text(answers)
            for (agent, seed), csv_text in submissions.items():
                run = self._graded_run(competition, answers_path, agent, seed, csv_text)
                self.stdout.write(f"demo run {run.pk}: {agent} on {slug} seed {seed}: "
                                  f"score {run.score}, {run.medals().label}")

    @transaction.atomic  # grade before the commit, so the queued grade_run finds nothing pending
    def _graded_run(self, competition: Competition, answers_path: Path, agent: str, seed: int, csv_text: str) -> Run:
        run = services.submit_run(
            owner=None, competition=competition.slug, seed=seed, origin=Run.Origin.IMPORT,
            experiment=ExperimentSpec(agent_name=f"DEMO {agent}", model_name="none (scikit-learn baseline)",
                                      hardware="CPU"),
            submission=ContentFile(csv_text.encode(), name="submission.csv"),
            notes=f"{SYNTHETIC_LABEL}: answers generated from scikit-learn's bundled data.",
        )
        Run.objects.filter(pk=run.pk).update(is_demo=True)
        run.is_demo = True
        if run.status == Run.Status.GRADED:
            return run
        from leaderboard.grading import grade_submission

        submission = run.artifacts.get(kind="submission")
        report = grade_submission(competition, artifacts.artifact_path(submission, answers_path.parent),
                                  answers_path=answers_path)
        outcome.store_report(run, report)
        return run


def _split(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    order = np.random.default_rng(seed).permutation(n)
    return order[: n // 2], order[n // 2:]


def _binary_task() -> tuple[str, dict[tuple[str, int], str]]:
    """Breast-cancer data as a binary task scored by ROC AUC (columns id, target)."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    x, y = load_breast_cancer(return_X_y=True)
    train, test = _split(len(y), 2024)
    answers = "id,target\n" + "".join(f"{i},{y[i]}\n" for i in test)
    models = {"scikit-learn logistic regression": lambda s: make_pipeline(StandardScaler(), LogisticRegression()),
              "scikit-learn naive Bayes": lambda s: GaussianNB()}
    submissions = {}
    for name, build in models.items():
        for seed in SEEDS:
            rows = np.random.default_rng(seed).choice(train, size=len(train) // 2, replace=False)
            p = build(seed).fit(x[rows], y[rows]).predict_proba(x[test])[:, 1]
            submissions[(name, seed)] = "id,target\n" + "".join(f"{i},{v:.6f}\n" for i, v in zip(test, p, strict=True))
    return answers, submissions


def _multiclass_task() -> tuple[str, dict[tuple[str, int], str]]:
    """Wine data as a multi-class task scored by accuracy (columns Id, Cover_Type)."""
    from sklearn.datasets import load_wine
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    x, y = load_wine(return_X_y=True)
    y = y + 1  # classes 1..3, like Cover_Type's 1..7
    train, test = _split(len(y), 2021)
    answers = "Id,Cover_Type\n" + "".join(f"{i},{y[i]}\n" for i in test)
    models = {
        "scikit-learn logistic regression": lambda s: make_pipeline(StandardScaler(), LogisticRegression()),
        "scikit-learn random forest": lambda s: RandomForestClassifier(n_estimators=50, random_state=s),
    }
    submissions = {}
    for name, build in models.items():
        for seed in SEEDS:
            rows = np.random.default_rng(seed).choice(train, size=len(train) // 2, replace=False)
            pred = build(seed).fit(x[rows], y[rows]).predict(x[test])
            submissions[(name, seed)] = "Id,Cover_Type\n" + "".join(
                f"{i},{v}\n" for i, v in zip(test, pred, strict=True))
    return answers, submissions
