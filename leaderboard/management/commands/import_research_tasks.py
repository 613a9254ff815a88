"""Import research tasks laid out like MLAgentBench's benchmarks (leaderboard/competitions/research_import.py).

The starter's baseline is computed by a runner (it runs the task's code, which the site never
does): the command asks for it by the task's registered name and, with --wait, waits for it.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from leaderboard.competitions import research_import
from leaderboard.models import ResearchTask
from leaderboard.runs import research_traces
from webapp import queue


class Command(BaseCommand):
    help = ("Import research tasks in MLAgentBench's layout (<task>/env, <task>/scripts with eval.py): PATH is one "
            "task folder or a folder of them, e.g. MLAgentBench/benchmarks after its prepare.py scripts.")

    def add_arguments(self, parser):
        parser.add_argument("path")
        parser.add_argument("--split", action="append", default=[], help="also put the tasks in this split")
        parser.add_argument("--lower-is-better", action="append", default=[], metavar="TASK",
                            help="the task's metric is better when lower (e.g. house-price's MAE); repeatable. "
                                 "Without it: the task's scripts/direction.txt (lower|higher), else MLAgentBench's "
                                 "own list (amp, feedback, babylm, llama-inference, house-price, vectorization), "
                                 "else higher")
        parser.add_argument("--higher-is-better", action="append", default=[], metavar="TASK",
                            help="the task's metric is better when higher, whatever the list says; repeatable")
        parser.add_argument("--baseline-score", action="append", default=[], metavar="[TASK=]X",
                            help="the baseline, instead of running the starter (X alone: the one task imported)")
        parser.add_argument("--time-limit-minutes", type=float, default=60.0,
                            help="how long the starter may run for the baseline (default 60)")
        parser.add_argument("--wait", action="store_true", help="wait for the runners' baselines")
        parser.add_argument("--wait-seconds", type=float, default=3600.0)

    def handle(self, *args, path: str, split, lower_is_better, baseline_score, time_limit_minutes, wait,
               wait_seconds, higher_is_better=(), **options):
        if not math.isfinite(time_limit_minutes) or not 0 < time_limit_minutes <= settings.MAX_TIME_LIMIT_MINUTES:
            raise CommandError(f"--time-limit-minutes must be above 0 and at most {settings.MAX_TIME_LIMIT_MINUTES:g}")
        try:
            folders = research_import.find_tasks(Path(path))
            given = _baselines(baseline_score, folders)
            with transaction.atomic():
                imported, refused = research_import.import_tasks(
                    Path(path), lower_is_better=set(lower_is_better), splits=split, baseline_scores=given,
                    time_limit_s=time_limit_minutes * 60, higher_is_better=set(higher_is_better))
                for item in imported:
                    item.linked = research_traces.link_imported_runs(item.competition)
                    if item.needs_baseline:
                        transaction.on_commit(lambda pk=item.task.pk: _ask_for_baseline(pk))
        except research_import.Refused as exc:
            raise CommandError(str(exc)) from None
        for item in imported:
            linked = f", {item.linked} earlier run(s) linked" if item.linked else ""
            state = "imported" if item.changed else \
                "unchanged, its failed baseline asked for again" if item.asked_again else "unchanged"
            self.stdout.write(f"{item.competition.slug}: {state}, {item.direction}, "
                              f"baseline {_baseline_words(item.task)}{linked}")
            if item.unmatched:
                self.stderr.write(f"{item.competition.slug}: read-only pattern(s) that match no file of env/, "
                                  f"so nothing they meant is protected: {', '.join(item.unmatched)}")
        if wait:
            self._wait([item.task.pk for item in imported if item.needs_baseline], wait_seconds)
        for name, why in refused.items():
            self.stderr.write(f"{name}: refused: {why}")
        if refused:
            raise CommandError(f"imported {len(imported)}, refused {len(refused)}: "
                               + "; ".join(f"{name}: {why}" for name, why in refused.items()))
        if not imported:
            raise CommandError(f"no task folder (<task>/env and <task>/scripts) in {path}")

    def _wait(self, pks: list[int], seconds: float) -> None:
        deadline = time.monotonic() + seconds
        waiting = set(pks)
        busy = (ResearchTask.Baseline.PENDING, ResearchTask.Baseline.RUNNING)
        while waiting and time.monotonic() < deadline:
            for task in ResearchTask.objects.filter(pk__in=waiting).exclude(baseline_status__in=busy) \
                    .select_related("competition"):
                waiting.discard(task.pk)
                self.stdout.write(f"{task.competition.slug}: baseline {_baseline_words(task)}")
            time.sleep(0.5)
        if waiting:
            raise CommandError(f"{len(waiting)} baseline(s) not computed after {seconds:g} s: is a runner consuming "
                               f"{settings.RESEARCH_BASELINE_QUEUE}?")


def _baselines(values: list[str], folders: list[Path]) -> dict[str, float]:
    given = {}
    for value in values:
        name, _, number = value.rpartition("=")
        if not name:
            if len(folders) != 1:
                raise CommandError("--baseline-score X needs one task; write TASK=X when importing several")
            name = folders[0].name
        try:
            score = float(number)
        except ValueError:
            raise CommandError(f"--baseline-score {value!r}: {number!r} is not a number") from None
        if not math.isfinite(score):
            raise CommandError(f"--baseline-score {value!r}: the baseline must be a finite number")
        given[name] = score
    return given


def _ask_for_baseline(pk: int) -> None:
    queue.publish(queue.COMPUTE_BASELINE, [pk], what=f"the baseline of research task {pk}",
            queue=settings.RESEARCH_BASELINE_QUEUE)


def _baseline_words(task: ResearchTask) -> str:
    score = task.competition.baseline_score
    if score is not None:
        return f"{score:g} ({task.get_baseline_status_display().lower()})"
    if task.baseline_error:
        return f"{task.get_baseline_status_display().lower()}: {task.baseline_error}"
    return task.get_baseline_status_display().lower()
