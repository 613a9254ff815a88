"""The scaling curves' numbers (time budget, pass@k with its bootstrap, hardware groups), each computed
here independently on a small seeded synthetic run set and matched to the JSON API."""

from __future__ import annotations

import csv
import io
import itertools
import math
import random
import statistics

import numpy as np
import pytest
from rest_framework.test import APIClient

from leaderboard.analysis import scaling
from leaderboard.models import Agent, Benchmark, Competition, Experiment, LanguageModel, Run, Snapshot, Split
from leaderboard.runs import snapshots

SEEDS = range(4)


@pytest.fixture
def world(db, catalogue, bob):
    return make_world(bob)


def make_world(private_owner) -> dict:
    """3 competitions in a test split; 5 experiments (four differ only in hardware); seeded runs with
    snapshots; seed 3 of the first experiment incomplete; one re-run that replaces an earlier run;
    one private run of `private_owner`'s that the public never sees."""
    rng = random.Random(7)
    split = Split.objects.create(benchmark=Benchmark.objects.get(slug="mle-bench"), slug="tiny-test", name="Tiny")
    competitions = list(Competition.objects.filter(benchmark__slug="mle-bench", n_teams__gt=0).order_by("slug")[:3])
    split.competitions.set(competitions)
    agent, other = Agent.objects.create(name="synthetic-a"), Agent.objects.create(name="synthetic-b")
    model = LanguageModel.objects.create(name="synthetic-model")
    hardware = [("1x A100", "A100", 1), ("2x A100", "A100", 2), ("CPU only", "", 0), ("1x H100", "H100", 1)]
    experiments = [Experiment.objects.create(agent=agent, model=model, hardware=h, gpu_type=t, gpu_count=g,
                                             cpu_count=8, memory_gb=64, time_limit_hours=24) for h, t, g in hardware]
    experiments.append(Experiment.objects.create(agent=other, model=model, hardware="1x A100", gpu_type="A100",
                                                 gpu_count=1, time_limit_hours=None))
    for e_index, experiment in enumerate(experiments):
        for seed in SEEDS:
            for c_index, competition in enumerate(competitions):
                if e_index == 0 and seed == 3 and c_index == 2:
                    continue  # an incomplete seed
                _run(rng, experiment, competition, seed)
    _run(rng, experiments[1], competitions[0], 0)  # a re-run: the latest one counts
    _run(rng, experiments[0], competitions[1], 1, owner=private_owner, is_private=True)
    return {"split": split, "competitions": competitions, "experiments": experiments}


def _run(rng, experiment, competition, seed, **extra) -> Run:
    run = Run.objects.create(
        experiment=experiment, competition=competition, task_name=competition.slug, seed=seed,
        status=Run.Status.GRADED, any_medal=rng.random() < 0.4, valid_submission=True,
        duration_s=rng.choice([None, rng.uniform(3600, 20 * 3600)]), **extra,
    )
    for seconds in sorted(rng.sample(range(600, 24 * 3600, 600), rng.choice([0, 0, 2, 4]))):
        valid = rng.random() > 0.2
        Snapshot.objects.create(run=run, elapsed_seconds=float(seconds), status=Snapshot.Status.GRADED,
                                valid_submission=valid, any_medal=valid and rng.random() < 0.5)
    Snapshot.objects.create(run=run, elapsed_seconds=1.0, status=Snapshot.Status.PENDING, any_medal=True)
    snapshots.refresh_timeline(run.pk)
    return run


def _public_runs(world) -> list[Run]:
    runs = Run.objects.filter(is_private=False, status=Run.Status.GRADED, competition__in=world["competitions"])
    return list(runs.order_by("id"))


def _latest(runs, experiment) -> dict[int, dict[int, Run]]:
    grid: dict[int, dict[int, Run]] = {}
    for run in runs:
        if run.experiment_id == experiment.pk:
            grid.setdefault(run.seed, {})[run.competition_id] = run  # ids ascend: the later one wins
    return grid


def _complete(grid, n) -> list[int]:
    return sorted(seed for seed, row in grid.items() if len(row) == n)


