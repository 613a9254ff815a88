"""Import runs from disk: a run folder, a whole MLE-bench run group, a grading report, or a trajectory.

    python manage.py import_run runs/2024-10-01_run-group_aide/ --agent aide --model o1-preview
    python manage.py import_run grading_report.json --agent aide --model gpt-4o   # self-reported
    python manage.py import_run journal.json --competition spaceship-titanic

Everything goes through leaderboard.runs.submission.submit_run, so imports are idempotent (importing the
same thing twice creates nothing new) and a bad run is refused whole.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.files import File
from django.core.management.base import BaseCommand, CommandError

from leaderboard.analysis import stats
from leaderboard.models import Run
from leaderboard.runs import artifacts, snapshots
from leaderboard.runs import submission as services
from leaderboard.runs.experiments import ExperimentSpec
from webapp import queue

RUN_FOLDER = re.compile(r"^(?P<competition>.+?)_(?P<uuid>[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?"
                        r"[0-9a-f]{12})$", re.IGNORECASE)
RUN_PARTS = ("submission", "logs", "code")


@dataclass
class Planned:
    """One run to submit: the arguments submit_run needs beyond the command's options."""

    competition: str
    seed_offset: int = 0
    kwargs: dict[str, Any] = field(default_factory=dict)
    label: str = ""


