"""The read side as the data grows: page cost at 1k, 10k and 100k runs (a benchmark, not a test).

    .venv/bin/python benchmarks/scale.py                   # 1k and 10k on SQLite (a few minutes)
    .venv/bin/python benchmarks/scale.py --sizes 1k,10k,100k --load-seconds 30 \\
        --database postgres://postgres@127.0.0.1:5432/medalboard_scale     # the issue's tables

Builds a throwaway site (its own SQLite file or a PostgreSQL database it creates and drops; DEBUG off)
with the MLE-bench catalogue and SYNTHETIC graded runs (benchmarks/support/synthetic.py: agents named
synthetic-..., notes saying so, medals from real human leaderboards by the site's own rules):
1k, 10k and 100k runs are 5, 50 and 50 experiments x the 75 competitions of `all` x 3, 3 and 27 seeds,
each size the previous one plus more experiments or seeds. Where the site has a command that rebuilds
the leaderboard aggregates (bulk_create bypasses what keeps them current), it runs after each load.

For each size: server time (Django's test client in-process, best of --repeat after one warm-up
request) and query count of `/`, `/?split=all`, `/api/leaderboard/?split=lite` and the first and last
page of `/api/runs/` (reached by following its cursor); where the site caches the leaderboard
(leaderboard.analysis.page_cache) those are cache hits, and `/` and the leaderboard API are timed again as
misses (the leaderboard's version raised before each request). The table ends with the growth ratio
largest/smallest: the issue's target is flat (within 1.5x). Then gunicorn (2 workers) at the largest
size: --clients concurrent readers of `/` for --load-seconds (0 skips it), then of a static
file the same server sends: the floor of a request through gunicorn here, measured in the same run.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from support import site  # noqa: E402

SIZES = {"1k": (5, 3), "10k": (50, 3), "100k": (50, 27)}  # experiments, seeds
PAGES = [("/ (Lite)", "/"), ("/?split=all", "/?split=all"),
         ("/api/leaderboard/?split=lite", "/api/leaderboard/?split=lite"),
         ("/api/runs/ first page", "/api/runs/"), ("/api/runs/ last page", None)]
MISSES = [("/ (Lite), cache miss", "/ (Lite)"),  # (label, the label in PAGES of the request)
          ("/api/leaderboard/?split=lite, cache miss", "/api/leaderboard/?split=lite")]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1k,10k", help="comma-separated, from 1k,10k,100k")
    parser.add_argument("--database", help="postgres://.../<throwaway db> (created and dropped); default SQLite")
    parser.add_argument("--repeat", type=int, default=3, help="timed requests per page (the best counts)")
    parser.add_argument("--load-seconds", type=float, default=5, help="gunicorn load at the largest size; 0: skip")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--keep", action="store_true", help="keep the database and var folder")
    args = parser.parse_args()
    args.sizes = [s.strip() for s in args.sizes.split(",")]
    if unknown := [s for s in args.sizes if s not in SIZES]:
        parser.error(f"unknown sizes {unknown}; choose from {', '.join(SIZES)}")
    return args


def last_page_url(client) -> str:
    """Follow /api/runs/'s cursor to the end in pages of 1,000, then in pages of 100 within the last one."""
    url = "/api/runs/?limit=1000"
    while (body := client.get(url).json())["next"]:
        url = _local(body["next"])
    url = _local(url, limit="100")
    while (body := client.get(url).json())["next"]:
        url = _local(body["next"])
    return url


def _local(url: str, **params: str) -> str:
    """The path and query of a link the API gave, with `params` replacing its own."""
    parts = urlsplit(url)
    query = urlencode({**dict(parse_qsl(parts.query)), **params})
    return parts.path + ("?" + query if query else "")


