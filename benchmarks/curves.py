"""Time the scaling curves' JSON endpoints on the full-size SYNTHETIC data set (a benchmark, not a test).

    DEBUG=true .venv/bin/python benchmarks/curves.py [--experiments 100] [--seeds 8] [--snapshots 4] [--repeat 5]

Creates a throwaway test database with the catalogue and `manage.py make_scaling_data`'s data set
(100 experiments x the 75 competitions of split 'all' x 8 seeds, 4 snapshots per run: 60,000 runs,
240,000 snapshots, all labelled synthetic), then times each curve endpoint with the Django test
client (server time, median of --repeat after a warm-up) and counts its queries. The baseline, measured
in the same run, is the floor every curve pays: reading the rows it needs (the graded runs of the split,
each with its snapshot timeline) from the database cursor, with no aggregation. Times are the median
wall clock and the median CPU time of this process (server and SQLite alike run in it), since a
shared machine can stretch the wall clock.
Target: every curve under 1 s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.test_settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext, setup_test_environment  # noqa: E402

from leaderboard.analysis import scaling_data, stats  # noqa: E402
from leaderboard.analysis.scaling import RunPoint, rows_of  # noqa: E402
from leaderboard.competitions.catalogue import import_catalogue  # noqa: E402
from leaderboard.models import Run  # noqa: E402

CURVES = {"time": "/api/scaling/time/?split=all", "pass-at-k": "/api/scaling/pass-at-k/?split=all",
          "hardware": "/api/scaling/hardware/?split=all"}


def timed(fn, repeat: int) -> tuple[float, float, int]:
    """Median wall and CPU seconds (the machine may be shared: CPU time is what this process spent)."""
    fn()  # warm caches and the connection
    walls, cpus = [], []
    for _ in range(repeat):
        with CaptureQueriesContext(connection) as queries:
            wall, cpu = time.perf_counter(), time.process_time()
            fn()
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus), len(queries)


def floor() -> None:
    """Read what every curve needs and nothing more: the split's runs (with their snapshot timelines)."""
    ids = list(stats.resolve_split("all").competitions.values_list("id", flat=True))
    runs = Run.objects.filter(status=Run.Status.GRADED, is_private=False, competition_id__in=ids)
    rows_of(runs.values_list(*RunPoint._fields))


def get(client: Client, url: str) -> None:
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--experiments", type=int, default=100)
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--snapshots", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    setup_test_environment()
    old_name = connection.creation.create_test_db(verbosity=0)
    try:
        import_catalogue(Path(settings.CATALOGUE_DIR))
        began = time.perf_counter()
        made = scaling_data.make(experiments=args.experiments, seeds=args.seeds, snapshots=args.snapshots)
        print(f"data set: {made.experiments} experiments, {made.runs:,} runs, {made.snapshots:,} snapshots "
              f"(synthetic) made in {time.perf_counter() - began:.1f} s on {connection.vendor}")
        client = Client()
        base_wall, base_cpu, _ = timed(floor, args.repeat)
        print(f"baseline (read the split's runs only): {base_wall * 1000:.0f} ms wall, {base_cpu * 1000:.0f} ms CPU")
        print(f"{'curve':<10} {'wall ms':>8} {'CPU ms':>7} {'queries':>8} {'x baseline (CPU)':>17}  target < 1000 ms")
        for name, url in CURVES.items():
            wall, cpu, queries = timed(lambda url=url: get(client, url), args.repeat)
            verdict = "ok" if wall < 1 else ("ok (CPU)" if cpu < 1 else "SLOW")
            print(f"{name:<10} {wall * 1000:>8.0f} {cpu * 1000:>7.0f} {queries:>8} {cpu / base_cpu:>16.2f}x  {verdict}")
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