def _mean_sem(values):
    mean = statistics.fmean(values) if values else None
    sem = statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else None
    return mean, sem


def _get(path, **params):
    response = APIClient().get(path, params)
    assert response.status_code == 200, response.content
    return response.json()


def _brute_medal(run: Run, budget_h: float) -> bool:
    snaps = [s for s in Snapshot.objects.filter(run=run, status="graded") if s.elapsed_seconds <= budget_h * 3600]
    if Snapshot.objects.filter(run=run, status="graded").exists():
        return max(snaps, key=lambda s: s.elapsed_seconds).any_medal if snaps else False
    start = run.duration_s if run.duration_s is not None else (
        run.experiment.time_limit_hours * 3600 if run.experiment.time_limit_hours is not None else 0.0)
    return run.any_medal if start <= budget_h * 3600 else False


@pytest.mark.parametrize("pad", [False, True])
def test_time_curve_matches_brute_force_over_snapshots(world, pad):
    hours = [0.5, 1, 2, 4, 8, 12, 24, 30]
    data = _get("/api/scaling/time/", split="tiny-test", hours=",".join(map(str, hours)), pad=str(pad).lower())
    assert data["split"] == "tiny-test" and data["hours"] == hours
    runs, n = _public_runs(world), len(world["competitions"])
    by_id = {e["experiment_id"]: e for e in data["experiments"]}
    assert set(by_id) == {e.pk for e in world["experiments"]}
    for experiment in world["experiments"]:
        grid = _latest(runs, experiment)
        seeds = sorted(grid) if pad else _complete(grid, n)
        got = by_id[experiment.pk]
        assert set(got) == {"experiment_id", "agent", "model", "hardware", "time_limit_hours", "n_seeds", "points"}
        assert got["n_seeds"] == len(seeds) and got["hardware"] == experiment.hardware
        for point, budget in zip(got["points"], hours, strict=True):
            shares = [100 * sum(_brute_medal(r, budget) for r in grid[s].values()) / n for s in seeds]
            mean, sem = _mean_sem(shares)
            assert set(point) == {"hours", "budget", "any_medal_pct", "any_medal_sem", "n_seeds",
                                  "runs_with_pending_snapshots", "runs_with_failed_snapshots"}
            assert point["hours"] == budget and point["n_seeds"] == len(seeds)
            assert point["any_medal_pct"] == pytest.approx(mean, abs=0.006)
            assert point["any_medal_sem"] == (None if sem is None else pytest.approx(sem, abs=0.006))
    assert by_id[world["experiments"][0].pk]["n_seeds"] == (4 if pad else 3)


def test_time_curve_default_budgets_are_the_snapshot_times_up_to_the_limit(world):
    """The moments a counted grade can change: snapshot times, durations of runs without snapshots, and
    the time limits, in exact seconds (rounding them to 4 decimals of an hour put a budget before its
    own snapshot, which then did not count at it)."""
    data = _get("/api/scaling/time/", split="tiny-test")
    public = Run.objects.filter(is_private=False, status="graded", competition__in=world["competitions"])
    with_snapshots = set(Snapshot.objects.filter(status="graded", run__in=public).values_list("run_id", flat=True))
    expected = {s.elapsed_seconds for s in Snapshot.objects.filter(status="graded", run__in=public)} | {24 * 3600.0}
    expected |= {r.duration_s for r in public if r.duration_s is not None and r.pk not in with_snapshots}
    expected = sorted(t for t in expected if t <= 24 * 3600)
    if len(expected) > scaling.MAX_BUDGETS:
        step = (len(expected) - 1) / (scaling.MAX_BUDGETS - 1)
        expected = [expected[round(i * step)] for i in range(scaling.MAX_BUDGETS)]
    assert data["hours"] == [t / 3600 for t in expected] and data["hours"][-1] == 24.0
    assert data["time_unit"] == {"name": "hours", "seconds": 3600.0}


