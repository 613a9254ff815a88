"""The first request of a fresh web process against its second (nothing heavy on the first
request of a process). A benchmark, not a test.

    .venv/bin/python benchmarks/startup.py [--database postgres://.../medalboard_startup]

Builds a throwaway site (DEBUG off; 1k SYNTHETIC runs and a synthetic replay run), then for each page
starts a new Python process that loads the WSGI application the way gunicorn does (`webapp.wsgi`, which
warms it: webapp/warmup.py) and times its first and second request in-process. The second request is
the baseline measured in the same process: the target is a first request within ~1.5x of it (the database
connection is opened by the first). "cold" loads Django's bare WSGI handler instead, without the warm-up:
what a first request cost before.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from support import site  # noqa: E402

PROBE = """
import io, json, sys, time
from wsgiref.util import setup_testing_defaults
began = time.perf_counter()
if sys.argv[1] == "warm":
    from webapp.wsgi import application
else:
    from django.core.wsgi import get_wsgi_application
    application = get_wsgi_application()
loaded = time.perf_counter() - began

def get(path):
    env = {"PATH_INFO": path.split("?")[0], "QUERY_STRING": path.partition("?")[2], "HTTP_HOST": "testserver"}
    setup_testing_defaults(env)
    env["wsgi.input"] = io.BytesIO(b"")
    status = []
    began = time.perf_counter()
    b"".join(application(env, lambda s, h, e=None: status.append(s)))
    assert status[0].startswith("200"), (path, status)
    return (time.perf_counter() - began) * 1000

first = get(sys.argv[2])
print(json.dumps({"load_ms": loaded * 1000, "first_ms": first, "second_ms": get(sys.argv[2])}))
"""


def probe(mode: str, path: str) -> dict:
    done = subprocess.run([sys.executable, "-c", PROBE, mode, path], cwd=site.ROOT, env=os.environ.copy(),
                          capture_output=True, text=True, timeout=300)
    if done.returncode:
        raise RuntimeError(done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", help="postgres://.../<throwaway db> (created and dropped); default SQLite")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    var, url = site.configure(args.database, prefix="startup")
    import django

    django.setup()
    from django.db import connection, connections
    from support import synthetic

    try:
        site.build_site()
        synthetic.add_runs(experiments=range(5), seeds=range(3))
        site.rebuild_aggregates()
        replay = synthetic.add_replay_run(2000)
        vendor = connection.vendor
        connections.close_all()
        print(f"Fresh process, DEBUG off, {vendor}, 1k runs: application load, first and second request (ms)")
        print("| page | cold: load / first / second | warmed: load / first / second | first/second warmed |")
        print("|---|---|---|---|")
        for path in ["/", f"/runs/{replay}/", "/api/runs/", "/competitions/spaceship-titanic/"]:
            cold, warm = probe("cold", path), probe("warm", path)
            cells = [" / ".join(f"{r[k]:,.0f}" for k in ("load_ms", "first_ms", "second_ms")) for r in (cold, warm)]
            print(f"| `{path}` | {cells[0]} | {cells[1]} | {warm['first_ms'] / warm['second_ms']:.1f}x |")
    finally:
        site.cleanup(var, url, keep=args.keep)


if __name__ == "__main__":
    main()