class Command(BaseCommand):
    help = "Import a run folder, an MLE-bench run group, a grading report JSON, or a trajectory file."

    def add_arguments(self, parser):
        parser.add_argument("path")
        parser.add_argument("--agent", help="Agent name (default: from metadata.json or the trajectory)")
        parser.add_argument("--agent-version", default="")
        parser.add_argument("--model", help="Language model (default: from metadata.json or the trajectory)")
        parser.add_argument("--seed", type=int, default=0, help="First seed; repeats of a competition count up")
        parser.add_argument("--owner", help="Username that owns the imported runs")
        parser.add_argument("--competition", help="Competition or task, when the path does not say")
        parser.add_argument("--split", help="Only import competitions of this split (lite, medium, high, all)")
        parser.add_argument("--hardware", default="")
        parser.add_argument("--gpus", type=int, dest="gpu_count", help="GPU count (left out: not disclosed)")
        parser.add_argument("--gpu-type", default="")
        parser.add_argument("--cpus", type=int, dest="cpu_count", help="vCPUs (left out: not disclosed)")
        parser.add_argument("--memory-gb", type=float, dest="memory_gb", help="RAM (left out: not disclosed)")
        parser.add_argument("--time-limit", type=float, dest="time_limit_hours")
        # Disclosures (leaderboard.trust.disclosures): what is left out shows as "not disclosed".
        parser.add_argument("--internet", choices=["yes", "no"], default="",
                            help="External knowledge or internet used by the agent")
        parser.add_argument("--test-signal", choices=["yes", "no"], default="",
                            help="Any signal from the test set (scores, labels) reached the agent")
        parser.add_argument("--source-url", default="", help="The agent's source code")
        parser.add_argument("--report-url", default="", help="A tech report or paper")
        parser.add_argument("--known-leakage", default="", metavar="NOTE",
                            help="Mark the experiment with known leakage, saying what leaked")
        parser.add_argument("--notes", default="")
        parser.add_argument("--score", type=float, help="The run's final score as its own evaluation reported it "
                            "(self-reported; e.g. MLAgentBench's final_score for a research task's trace)")
        parser.add_argument("--private", action="store_true")
        parser.add_argument("--grade-now", action="store_true",
                            help="Grade the submissions and snapshots here instead of via Celery")

    def handle(self, *args, **options):
        path = Path(options["path"]).expanduser()
        if not path.exists():
            raise CommandError(f"{path}: no such file or folder")
        if path.is_file() and path.stat().st_size < 4096 and not path.read_bytes().strip():
            raise CommandError(f"{path}: the file is empty (nothing to import)")
        if options.get("score") is not None and not math.isfinite(options["score"]):
            raise CommandError("--score must be a finite number")
        owner = self._owner(options["owner"])
        allowed = self._split(options["split"])
        created = existing = skipped = 0
        for planned in plan(path, options):
            if allowed is not None and planned.competition not in allowed:
                skipped += 1
                continue
            run, is_new = self._submit(planned, owner, options)
            created, existing = created + is_new, existing + (not is_new)
            self.stdout.write(f"{'imported' if is_new else 'already there'}: run {run.pk} "
                              f"{planned.label or planned.competition} seed {run.seed} ({run.get_status_display()})")
        summary = f"{created} run(s) imported, {existing} already there"
        self.stdout.write(self.style.SUCCESS(summary + (f", {skipped} outside the split" if skipped else "")))

    def _owner(self, username: str | None):
        if not username:
            return None
        try:
            return get_user_model().objects.get(username=username)
        except get_user_model().DoesNotExist:
            raise CommandError(f"no user named {username!r}") from None

    def _split(self, slug: str | None) -> set[str] | None:
        if not slug:
            return None
        try:
            return set(stats.resolve_split(slug).competitions.values_list("slug", flat=True))
        except Exception:  # noqa: BLE001 - any lookup failure means the split is unknown
            raise CommandError(f"unknown split {slug!r}") from None

    def _submit(self, planned: Planned, owner, options) -> tuple[Run, bool]:
        kwargs = {
            "agent_name": options["agent"] or "unknown agent", "model_name": options["model"] or "unknown model",
            "agent_version": options["agent_version"], "hardware": options["hardware"],
            "time_limit_hours": options["time_limit_hours"], "notes": options["notes"],
            "is_private": options["private"], "gpu_count": options["gpu_count"], "gpu_type": options["gpu_type"],
            "cpu_count": options["cpu_count"], "memory_gb": options["memory_gb"], "disclosures": {
                "internet": options["internet"], "test_signal": options["test_signal"],
                "source_url": options["source_url"], "report_url": options["report_url"],
                "known_leakage": bool(options["known_leakage"]), "leakage_note": options["known_leakage"],
            },
            **planned.kwargs,
        }
        if options.get("score") is not None:
            kwargs["self_reported_score"] = options["score"]
        before = Run.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
        try:
            spec, kwargs = ExperimentSpec.split(kwargs)
            run = services.submit_run(owner=owner, competition=planned.competition, origin=Run.Origin.IMPORT,
                                      experiment=spec, seed=options["seed"] + planned.seed_offset, **kwargs)
        except artifacts.UploadError as exc:
            raise CommandError(f"{planned.label or planned.competition}: {exc}") from None
        if options["grade_now"]:
            self._grade_now(run)
        return run, run.pk > before

    def _grade_now(self, run: Run) -> None:
        """The final submission and every snapshot the import brought, graded here and now."""
        if run.status == Run.Status.PENDING:
            queue.run_here(queue.GRADE_RUN, [run.pk])
        snapshots.grade_pending_now(run.pk)
        run.refresh_from_db()


# --- what a path holds -----------------------------------------------------------------------------


def plan(path: Path, options) -> Iterator[Planned]:
    if path.is_file() and path.suffix == ".json" and (reports := grading_reports(path)) is not None:
        yield from plan_reports(reports, options)
    elif path.is_dir() and is_run_folder(path):
        yield plan_folder(path, options, metadata(path.parent) | metadata(path))
    elif path.is_dir() and (folders := run_folders(path)):
        yield from plan_group(folders, options, metadata(path))
    else:
        yield from plan_trajectories(path, options)


def is_run_folder(path: Path) -> bool:
    return sum((path / part).is_dir() for part in RUN_PARTS) >= 1 and (
        (path / "submission").is_dir() or bool(RUN_FOLDER.match(path.name))
    )


def run_folders(path: Path) -> list[Path]:
    return sorted(p for p in path.iterdir() if p.is_dir() and RUN_FOLDER.match(p.name) and is_run_folder(p))


def competition_of(folder: Path, options) -> str:
    match = RUN_FOLDER.match(folder.name)
    return options.get("competition") or (match.group("competition") if match else folder.name)


