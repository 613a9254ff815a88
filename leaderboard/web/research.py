"""The page of a research task (MLAgentBench's layout): what the agent starts from, the starter's
baseline, and the runs the viewer may see ranked by their improvement over that baseline."""

from __future__ import annotations

from dataclasses import dataclass

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from leaderboard.analysis import research as research_stats
from leaderboard.analysis import stats
from leaderboard.lib.research_failures import LABELS as FAILURE_LABELS
from leaderboard.models import Competition, ResearchTask, Run
from leaderboard.web.charts import research_improvement_figure


@dataclass
class RunRow:
    run: Run
    improvement: float | None
    success: bool | None
    failures: list[str]

    @property
    def tokens(self) -> int | None:
        parts = [n for n in (self.run.tokens_in, self.run.tokens_out) if n is not None]
        return sum(parts) if parts else None

    @property
    def usage(self) -> str:
        return stats.usage_basis([self.run])


def page(request: HttpRequest, competition: Competition) -> HttpResponse:
    task = ResearchTask.objects.filter(competition=competition).first()
    rows = ranked_runs(competition, request.user)
    read_only = set(task.read_only_files) if task else set()
    return render(request, "leaderboard/research_task.html", {
        "competition": competition, "task": task, "rows": rows,
        "starter_files": [(name, size, name in read_only) for name, size in (task.starter_files if task else [])],
        "figure": improvement_figure(rows) if any(r.improvement is not None for r in rows) else None,
        "success_pct": 100 * research_stats.RESEARCH_SUCCESS_IMPROVEMENT,
        "success_margin": research_stats.RESEARCH_SUCCESS_IMPROVEMENT,
    })


def ranked_runs(competition: Competition, user) -> list[RunRow]:
    """The runs the viewer may see, best improvement first; runs without one (not graded, no score) last."""
    runs = (Run.objects.visible_to(user).filter(competition=competition)
            .select_related("competition", "experiment__agent", "experiment__model"))
    rows = []
    for run in runs:
        gain, success = research_stats.research_outcome(run)
        rows.append(RunRow(run, gain, success, [FAILURE_LABELS.get(c, c) for c in run.failure_classes]))
    return sorted(rows, key=lambda r: (r.improvement is None, -(r.improvement or 0.0), r.run.pk))


def improvement_figure(rows: list[RunRow]) -> dict:
    return research_improvement_figure([
        (f"run {r.run.pk}", 100 * r.improvement, bool(r.success),
         f"{r.run.experiment.agent} · {r.run.experiment.model} · seed {r.run.seed}")
        for r in rows if r.improvement is not None], 100 * research_stats.RESEARCH_SUCCESS_IMPROVEMENT)