def timed(client, url: str, repeat: int, *, miss: bool = False) -> tuple[float, int]:
    """Best server time (ms) of `repeat` requests after a warm-up one, and its query count; with
    `miss`, the leaderboard's version is raised before each (leaderboard.analysis.page_cache): nothing cached."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    best, queries = float("inf"), 0
    for _ in range(repeat):
        if miss:
            site.leaderboard_changed()
        with CaptureQueriesContext(connection) as captured:
            began = time.perf_counter()
            response = client.get(url)
            spent = (time.perf_counter() - began) * 1000
        assert response.status_code == 200, (url, response.status_code)
        if spent < best:
            best, queries = spent, len(captured)
    return best, queries


def measure(repeat: int) -> dict[str, tuple[float, int]]:
    from django.test import Client

    client = Client()
    urls = {label: path or last_page_url(client) for label, path in PAGES}
    results = {label: timed(client, url, repeat) for label, url in urls.items()}
    if site.leaderboard_changed():  # a site with the leaderboard cache: its hits above, its misses here
        results.update({label: timed(client, urls[path], repeat, miss=True) for label, path in MISSES})
    return results


def grow(size: str, done: tuple[int, int]) -> tuple[int, int, int, float | None, float]:
    """Add the runs that turn the data set of `done` (experiments, seeds) into `size`."""
    from support import synthetic

    experiments, seeds = SIZES[size]
    began = time.perf_counter()
    made = synthetic.add_runs(experiments=range(done[0]), seeds=range(done[1], seeds))
    made += synthetic.add_runs(experiments=range(done[0], experiments), seeds=range(seeds))
    loaded = time.perf_counter() - began
    return experiments, seeds, made, site.rebuild_aggregates(), loaded


def print_table(results: dict[str, dict[str, tuple[float, int]]], vendor: str, repeat: int) -> None:
    sizes = list(results)
    print(f"\nServer time, best of {repeat} (ms), and queries; {vendor}; DEBUG off; test client in-process")
    header = "| request | " + " | ".join(sizes) + (f" | {sizes[-1]}/{sizes[0]} |" if len(sizes) > 1 else " |")
    print(header)
    print("|---" * (header.count("|") - 1) + "|")
    for label in [label for label, _ in PAGES + MISSES if label in results[sizes[-1]]]:
        cells = [f"{results[s][label][0]:,.0f} ms ({results[s][label][1]} q)" for s in sizes]
        ratio = f" | {results[sizes[-1]][label][0] / results[sizes[0]][label][0]:.1f}x" if len(sizes) > 1 else ""
        print(f"| `{label}` | " + " | ".join(cells) + ratio + " |")


def load(args: argparse.Namespace, var: Path, size: str) -> None:
    """50 clients on `/`, then on a static file the same server sends (whitenoise): the floor of a
    request through this gunicorn on this machine, measured in the same run."""
    from django.templatetags.static import static
    from support import http_load

    with site.gunicorn(workers=2, log=var / "gunicorn.log") as server:
        http_load.fetch(server.base, "/")  # each worker has loaded the app; this warms a connection
        print(f"\ngunicorn, 2 workers, DEBUG off, {size} runs: {args.clients} clients for {args.load_seconds:g} s each"
              " (server CPU: its master and workers, per request answered)")
        results = {}
        for label, path in [("/", "/"), ("a static file (floor)", static("css/medalboard.css"))]:
            began = server.cpu()
            results[label] = result = http_load.readers(server.base, [path], clients=args.clients,
                                                        seconds=args.load_seconds)[path]
            per_request = (server.cpu() - began) * 1000 / max(result.ok, 1)
            print(f"  {label:22} {result.line()}  {per_request:6.1f} ms server CPU each")
        print(f"  / serves {results['/'].rate() / results['a static file (floor)'].rate():.2f}x the requests/s "
              "of the floor")


def main() -> None:
    args = parse_args()
    var, url = site.configure(args.database, prefix="scale")
    import django

    django.setup()
    from django.db import connection
    from django.test.utils import setup_test_environment

    try:
        setup_test_environment()
        began = time.perf_counter()
        site.build_site()
        command = site.aggregates_command()
        print(f"site built in {time.perf_counter() - began:.1f} s on {connection.vendor}; "
              f"aggregates rebuild command: {command or 'none (leaderboard computed from runs)'}")
        results, done = {}, (0, 0)
        for size in args.sizes:
            experiments, seeds, made, rebuilt, loaded = grow(size, done)
            done = (experiments, seeds)
            note = f", aggregates rebuilt in {rebuilt:.1f} s" if rebuilt is not None else ""
            print(f"{size}: {experiments} experiments x 75 competitions x {seeds} seeds (+{made:,} runs in "
                  f"{loaded:.1f} s{note})", flush=True)
            results[size] = measure(args.repeat)
        print_table(results, connection.vendor, args.repeat)
        if args.load_seconds > 0:
            load(args, var, args.sizes[-1])
    finally:
        site.cleanup(var, url, keep=args.keep)


if __name__ == "__main__":
    main()
