"""Demo content so a fresh site is not empty; every demo run says DEMO in its agent name or notes.

1. Real agent trajectories from ../shared/data/trajectories (read in place), imported through the
   same importers and service as any upload.
2. Runs of the site's built-in baseline agent on the two demo competitions, with SYNTHETIC tasks
   made from scikit-learn's bundled datasets (leaderboard.management.demo_agent): its trajectory,
   code, snapshots and timings are real, graded here against synthetic answers, "DEMO: synthetic
   answers, not the real Kaggle test set". Two experiments that differ only in hardware (1 and 2
   CPU cores), three seeds each, so every board, experiment page, scaling curve, comparison and
   similarity page has something to show. The answers are written under var/demo/ and used for
   these runs only; they are never registered as the competition's answers, so real uploads are
   never graded against them, and the runs are marked `is_demo`, never counted as verified.

Running it again changes nothing (the agent's folders are kept, uploads are idempotent by content).
"""

from __future__ import annotations

from io import StringIO
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.db import transaction

from leaderboard.management import demo_agent
from leaderboard.models import Benchmark, Competition, Run, Snapshot, Split
from leaderboard.runs import artifacts, outcome, snapshots
from leaderboard.runs import submission as services
from leaderboard.runs.experiments import ExperimentSpec
from leaderboard.trust.review import review_run

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
DEMO_COMPETITIONS = {"tabular-playground-series-may-2022": demo_agent.binary_task,
                     "tabular-playground-series-dec-2021": demo_agent.multiclass_task}
HARDWARE = [demo_agent.Hardware("CPU, 1 core (demo machine)", 1), demo_agent.Hardware("CPU, 2 cores (demo machine)", 2)]
AGENT_NAME = "DEMO medalboard-baseline"
MODEL_NAME = "none (no LLM)"
OLD_DEMO_AGENTS = "DEMO scikit-learn"  # the demo's runs before the baseline agent made them


class Command(BaseCommand):
    help = "Create clearly labelled DEMO runs: real trajectories, and the baseline agent on synthetic tasks."

    def add_arguments(self, parser):
        parser.add_argument("--trajectories", default=str(Path(settings.SHARED_DIR) / "data"
                                                           / "trajectories"))
        parser.add_argument("--agent-runs", default="", help="where the baseline agent's run folders are kept "
                            "(default var/demo/agent-runs); kept folders are imported without running it again")

    def handle(self, *args, trajectories: str, agent_runs: str, **options):
        self.import_trajectories(Path(trajectories))
        self.graded_demo_runs(Path(agent_runs) if agent_runs else Path(settings.VAR_DIR) / "demo" / "agent-runs")
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

    def graded_demo_runs(self, root: Path) -> None:
        competitions = {c.slug: c for c in Competition.objects.filter(slug__in=DEMO_COMPETITIONS)}
        for slug in DEMO_COMPETITIONS:
            if slug not in competitions:
                self.stdout.write(f"{slug} is not in the catalogue: run import_competitions first")
        if not competitions:
            return
        Run.objects.filter(is_demo=True, experiment__agent__name__startswith=OLD_DEMO_AGENTS).delete()
        tasks = [make(slug) for slug, make in DEMO_COMPETITIONS.items() if slug in competitions]
        answers_dir = Path(settings.VAR_DIR) / "demo"
        answers_dir.mkdir(parents=True, exist_ok=True)
        for task in tasks:
            (answers_dir / f"{task.slug}-synthetic-answers.csv").write_text(task.answers)
        made_now = []
        for made in demo_agent.run_all(tasks, HARDWARE, SEEDS, root, say=self.stdout.write):
            answers = answers_dir / f"{made.task.slug}-synthetic-answers.csv"
            run = self._graded_run(competitions[made.task.slug], answers, made)
            review_run(run)  # the rule checks and code similarity now, not when a worker gets to them
            made_now.append(run.pk)
            self.stdout.write(f"demo run {run.pk}: {AGENT_NAME} ({made.hardware.label}) on {made.task.slug} "
                              f"seed {made.seed}: score {run.score}, {run.medals().label}, "
                              f"{run.snapshots.count()} snapshots")
        # runs an earlier version of the agent or of this command made would stand beside them as other rows
        Run.objects.filter(is_demo=True, experiment__agent__name=AGENT_NAME).exclude(pk__in=made_now).delete()

    @transaction.atomic  # grade before the commit, so the queued gradings find nothing pending
    def _graded_run(self, competition: Competition, answers_path: Path, made: demo_agent.AgentRun) -> Run:
        run = services.submit_run(
            owner=None, competition=competition.slug, seed=made.seed, origin=Run.Origin.IMPORT,
            experiment=ExperimentSpec(agent_name=AGENT_NAME, agent_version="1.0", model_name=MODEL_NAME,
                                      hardware=made.hardware.label, gpu_count=0, cpu_count=made.hardware.cpus,
                                      time_limit_hours=demo_agent.TIME_LIMIT_S / 3600),
            run_folder=made.folder,
            notes=f"{SYNTHETIC_LABEL}: Medalboard's baseline agent run by seed_demo on a task made from "
                  "scikit-learn's bundled data; no LLM, so no tokens and no cost.",
        )
        Run.objects.filter(pk=run.pk).update(is_demo=True, duration_s=made.duration_s, tokens_in=0, tokens_out=0,
                                             cost_usd=0.0)
        run.refresh_from_db()
        if run.status == Run.Status.GRADED:
            return run
        from leaderboard.grading import grade_submission

        for snapshot in run.snapshots.filter(status=Snapshot.Status.PENDING):
            snapshots.grade_stored_snapshot(snapshot, answers_path=answers_path)
        run.refresh_from_db()  # the snapshots' timeline, which the run's save below would overwrite
        submission = run.artifacts.get(kind="submission")
        report = grade_submission(competition, artifacts.artifact_path(submission, answers_path.parent),
                                  answers_path=answers_path)
        outcome.store_report(run, report)
        return run
