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

from leaderboard import stats
from leaderboard.models import Agent, Experiment, LanguageModel, Run, Snapshot
from leaderboard.snapshots import timeline_text

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
    runs = []
    for experiment in made:
        skill = rng.uniform(0.05, 0.6)
        for s in range(seeds):
            medals = rng.random(len(competitions)) < skill
            runs += [Run(experiment=experiment, competition_id=c, task_name="synthetic", seed=s,
                         status=Run.Status.GRADED, submission_exists=True, valid_submission=True,
                         any_medal=bool(m), bronze_medal=bool(m), duration_s=time_limit_hours * 3600, notes=NOTE)
                     for c, m in zip(competitions, medals, strict=True)]
    Run.objects.bulk_create(runs, batch_size=BATCH)
    rows = []
    times = [time_limit_hours * 3600 * (i + 1) / snapshots for i in range(snapshots)]
    for run in runs:
        # A medal at the end is reached at some snapshot; without one, early snapshots may still be invalid.
        reached = rng.integers(0, snapshots) if run.any_medal else snapshots
        valid = rng.random(snapshots) > 0.1
        rows += [Snapshot(run=run, elapsed_seconds=t, status=Snapshot.Status.GRADED, submission_exists=True,
                          valid_submission=bool(valid[i] or i >= reached), any_medal=bool(i >= reached),
                          bronze_medal=bool(i >= reached), grading_report={"synthetic": True})
                 for i, t in enumerate(times)]
    Snapshot.objects.bulk_create(rows, batch_size=BATCH)
    for run, start in zip(runs, range(0, len(rows), snapshots), strict=True):
        run.snapshot_timeline = timeline_text((s.elapsed_seconds, s.any_medal) for s in rows[start:start + snapshots])
    Run.objects.bulk_update(runs, ["snapshot_timeline"], batch_size=BATCH)
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