def _pass_at_k_by_subsets(n: int, c: int, k: int) -> float:
    """The share of k-subsets of n attempts (c successful) holding a success: what the estimator estimates."""
    attempts = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(attempts, k))
    return sum(any(s) for s in subsets) / len(subsets)


def test_pass_at_k_matches_subset_enumeration_and_the_numpy_bootstrap(world):
    data = _get("/api/scaling/pass-at-k/", split="tiny-test")
    runs, competitions = _public_runs(world), world["competitions"]
    by_id = {e["experiment_id"]: e for e in data["experiments"]}
    for experiment in world["experiments"]:
        grid = _latest(runs, experiment)
        seeds = _complete(grid, len(competitions))
        n = len(seeds)
        counts = [sum(grid[s][c.pk].any_medal for s in seeds) for c in sorted(competitions, key=lambda c: c.pk)]
        values = np.array([[_pass_at_k_by_subsets(n, c, k) for k in range(1, n + 1)] for c in counts])
        for row, c in zip(values, counts, strict=True):
            assert row == pytest.approx([1 - math.comb(n - c, k) / math.comb(n, k) for k in range(1, n + 1)])
        draws = np.random.default_rng(scaling.BOOTSTRAP_SEED).integers(0, len(counts), (scaling.BOOTSTRAP_SAMPLES,
                                                                                      len(counts)))
        means = values[draws].mean(axis=1)
        low, high = np.percentile(means, [2.5, 97.5], axis=0)
        got = by_id[experiment.pk]
        assert got["n_seeds"] == n and [p["k"] for p in got["points"]] == list(range(1, n + 1))
        for k, point in enumerate(got["points"]):
            assert set(point) == {"k", "pass_at_k_pct", "ci_low_pct", "ci_high_pct"}
            assert point["pass_at_k_pct"] == pytest.approx(100 * values[:, k].mean(), abs=0.006)
            assert point["ci_low_pct"] == pytest.approx(100 * low[k], abs=0.006)
            assert point["ci_high_pct"] == pytest.approx(100 * high[k], abs=0.006)
            assert point["ci_low_pct"] <= point["pass_at_k_pct"] <= point["ci_high_pct"]
    assert _get("/api/scaling/pass-at-k/", split="tiny-test") == data  # a fixed seed: reproducible


def test_hardware_groups_by_hand(world):
    e = world["experiments"]
    data = _get("/api/scaling/hardware/", split="tiny-test")
    groups = {(g["agent"], g["time_limit_hours"]): g for g in data["groups"]}
    assert set(groups) == {("synthetic-a", 24.0), ("synthetic-b", None)}
    # CPU only (0 GPUs), then 1 GPU: A100 before H100, then 2x A100.
    assert [x["experiment_id"] for x in groups[("synthetic-a", 24.0)]["experiments"]] == [e[2].pk, e[0].pk, e[3].pk,
                                                                                           e[1].pk]
    assert [x["experiment_id"] for x in groups[("synthetic-b", None)]["experiments"]] == [e[4].pk]
    runs, n = _public_runs(world), len(world["competitions"])
    for group in data["groups"]:
        assert group["model"] == "synthetic-model"
        for row in group["experiments"]:
            experiment = Experiment.objects.get(pk=row["experiment_id"])
            grid = _latest(runs, experiment)
            seeds = _complete(grid, n)
            mean, sem = _mean_sem([100 * sum(r.any_medal for r in grid[s].values()) / n for s in seeds])
            assert row["any_medal_pct"] == pytest.approx(mean, abs=0.006)
            assert row["any_medal_sem"] == pytest.approx(sem, abs=0.006)
            assert (row["gpu_type"], row["gpu_count"], row["cpu_count"], row["memory_gb"], row["n_seeds"]) == (
                experiment.gpu_type, experiment.gpu_count, experiment.cpu_count, experiment.memory_gb, len(seeds))


