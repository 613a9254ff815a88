"""mlebench-env: its build cold, from the wheelhouse and kept by its tag, and a job's start in the full
image against the light one. A benchmark, not a test.

    DEBUG=true .venv/bin/python benchmarks/mlebench_env.py [--flavour light|full] [--tag T] [--keep]
        [--no-build] [--light IMAGE] [--full IMAGE] [--jobs 5]

The build part (unless `--no-build`) builds the flavour three times under its own tag (default
`bench-mlebench-env-FLAVOUR`), one after the other in the same run: **cold** (`--force`, an empty
wheelhouse of its own: every wheel fetched from the operator's index, every Debian package from the
mirror), **cached** (`--force` again, the wheelhouse now holding every step: pip installs with
--no-index; debootstrap and apt still run) and **kept** (no `--force`: the tag holds the same recipe
revision, nothing is built). It prints each time and its ratio to the cold build. The image is removed
at the end unless `--keep`; the wheelhouse always is.

The start part runs a trivial agent (copy the sample submission) as jobs on a Docker runner, in each
image, one job at a time, alternating (so a loaded machine slows both alike; a first round warms the
runner up and is not counted): the time from the job's creation to the sandbox's start and to the
task's end, and, as the floor measured in the same run, `docker run --rm IMAGE python -c pass`
straight away. It prints medians and the full image's ratio to the light one. Uses
benchmarks/jobs.py's throwaway site (SQLite, the filesystem broker, the smoke competitions). Each image
is the one named, else the local image labelled with that flavour and its recipe's current revision
(the one just built counts); without a full one the part is skipped, saying so.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")


def build_times(flavour: str, tag: str) -> None:
    from runner.agents import base_image
    from runner.host import agent_image

    recipe = base_image.recipe(flavour)
    wheelhouse = Path(tempfile.mkdtemp(prefix="bench-mlebench-env-wheelhouse-")) / "wheelhouse"
    base_image.WHEELHOUSE = wheelhouse  # its own: the first build is cold whatever the host's holds
    rows = []
    try:
        for name, force in (
            ("cold (empty wheelhouse)", True),
            ("cached (wheelhouse holds every step)", True),
            ("kept (tag holds this recipe)", False),
        ):
            began = time.perf_counter()
            result = agent_image.build(tag=tag, force=force, recipe=recipe, log=lambda line: print("  " + line[:160]))
            rows.append((name, time.perf_counter() - began, result))
            print(f"{name}: {rows[-1][1]:.0f} s", flush=True)
        held = sum(f.stat().st_size for f in wheelhouse.rglob("*") if f.is_file())
    finally:
        shutil.rmtree(wheelhouse.parent, ignore_errors=True)
    cold = rows[0][1]
    print(
        f"\nmlebench-env `{flavour}` as {tag}: image {rows[0][2].get('size_bytes', 0) / 1e9:.2f} GB, wheelhouse "
        f"{held / 1e9:.2f} GB; load average {os.getloadavg()[0]:.1f} at the end"
    )
    print("| build | s | x cold |")
    print("|---|---|---|")
    for name, seconds, _ in rows:
        print(f"| {name} | {seconds:.1f} | {seconds / cold:.4f} |")


def start_times(images: dict[str, str], n: int) -> None:
    import jobs

    from runner.models import AgentDefinition, JobTask

    jobs.setup()
    agents = {}
    for name, image in images.items():  # before the runner starts: it reports the images agents name
        agents[name] = f"bench-env-{name}"
        AgentDefinition.objects.update_or_create(
            name=agents[name], defaults={"command": ["python", "-c", jobs.QUICK], "image": image}
        )
    runner = jobs.start_runner("docker")
    samples: dict[str, dict[str, list[float]]] = {name: {"started": [], "ended": [], "floor": []} for name in images}
    try:
        # One round unmeasured (the runner's first tasks warm it up), then the order alternates by round.
        for round_ in range(n + 1):
            names = list(images) if round_ % 2 else list(images)[::-1]
            for name in names:
                image = images[name]
                job = jobs.submit(agents[name])
                task = jobs.wait(
                    lambda job=job: JobTask.objects.filter(job=job, status__in=JobTask.FINISHED).first(),
                    300,
                    f"finished in {image}",
                )
                if task.status != JobTask.Status.SUCCEEDED:
                    raise SystemExit(f"the job in {image} ended {task.status}: {task.error[:500]}")
                began = time.perf_counter()
                subprocess.run(
                    ["docker", "run", "--rm", "--network", "none", image, "python", "-c", "pass"],
                    check=True,
                    capture_output=True,
                )
                if round_:
                    samples[name]["floor"].append(time.perf_counter() - began)
                    samples[name]["started"].append((task.agent_started_at - task.created_at).total_seconds())
                    samples[name]["ended"].append((task.finished_at - task.created_at).total_seconds())
    finally:
        jobs.stop_runner(runner)
    median = {
        name: {key: statistics.median(values) for key, values in kinds.items()} for name, kinds in samples.items()
    }
    print(
        f"\na trivial agent's job on a Docker runner, {n} jobs per image, medians; load average "
        f"{os.getloadavg()[0]:.1f} at the end"
    )
    print("| image | created -> sandbox started s | created -> task ended s | docker run python -c pass s |")
    print("|---|---|---|---|")
    for name, image in images.items():
        m = median[name]
        print(f"| {name} ({image}) | {m['started']:.2f} | {m['ended']:.2f} | {m['floor']:.2f} |")
    full, light = median["full"], median["light"]
    print(
        f"| full / light | {full['started'] / light['started']:.2f}x | {full['ended'] / light['ended']:.2f}x | "
        f"{full['floor'] / light['floor']:.2f}x |"
    )


def local_image(flavour: str) -> str:
    """A local image of this flavour built from its recipe's current revision ("" if none)."""
    import docker

    from runner.agents import base_image
    from runner.host import agent_image

    revision = base_image.recipe(flavour).revision
    for image in docker.from_env().images.list(filters={"label": f"{agent_image.FLAVOUR_LABEL}={flavour}"}):
        if (image.labels or {}).get(agent_image.REVISION_LABEL) == revision and image.tags:
            return image.tags[0]
    return ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flavour", default="light", help="the flavour the build part builds")
    parser.add_argument("--tag", help="the build part's tag (default: bench-mlebench-env-FLAVOUR)")
    parser.add_argument("--keep", action="store_true", help="keep the image built (e.g. to `--record` it)")
    parser.add_argument("--no-build", action="store_true", help="only the start part")
    parser.add_argument("--light", help="the light image of the start part")
    parser.add_argument("--full", help="the full image of the start part")
    parser.add_argument("--jobs", type=int, default=5, help="jobs per image in the start part")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import jobs  # first: its throwaway site's settings (SQLite in a temp folder), Django set up

    tag = args.tag or f"bench-mlebench-env-{args.flavour}"
    if not args.no_build:
        build_times(args.flavour, tag)
    try:
        images = {"light": args.light or local_image("light"), "full": args.full or local_image("full")}
        missing = [name for name, image in images.items() if not image]
        if missing:
            print(
                f"\nthe start part is skipped: no {' or '.join(missing)} mlebench-env here (`manage.py "
                "build_agent_image --mlebench-env --flavour full`, or name one with --full / --light)"
            )
        else:
            start_times(images, args.jobs)
    finally:
        shutil.rmtree(jobs.VAR, ignore_errors=True)
        if not args.no_build and not args.keep:
            subprocess.run(["docker", "rmi", tag], capture_output=True)


if __name__ == "__main__":
    main()