def metadata(folder: Path) -> dict:
    """metadata.json of a run group or run, when present and readable."""
    path = folder / "metadata.json"
    try:
        data = json.loads(path.read_text()) if path.is_file() else {}
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _agent_model(meta: dict) -> dict[str, Any]:
    found = {}
    agent = meta.get("agent") or meta.get("agent_id")
    if isinstance(agent, dict):
        agent = agent.get("name") or agent.get("id")
    if isinstance(agent, str) and agent:
        found["agent_name"] = agent
    model = meta.get("model") or meta.get("llm")
    if isinstance(model, str) and model:
        found["model_name"] = model
    return found


def _with_options(found: dict[str, Any], options) -> dict[str, Any]:
    """Command-line options win over what files say."""
    if options.get("agent"):
        found.pop("agent_name", None)
    if options.get("model"):
        found.pop("model_name", None)
    return found


def plan_folder(folder: Path, options, meta: dict, seed_offset: int = 0) -> Planned:
    return Planned(competition=competition_of(folder, options), seed_offset=seed_offset, label=folder.name,
                   kwargs={"run_folder": folder, **_with_options(_agent_model(meta), options)})


def plan_group(folders: list[Path], options, meta: dict) -> Iterator[Planned]:
    repeats: dict[str, int] = defaultdict(int)
    for folder in folders:
        competition = competition_of(folder, options)
        yield plan_folder(folder, options, meta | metadata(folder), seed_offset=repeats[competition])
        repeats[competition] += 1


# --- MLE-bench grading reports ---------------------------------------------------------------------


def grading_reports(path: Path) -> list[dict] | None:
    """The per-competition reports of an MLE-bench grading report file, or None if it is not one."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if isinstance(data, dict):
        data = data.get("competition_reports", [data])
    if isinstance(data, list) and data and all(isinstance(r, dict) and "competition_id" in r for r in data):
        return data
    return None


def plan_reports(reports: list[dict], options) -> Iterator[Planned]:
    repeats: dict[str, int] = defaultdict(int)
    for report in reports:
        competition = str(report["competition_id"])
        score = report.get("score")
        yield Planned(
            competition=competition, seed_offset=repeats[competition], label=f"report {competition}",
            kwargs={"self_reported_score": float(score) if isinstance(score, (int, float)) else None,
                    "reported": report},
        )
        repeats[competition] += 1


# --- trajectory files --------------------------------------------------------------------------------


def plan_trajectories(path: Path, options) -> Iterator[Planned]:
    from leaderboard.trajectories.importers import TrajectoryError, detect, read_trajectories

    if detect(path) is None:
        raise CommandError(f"{path}: not a run folder, run group, grading report or known trajectory format")
    try:
        for index, parsed in enumerate(read_trajectories(path)):  # steps are lazy: submit while reading
            yield _planned_trajectory(path, parsed, index, options)
    except TrajectoryError as exc:
        raise CommandError(str(exc)) from None


def _planned_trajectory(path: Path, parsed, index: int, options) -> Planned:
    from leaderboard.trajectories.importers.run_context import run_context

    meta = parsed.meta
    around = run_context(path)  # the log folder's names, where the trajectory does not say
    competition = options.get("competition") or meta.task_name or around["task"]
    epoch = meta.extra.get("epoch") if isinstance(meta.extra, dict) else None
    if meta.sample_id and not options.get("competition"):
        # Inspect: each sample is its own task; only its epochs are repeats (seeds)
        competition = f"{competition}/{meta.sample_id}"
        index = int(epoch) - 1 if isinstance(epoch, int) and epoch >= 1 else 0
    found = {"agent_name": meta.agent or parsed.format,
             "model_name": meta.model or around.get("model") or "unknown model"}
    kwargs = {"parsed_trajectory": parsed, **_with_options(found, options)}
    if path.is_file():
        kwargs["trajectory_files"] = [File(path.open("rb"), name=path.name)]
    if meta.final_score is not None:
        kwargs["self_reported_score"] = meta.final_score
    label = f"{path.name}#{meta.sample_id}" if meta.sample_id else path.name
    return Planned(competition=competition, seed_offset=index, kwargs=kwargs, label=label)
