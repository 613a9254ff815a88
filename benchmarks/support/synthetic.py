"""SYNTHETIC graded runs for the scale and load benchmarks, loaded with bulk_create.

Agents are named `synthetic-agent-<n>`, models `synthetic-model-<n>`, and every run's notes say it is
synthetic. Scores are real Kaggle scores drawn from each competition's human leaderboard at a position
set by the experiment's skill, and the medals, rank and share of humans beaten come from
leaderboard.competitions.medals (the site's own rules): the medal flags are as realistic as the catalogue makes
them, and they say nothing about any real agent. Experiment i and seed s always get the same runs, so
a bigger data set is a smaller one plus more experiments or seeds.
"""

from __future__ import annotations

import numpy as np

from leaderboard.analysis import stats
from leaderboard.competitions import medals
from leaderboard.models import Agent, Experiment, LanguageModel, Run

PREFIX = "synthetic-"
NOTE = "synthetic: made by a benchmark (benchmarks/support/synthetic.py) for speed measurements; not a real result"
HARDWARE = [("A10", 1, "1x A10, 36 vCPU, 440 GB"), ("", 0, "CPU only, 36 vCPU, 440 GB"),
            ("A100", 2, "2x A100, 36 vCPU, 440 GB"), ("H100", 8, "8x H100, 96 vCPU, 1 TB")]
BATCH = 2000


def experiment(i: int) -> Experiment:
    gpu_type, gpu_count, hardware = HARDWARE[i % len(HARDWARE)]
    agent, _ = Agent.objects.get_or_create(name=f"{PREFIX}agent-{i // 8:02d}", defaults={"scaffold": "synthetic"})
    model, _ = LanguageModel.objects.get_or_create(name=f"{PREFIX}model-{i // 4 % 2}")
    made, _ = Experiment.objects.get_or_create(
        agent=agent, model=model, hardware=hardware, time_limit_hours=24.0, settings_hash="",
        defaults={"gpu_type": gpu_type, "gpu_count": gpu_count, "cpu_count": 36, "memory_gb": 440,
                  "name": f"{PREFIX}{agent.name} + {model.name} ({hardware})"})
    return made


def _humans(split: str) -> list[tuple[int, str, list[float] | None, medals.Thresholds | None]]:
    out = []
    for competition in stats.resolve_split(split).competitions.order_by("slug"):
        scores = list(competition.human_scores.order_by("position").values_list("score", flat=True))
        # Best first to draw from, ascending for medals.place (sorting a sorted list is cheap).
        out.append((competition.pk, competition.slug, (scores, sorted(scores)) if scores else None,
                    competition.thresholds()))
    return out


def add_runs(*, experiments: range, seeds: range, split: str = "all") -> int:
    """Graded runs of experiments x the split's competitions x seeds; returns how many were made."""
    humans = _humans(split)
    rows = []
    for i in experiments:
        made = experiment(i)
        skill = np.random.default_rng(i).uniform(0.2, 0.8)  # the experiment's typical share of humans beaten
        for s in seeds:
            rng = np.random.default_rng([i, s])
            for pk, slug, scores, thresholds in humans:
                rows.append(_run(rng, made, pk, slug, s, skill, scores, thresholds))
    Run.objects.bulk_create(rows, batch_size=BATCH)
    return len(rows)


def _run(rng, made: Experiment, pk: int, slug: str, seed: int, skill: float, scores, thresholds) -> Run:
    run = Run(experiment=made, competition_id=pk, task_name=slug, seed=seed, status=Run.Status.GRADED,
              origin=Run.Origin.IMPORT, submission_exists=True, notes=NOTE,
              verification=Run.Verification.VERIFIED if rng.random() < 0.9 else Run.Verification.SELF_REPORTED,
              duration_s=float(rng.uniform(600, 86400)), cost_usd=round(float(rng.uniform(0.5, 40)), 2),
              tokens_in=int(rng.integers(10**5, 10**7)), tokens_out=int(rng.integers(10**4, 10**6)),
              n_steps=int(rng.integers(20, 2000)))
    if rng.random() < 0.08:  # an invalid submission: no score, no medal
        return run
    beaten = float(np.clip(rng.normal(skill, 0.25), 0, 1))
    if scores is None:
        run.score, run.valid_submission = float(rng.random()), True
        return run
    best_first, ascending = scores
    run.score, run.valid_submission = float(best_first[round((1 - beaten) * (len(best_first) - 1))]), True
    run.set_medals(medals.award(run.score, thresholds))
    placing = medals.place(run.score, ascending, thresholds.is_lower_better)
    run.human_rank, run.beats_human_pct = placing.rank, placing.beats_pct
    return run


def clear() -> None:
    Experiment.objects.filter(agent__name__startswith=PREFIX).delete()


KINDS = ["plan", "code", "command", "observation", "score", "llm"]


def add_replay_run(steps: int) -> int:
    """One synthetic run with a trajectory of `steps` mixed steps (for replay pages); returns its id."""
    from django.db import transaction

    from leaderboard.trajectories.importers.base import StepData
    from leaderboard.trajectories.store import write_steps

    def step(i: int):
        kind = KINDS[i % len(KINDS)]
        data = {"code": {"file": "train.py", "content": "import pandas as pd\n" * 20, "diff": "+x = 1\n-x = 0"},
                "command": {"command": "python train.py", "stdout": "epoch loss\n" * 30, "exit_code": 0},
                "score": {"metric": "accuracy", "value": 0.5 + (i % 100) / 1000}}.get(kind, {})
        return StepData(index=i, kind=kind, t=i * 0.5, title=f"{kind} {i}", text=f"synthetic step {i} " * 30,
                         data=data, score=data.get("value"), parent_index=(i - 1) // 2 if kind == "code" else None)

    with transaction.atomic():
        run = Run.objects.create(experiment=experiment(0), competition=None, task_name="synthetic-replay",
                                 seed=1000, status=Run.Status.GRADED, notes=NOTE, n_steps=steps)
        write_steps(run, (step(i) for i in range(steps)))
    return run.pk
