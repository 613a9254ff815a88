"""How long an agent's image takes to build cold (Docker's layer cache unused) against cached (the same
folder again, its layers in the cache), measured in the same run. A benchmark, not a test.

    DEBUG=true .venv/bin/python benchmarks/agent_image_build.py [--agents agents/] [--agent sample] [--runs 3]

Each round builds the agent's image with build_image twice, one after the other (so a loaded machine
slows both alike): `force` and `nocache` (every step of its Dockerfile runs again, as on a host that
never built it), then `force` only (Docker finds each step in its cache; the site's thin layer is built
again). `mlebench-env` must be built (`manage.py build_agent_image --mlebench-env`); the build reaches
what MEDALBOARD_AGENTS_BUILD_NETWORK allows. It prints the median of each and the ratio cached/cold.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=Path, default=ROOT / "agents")
    parser.add_argument("--agent", default="sample")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    import django

    django.setup()
    import docker

    from runner.agents.images import build_image
    from runner.agents.importer import limits
    from runner.agents.mlebench import read_agents

    variant = next(v for v in read_agents(args.agents, limits()) if v.id == args.agent)
    client = docker.from_env()
    times: dict[str, list[float]] = {"cold (no layer cache)": [], "cached": []}
    for _ in range(args.runs):
        for name, nocache in (("cold (no layer cache)", True), ("cached", False)):
            began = time.perf_counter()
            build_image(variant, client=client, force=True, nocache=nocache, log=lambda *a: None)
            times[name].append(time.perf_counter() - began)
    cold = statistics.median(times["cold (no layer cache)"])
    print(
        f"{variant.id} ({variant.image}), median of {args.runs} runs, load average {os.getloadavg()[0]:.1f} at the end"
    )
    print("| build | median s | min s | x cold |")
    print("|---|---|---|---|")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"| {name} | {median:.1f} | {min(values):.1f} | {median / cold:.2f} |")


if __name__ == "__main__":
    main()
