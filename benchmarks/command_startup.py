"""How long a management command takes to start, against a bare `django.setup()` measured in the same
run. A benchmark, not a test.

    .venv/bin/python benchmarks/command_startup.py [--runs 7] [--against /path/to/another/checkout]

Each round starts, one after the other (so a loaded machine slows all alike): `python -c` with Django
set up and nothing else (the floor), `manage.py help` and `manage.py submit_job --help` (the commands
load the URL configuration and the command's module) in this checkout, and the same two in the
`--against` checkout (e.g. `git archive <older commit> | tar -x -C /tmp/old`), when one is given.
It prints the median wall time of each and its ratio to the floor.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FLOOR = "import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'webapp.settings'); django.setup()"
COMMANDS = {"django.setup() only": ["-c", FLOOR], "manage.py help": ["manage.py", "help"],
            "manage.py submit_job --help": ["manage.py", "submit_job", "--help"]}


def timed(argv: list[str], cwd: Path) -> float:
    env = {**os.environ, "DEBUG": "true", "DJANGO_SETTINGS_MODULE": "webapp.settings"}
    began = time.perf_counter()
    subprocess.run([sys.executable, *argv], cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=300)
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--against", type=Path, help="another checkout, measured in the same rounds")
    args = parser.parse_args()
    trees = {"this checkout": ROOT, **({f"{args.against}": args.against.resolve()} if args.against else {})}
    cases = [(tree, name) for tree in trees for name in COMMANDS if tree == "this checkout" or "manage" in name]
    times: dict[tuple[str, str], list[float]] = {case: [] for case in cases}
    for _ in range(args.runs):
        for tree, name in cases:
            times[(tree, name)].append(timed(COMMANDS[name], trees[tree]))
    floor = statistics.median(times[("this checkout", "django.setup() only")])
    print(f"Median of {args.runs} runs, load average {os.getloadavg()[0]:.1f} at the end")
    print("| checkout | command | median s | min s | x django.setup() |")
    print("|---|---|---|---|---|")
    for (tree, name), values in times.items():
        median = statistics.median(values)
        print(f"| {tree} | `{name}` | {median:.2f} | {min(values):.2f} | {median / floor:.2f} |")


if __name__ == "__main__":
    main()
