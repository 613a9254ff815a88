"""How trajectory reads grow with the trajectory's length (a benchmark, not a test).

    DEBUG=true .venv/bin/python benchmarks/trajectory_scale.py [--sizes 10000,100000,300000] [--repeat 7]

Creates a throwaway test database and, for each size, one run of that many generated steps (about
1 KB each: 1,000,000 steps is a 1 GB file, so the default stops at 300,000 on a small machine). One
step in the middle holds a rare phrase. Then it times, with the Django test client on the test side
of the request, the replay page, the window around the last step, the steps API, and searches: a
rare phrase, a phrase that matches nothing, the first page of a common phrase, a common phrase with
`around=` near the end, and a needle too short for the search index. For each it prints the median
server time, the queries, the StepBlock rows read and the bytes read from the trajectory file, and
the growth against the smallest size (the baseline, measured in the same run): flat is the target.
Times are the best of --repeat (and the median); the counts do not depend on the machine's load.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.test_settings")

import django  # noqa: E402

django.setup()

from django.core.files.storage import default_storage  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext, setup_test_environment  # noqa: E402

from benchmarks.replay_page import step  # noqa: E402
from leaderboard.models import Agent, Experiment, LanguageModel, Run  # noqa: E402
from leaderboard.trajectories.importers.base import StepData  # noqa: E402
from leaderboard.trajectories.store import block_index, reading, write_steps  # noqa: E402

RARE = "quokka zanzibar"


def steps(n: int):
    for i in range(n):
        s: StepData = step(i)
        if i == n // 2:
            s.text += f" a {RARE} here"
        yield s


def make_run(n: int) -> Run:
    agent, _ = Agent.objects.get_or_create(name="bench-agent")
    model, _ = LanguageModel.objects.get_or_create(name="bench-model")
    experiment, _ = Experiment.objects.get_or_create(agent=agent, model=model)
    run = Run.objects.create(experiment=experiment, n_steps=n)
    write_steps(run, steps(n))
    return run


class Counters:
    """Bytes read from trajectory files and StepBlock rows read, by the requests of this process."""

    def __init__(self) -> None:
        self.bytes = self.rows = 0
        original_read, original_fetch = reading.read_block, block_index.BlockIndex._fetch

        def read_block(*args, **kwargs):
            raw = original_read(*args, **kwargs)
            self.bytes += len(raw)
            return raw

        def fetch(index, rows):
            blocks = original_fetch(index, rows)
            self.rows += len(blocks)
            return blocks

        self.patches = [mock.patch.object(reading, "read_block", read_block),
                        mock.patch.object(block_index.BlockIndex, "_fetch", fetch)]
        for patch in self.patches:
            patch.start()


def timed(client: Client, url: str, repeat: int, counters: Counters) -> dict:
    response = client.get(url)  # warm caches, templates and the connection
    assert response.status_code == 200, (url, response.status_code)
    samples = []
    for _ in range(repeat):
        counters.bytes = counters.rows = 0
        with CaptureQueriesContext(connection) as queries:
            began = time.perf_counter()
            response = client.get(url)
            samples.append((time.perf_counter() - began) * 1000)
    return {"ms": min(samples), "median_ms": statistics.median(samples), "queries": len(queries), "rows": counters.rows,
            "read": counters.bytes, "bytes": len(response.content)}


def requests(run: Run, n: int) -> list[tuple[str, str]]:
    last, api = n - 1, f"/api/runs/{run.pk}/steps/"
    return [
        ("replay page", f"/runs/{run.pk}/"),
        ("window around last step", f"/runs/{run.pk}/steps/?around={last}"),
        ("API page around last step", f"{api}?around={last}"),
        ("API scores around last step", f"{api}?type=score&around={last}"),
        ("search: rare phrase", f"{api}?q={RARE.replace(' ', '%20')}"),
        ("search: no match", f"{api}?q=no%20such%20phrase%20anywhere"),
        ("search: common, first page", f"{api}?q=epoch%20loss"),
        ("search: common, around end", f"{api}?q=epoch%20loss&around={last - 500}"),
        ("search: short needle 'ep'", f"{api}?q=ep"),
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000,300000")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    setup_test_environment()
    old_name = connection.creation.create_test_db(verbosity=0)
    counters = Counters()
    results: dict[int, dict[str, dict]] = {}
    try:
        for n in sizes:
            began = time.perf_counter()
            run = make_run(n)
            size = default_storage.size(run.trajectory.file)
            print(f"created {n:,} steps ({size / 1e6:,.0f} MB) in {time.perf_counter() - began:.1f} s "
                  f"({connection.vendor})", flush=True)
            client = Client()
            results[n] = {label: timed(client, url, args.repeat, counters) for label, url in requests(run, n)}
            run.delete()  # and its files
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    report(sizes, results)


def report(sizes: list[int], results: dict[int, dict[str, dict]]) -> None:
    base = sizes[0]
    print(f"\nbest server time of the repeats (ms; median in brackets: this machine may be shared), queries, "
          f"StepBlock rows read, trajectory bytes read; growth = best time x the {base:,}-step run's")
    for label in results[base]:
        cells = []
        for n in sizes:
            r = results[n][label]
            growth = r["ms"] / results[base][label]["ms"]
            cells.append(f"{n:>9,}: {r['ms']:6.1f} ({r['median_ms']:6.1f}) ms {growth:5.2f}x {r['queries']:2d} q "
                         f"{r['rows']:3d} rows {r['read'] / 1e6:5.2f} MB")
        print(f"{label:28} " + " | ".join(cells))


if __name__ == "__main__":
    main()