def test_experiments_picked_by_id_or_filters(world):
    e = world["experiments"]
    picked = _get("/api/scaling/pass-at-k/", split="tiny-test", experiment=f"{e[1].pk},{e[3].pk}")
    assert sorted(x["experiment_id"] for x in picked["experiments"]) == sorted([e[1].pk, e[3].pk])
    repeated = APIClient().get(f"/api/scaling/pass-at-k/?split=tiny-test&experiment={e[1].pk}&experiment={e[3].pk}")
    assert repeated.json() == picked
    by_agent = _get("/api/scaling/time/", split="tiny-test", agent="synthetic-b", hours="24")
    assert [x["experiment_id"] for x in by_agent["experiments"]] == [e[4].pk]
    by_hardware = _get("/api/scaling/hardware/", split="tiny-test", hardware="H100")
    assert [x["experiment_id"] for g in by_hardware["groups"] for x in g["experiments"]] == [e[3].pk]


def test_private_runs_count_only_for_their_owner(world, bob):
    private = Run.objects.get(is_private=True)
    replaced = Run.objects.filter(experiment=private.experiment, competition=private.competition, seed=private.seed,
                                  is_private=False).latest("id")
    private.snapshots.all().delete()
    snapshots.refresh_timeline(private.pk)
    Run.objects.filter(pk=private.pk).update(duration_s=0.0, any_medal=not _brute_medal(replaced, 24))
    public = _get("/api/scaling/time/", split="tiny-test", hours="24")
    client = APIClient()
    client.force_authenticate(bob)
    own = client.get("/api/scaling/time/", {"split": "tiny-test", "hours": "24"}).json()
    first = world["experiments"][0].pk
    assert public != own  # bob's private re-run replaces a public one in his view only
    assert [x for x in public["experiments"] if x["experiment_id"] != first] == \
           [x for x in own["experiments"] if x["experiment_id"] != first]


@pytest.mark.parametrize("params, field", [
    ({"hours": "1,two"}, "hours"), ({"hours": "-1"}, "hours"), ({"hours": "inf"}, "hours"),
    ({"experiment": "x"}, "experiment"), ({"split": "no-such-split"}, "split"),
])
def test_bad_parameters_are_a_400_with_a_reason(world, params, field):
    response = APIClient().get("/api/scaling/time/", {"split": "tiny-test", **params})
    assert response.status_code == 400 and field in response.json()


@pytest.mark.parametrize("kind", ["time", "pass-at-k", "hardware"])
def test_csv_holds_exactly_the_points_of_the_json(world, kind):
    data = _get(f"/api/scaling/{kind}/", split="tiny-test")
    response = APIClient().get(f"/api/scaling/{kind}/", {"split": "tiny-test", "format": "csv"})
    assert response.status_code == 200 and "attachment" in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert rows and len(rows) == len(scaling.csv_rows(data))
    value = {"time": "any_medal_pct", "pass-at-k": "pass_at_k_pct", "hardware": "any_medal_pct"}[kind]
    assert [r[value] for r in rows] == ["" if r[value] is None else str(r[value]) for r in scaling.csv_rows(data)]


@pytest.mark.parametrize("kind", ["time", "pass-at-k", "hardware"])
def test_each_curve_takes_a_constant_number_of_queries(world, kind, django_assert_max_num_queries):
    with django_assert_max_num_queries(6):
        APIClient().get(f"/api/scaling/{kind}/", {"split": "tiny-test"})


def test_medal_at_budget_rules():
    run = scaling.RunPoint(1, 1, 1, 0, True, None, "")
    assert scaling.run_timeline(run, [], None) == [(0.0, True)]
    assert scaling.run_timeline(run, [], 2.0) == [(7200.0, True)]
    assert scaling.run_timeline(run._replace(duration_s=60.0), [], 2.0) == [(60.0, True)]
    timeline = [(10.0, False), (20.0, True), (30.0, False)]
    assert [scaling.medal_at(timeline, t) for t in (5, 10, 19.9, 20, 29, 30, 99)] == [
        False, False, False, True, True, False, False]
    assert scaling.medals_at(timeline, [5, 10, 19.9, 20, 29, 30, 99]) == [
        scaling.medal_at(timeline, t) for t in (5, 10, 19.9, 20, 29, 30, 99)]
