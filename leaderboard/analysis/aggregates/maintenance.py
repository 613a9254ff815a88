"""Keeping the leaderboard aggregates in step with the runs, in the transaction that changes them.

The unit is a key (experiment, seed): `refresh` deletes its SeedAggregate rows (every split, every
audience) and computes them again from that experiment-seed's GRADED runs, read through the runs'
(experiment, competition, seed) index. Run.save/delete and RunQuerySet.update/delete/bulk_create/
bulk_update call it with the keys they touch, old and new (leaderboard.models); a change of a
split's competitions refreshes the keys with runs in them (`split_membership_changed`). `rebuild`
computes every row with the same code, in one pass over the runs.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import NamedTuple

from django.db import transaction
from django.db.models import Value

from leaderboard.analysis.aggregates.models import Audience, LeaderboardVersion, SeedAggregate
from leaderboard.analysis.versions import SeedStates
from leaderboard.models.changes import FLAGS

BATCH = 2000
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
GRADED, VERIFIED = "graded", "verified"  # Run.Status.GRADED, Run.Verification.VERIFIED


class RunRow(NamedTuple):
    id: int
    created_at: object
    experiment_id: int
    seed: int
    competition_id: int
    competition_version: int
    is_private: bool
    verification: str
    gold_medal: bool
    silver_medal: bool
    bronze_medal: bool
    above_median: bool
    valid_submission: bool
    any_medal: bool
    cost_usd: float | None
    tokens_in: int | None
    tokens_out: int | None
    usage_metered: bool
    is_demo: bool


def audiences(run: RunRow) -> list[str]:
    """The audiences that see a run: staff see every run, everyone else the public ones."""
    seen = [Audience.ALL] if run.is_private else [Audience.ALL, Audience.PUBLIC]
    if run.verification == VERIFIED and not run.is_demo:  # a demo run's synthetic answers verify nothing
        seen += [Audience.of(everyone=a == Audience.ALL, verified_only=True) for a in seen]
    return seen


def refresh(keys: Iterable[tuple[int, int]], *, apps=None) -> None:
    """Recompute the rows of these (experiment id, seed) keys (and of the few other keys in their
    product, when several are given at once)."""
    keys = set(keys)
    if not keys:
        return
    Run, Aggregate, Membership, Experiment = _models(apps)
    experiments, seeds = sorted({e for e, _ in keys}), sorted({s for _, s in keys})
    with transaction.atomic():
        # One refresher per experiment at a time, so two transactions never interleave a delete and
        # an insert of the same rows; FOR NO KEY UPDATE does not block adding runs to it.
        list(Experiment.objects.select_for_update(no_key=True).filter(pk__in=experiments)
             .order_by("pk").values_list("pk", flat=True))
        _bump(apps)  # after the experiments' rows, as an experiment's save and its signal go
        Aggregate.objects.filter(experiment_id__in=experiments, seed__in=seeds).delete()
        runs = Run.objects.filter(experiment_id__in=experiments, seed__in=seeds)
        Aggregate.objects.bulk_create(compute(runs, Membership, Aggregate), batch_size=BATCH)


def rebuild(*, apps=None) -> int:
    """Every row again from the runs (manage.py rebuild_leaderboard); returns how many there are."""
    Run, Aggregate, Membership, _ = _models(apps)
    with transaction.atomic():
        _bump(apps)
        Aggregate.objects.all().delete()
        rows = compute(Run.objects.all(), Membership, Aggregate)
        Aggregate.objects.bulk_create(rows, batch_size=BATCH)
    return len(rows)


def split_membership_changed(competition_ids: Iterable[int]) -> None:
    """A split gained or lost these competitions: refresh every key with a graded run in them."""
    from leaderboard.models import Run

    runs = Run.objects.filter(status=GRADED, competition_id__in=list(competition_ids))
    refresh(runs.values_list("experiment_id", "seed").distinct())


def compute(runs, membership_model, aggregate_model=SeedAggregate) -> list[SeedAggregate]:
    """The rows of the GRADED runs among `runs`: per audience and split, the latest run (by created_at,
    id) of each experiment, seed and competition, summed up; one row per version signature of the
    seed (leaderboard.analysis.versions), so versions of a competition are never counted together."""
    splits_of: dict[int, list[int]] = defaultdict(list)
    for competition_id, split_id in membership_model.objects.values_list("competition_id", "split_id"):
        splits_of[competition_id].append(split_id)
    states: dict[tuple, SeedStates] = defaultdict(SeedStates)  # (experiment, seed, audience, split)
    graded = _versioned(runs.filter(status=GRADED, competition_id__in=list(splits_of)).order_by("created_at", "id"))
    for values in graded.values_list(*RunRow._fields).iterator(chunk_size=BATCH):
        run = RunRow(*values)
        for audience in audiences(run):
            for split_id in splits_of[run.competition_id]:
                states[(run.experiment_id, run.seed, audience, split_id)].add(run)
    # Audiences often count the very same runs (no private ones, all verified): sum those up once.
    sums: dict[tuple, dict] = {}
    rows = []
    fields = {f.name for f in aggregate_model._meta.get_fields()}  # an older migration's model has fewer
    for (experiment_id, seed, audience, split_id), seed_states in states.items():
        for versions, by_competition in seed_states.states.items():
            counted = list(by_competition.values())
            same = (split_id, *(run.id for run in counted))
            if same not in sums:
                sums[same] = {name: value for name, value in _sums(counted).items() if name in fields}
            earliest = seed_states.firsts[versions]
            keyed = {"versions": versions} if versions else {}  # an older migration's model has none
            rows.append(aggregate_model(
                experiment_id=experiment_id, split_id=split_id, seed=seed, audience=audience, **keyed,
                **sums[same], first_run_at_us=microseconds(earliest.created_at), first_run_id=earliest.id))
    return rows


def _versioned(runs):
    """The runs with their competition version and usage_metered; inside a migration older than a
    field, every run's competition version is 1 and none is metered."""
    names = {f.name for f in runs.model._meta.get_fields()}
    defaults = {"competition_version": Value(1), "usage_metered": Value(False)}
    missing = {name: value for name, value in defaults.items() if name not in names}
    return runs.annotate(**missing) if missing else runs


