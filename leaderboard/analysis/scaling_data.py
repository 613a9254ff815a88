"""A seeded SYNTHETIC data set for measuring the scaling curves' speed (`manage.py make_scaling_data`,
`benchmarks/curves.py`): E experiments x C competitions x S seeds, each run with N snapshots.

Every agent is named `synthetic-agent-<n>` and every model `synthetic-model-<n>`, every run's notes say
it is synthetic, and no file is stored or graded: the runs' and snapshots' grades are written directly
(drawn from a seeded generator). They say nothing about any real agent; delete them with `--clear`.
Experiments come in fours that differ only in hardware, so the hardware chart has groups to draw."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.db import transaction

from leaderboard.analysis import stats
from leaderboard.analysis.scaling import timeline_text
from leaderboard.models import Agent, Experiment, LanguageModel, Run, Snapshot

PREFIX = "synthetic-"
NOTE = "synthetic: made by manage.py make_scaling_data for speed measurements; not a real result"
HARDWARE = [("", 0, "CPU only, 36 vCPU, 440 GB"), ("A10", 1, "1x A10, 36 vCPU, 440 GB"),
            ("A100", 2, "2x A100, 36 vCPU, 440 GB"), ("H100", 8, "8x H100, 96 vCPU, 1 TB")]
BATCH = 5000


@dataclass
class Made:
    experiments: int
    runs: int
    snapshots: int


@transaction.atomic
def make(*, experiments: int = 100, split: str = "all", seeds: int = 8, snapshots: int = 4,
         time_limit_hours: float = 24.0, seed: int = 0) -> Made:
    """Create the data set on the split's competitions (all of them, e.g. 75 for `all`)."""
    rng = np.random.default_rng(seed)
    competitions = list(stats.resolve_split(split).competitions.values_list("id", flat=True))
    made = [_experiment(i, time_limit_hours) for i in range(experiments)]
    times = [time_limit_hours * 3600 * (i + 1) / snapshots for i in range(snapshots)]
    runs, plans = [], []
    for experiment in made:
        skill = rng.uniform(0.05, 0.6)
        for s in range(seeds):
            medals = rng.random(len(competitions)) < skill
            for c, medal in zip(competitions, medals, strict=True):
                # A medal at the end is reached at some snapshot and kept; early snapshots may be invalid.
                reached = int(rng.integers(0, snapshots)) if medal else snapshots
                plan = [(t, i >= reached, bool(v) or i >= reached)
                        for i, (t, v) in enumerate(zip(times, rng.random(snapshots) > 0.1, strict=True))]
                plans.append(plan)
                runs.append(Run(experiment=experiment, competition_id=c, task_name="synthetic", seed=s,
                                status=Run.Status.GRADED, submission_exists=True, valid_submission=True,
                                any_medal=bool(medal), bronze_medal=bool(medal), duration_s=time_limit_hours * 3600,
                                notes=NOTE, snapshot_timeline=timeline_text((t, m) for t, m, _ in plan)))
    Run.objects.bulk_create(runs, batch_size=BATCH)
    rows = [Snapshot(run=run, elapsed_seconds=t, status=Snapshot.Status.GRADED, submission_exists=True,
                     valid_submission=valid, any_medal=medal, bronze_medal=medal, grading_report={"synthetic": True})
            for run, plan in zip(runs, plans, strict=True) for t, medal, valid in plan]
    Snapshot.objects.bulk_create(rows, batch_size=BATCH)
    return Made(experiments=len(made), runs=len(runs), snapshots=len(rows))


def _experiment(i: int, time_limit_hours: float) -> Experiment:
    gpu_type, gpu_count, hardware = HARDWARE[i % len(HARDWARE)]
    agent, _ = Agent.objects.get_or_create(name=f"{PREFIX}agent-{i // (2 * len(HARDWARE)):02d}")
    model, _ = LanguageModel.objects.get_or_create(name=f"{PREFIX}model-{i // len(HARDWARE) % 2}")
    experiment, _ = Experiment.objects.get_or_create(
        agent=agent, model=model, hardware=hardware, time_limit_hours=time_limit_hours, settings_hash="",
        defaults={"gpu_type": gpu_type, "gpu_count": gpu_count, "cpu_count": 36, "memory_gb": 440,
                  "name": f"{PREFIX}{agent.name} + {model.name} ({hardware})"},
    )
    return experiment


def clear() -> int:
    """Delete every synthetic experiment (and so its runs and snapshots); returns how many."""
    experiments = Experiment.objects.filter(agent__name__startswith=PREFIX, runs__notes=NOTE).distinct()
    ids = list(experiments.values_list("id", flat=True))
    Experiment.objects.filter(id__in=ids).delete()
    return len(ids)