def _sums(runs: list[RunRow]) -> dict:
    """What a SeedAggregate holds of these runs (one per competition of a split)."""
    costs = [r.cost_usd for r in runs if r.cost_usd is not None]
    tokens = [float((r.tokens_in or 0) + (r.tokens_out or 0)) for r in runs
              if r.tokens_in is not None or r.tokens_out is not None]
    return {
        "competitions": len(runs), **{flag: sum(getattr(r, flag) for r in runs) for flag in FLAGS},
        "cost_sum": exact_sum(costs), "cost_known": len(costs), "tokens_sum": exact_sum(tokens),
        "tokens_known": len(tokens), **usage_counts(runs),
        "self_reported": sum(r.verification != VERIFIED for r in runs),
        "demo": sum(r.is_demo for r in runs),
        "medal_competitions": ",".join(str(c) for c in sorted(r.competition_id for r in runs if r.any_medal)),
    }


def usage_counts(runs) -> dict[str, int]:
    """How many of these runs have a cost or token figure, and how many of those the gateway metered."""
    known = [r for r in runs if r.cost_usd is not None or r.tokens_in is not None or r.tokens_out is not None]
    return {"usage_known": len(known), "usage_metered": sum(bool(r.usage_metered) for r in known)}


def microseconds(moment: datetime) -> int:
    """A timezone-aware time as whole microseconds since 1970 (exact, and ordered as the times are)."""
    return (moment - EPOCH) // timedelta(microseconds=1)


def exact_sum(values: list[float]) -> str:
    """The exact sum of floats as "numerator/denominator", the denominator a power of two (a
    non-finite value: the float sum)."""
    if not all(math.isfinite(v) for v in values):
        return repr(math.fsum(values))
    numerator, denominator = 0, 1
    for value in values:
        n, d = value.as_integer_ratio()
        if d > denominator:
            numerator, denominator = numerator * (d // denominator), d
        numerator += n * (denominator // d)
    return f"{numerator}/{denominator}"


def mean_of_sums(sums: Iterable[str], n: int) -> float | None:
    """statistics.fmean of the values behind these exact sums (n of them): the correctly rounded
    total, divided by n, as fmean computes it."""
    if n == 0:
        return None
    parts = [text.split("/") for text in sums]
    if any(len(p) == 1 for p in parts):
        return math.fsum(float(p[0]) if len(p) == 1 else int(p[0]) / int(p[1]) for p in parts) / n
    denominator = max(int(d) for _, d in parts)  # powers of two: the largest is a common one
    return sum(int(num) * (denominator // int(d)) for num, d in parts) / denominator / n


def _bump(apps) -> None:
    """Raise the leaderboard's version in this transaction (leaderboard.analysis.page_cache); a migration's
    rebuild runs before the version exists and before anything is cached."""
    if apps is None:
        LeaderboardVersion.bump()


def _models(apps):
    """The models, or their historical versions inside a migration."""
    if apps is None:
        from leaderboard.models import Competition, Experiment, Run
    else:
        Run, Competition, Experiment = (apps.get_model("leaderboard", name)
                                        for name in ("Run", "Competition", "Experiment"))
    aggregate = SeedAggregate if apps is None else apps.get_model("leaderboard", "SeedAggregate")
    return Run, aggregate, Competition.splits.through, Experiment
