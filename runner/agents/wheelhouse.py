"""An agent's `wheels.txt`: Python wheels fetched on the host into its build context.

Image builds run without a network (runner.agents.images), so an agent that needs packages the base
image lacks lists them in `wheels.txt` beside its Dockerfile, one exact pin a line (`name==version`,
`#` comments). Before `docker build` the builder copies the build context to a temporary folder and
has pip download each pin there, into `wheelhouse/`; the Dockerfile installs from it with
`pip install --no-index --no-deps --find-links wheelhouse -r wheels.txt`.

The list is a lock: `--no-deps`, so what is listed is exactly what is installed (a package's
declared dependencies may be far heavier than what it imports). Only wheels are fetched, for the
image's Python (CPython 3.11, glibc 2.36, x86_64) or pure Python: an sdist would run its build code
on this host, and the folder is untrusted. Options, URLs and paths are refused for the same reason.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from django.conf import settings

WHEELS_FILE = "wheels.txt"
WHEELHOUSE = "wheelhouse"
MAX_PINS = 500
# The Python and platform of mlebench-env (Debian bookworm: glibc 2.36), not this host's; pip takes
# the platform tags literally, so every manylinux tag that glibc runs is named.
GLIBC_MINOR = 36
PLATFORMS = ("manylinux1_x86_64", "manylinux2010_x86_64", "manylinux2014_x86_64",
             *(f"manylinux_2_{minor}_x86_64" for minor in range(5, GLIBC_MINOR + 1)))
TARGET = ("--python-version", "3.11", "--implementation", "cp", "--abi", "cp311", "--abi", "abi3",
          "--abi", "none", *(arg for platform in PLATFORMS for arg in ("--platform", platform)))
PIN = re.compile(r"^([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)==([A-Za-z0-9][A-Za-z0-9.!+_-]*)$")
TAIL_CHARS = 3000


class WheelError(Exception):
    """wheels.txt is malformed, or pip could not fetch what it lists; the message says which."""


def pins(path: Path) -> list[str]:
    """The pins of a wheels.txt, each `name==version`; anything else is refused, naming its line."""
    found = []
    for number, raw in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if not PIN.match(line):
            raise WheelError(f"{WHEELS_FILE} line {number}: {raw.strip()[:120]!r} is not an exact pin "
                             "`name==version` (options, URLs, paths and ranges are refused)")
        found.append(line)
    if len(found) > MAX_PINS:
        raise WheelError(f"{WHEELS_FILE}: {len(found)} pins, over the {MAX_PINS} allowed")
    return found


def needed(context: Path) -> bool:
    return (context / WHEELS_FILE).is_file()


def stage(context: Path, into: Path, *, log=print) -> Path:
    """A copy of the build context at `into` with its wheels.txt's wheels in `wheelhouse/`."""
    if (context / WHEELHOUSE).exists():
        raise WheelError(f"the folder has its own {WHEELHOUSE}/, where the builder puts the wheels of "
                         f"{WHEELS_FILE}: rename it")
    wanted = pins(context / WHEELS_FILE)
    shutil.copytree(context, into, symlinks=True)
    house = into / WHEELHOUSE
    house.mkdir()
    if wanted:
        log(f"fetching {len(wanted)} wheels listed in {WHEELS_FILE}")
        _download(wanted, house)
    return into


def _download(wanted: list[str], house: Path) -> None:
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--no-input",
               "--disable-pip-version-check", "--dest", str(house), *TARGET, *wanted]
    timeout = settings.AGENTS_WHEELS_TIMEOUT_S
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise WheelError(f"pip could not fetch the wheels of {WHEELS_FILE} within {timeout} s") from None
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip()[-TAIL_CHARS:]
        raise WheelError(f"pip could not fetch the wheels of {WHEELS_FILE} (only wheels for CPython 3.11 on "
                         f"linux x86_64 or pure Python are fetched, never an sdist): {said}")
    size = sum(f.stat().st_size for f in house.iterdir())
    if size > settings.AGENTS_MAX_WHEELS_BYTES:
        raise WheelError(f"the wheels of {WHEELS_FILE} are {size:,} bytes, over the "
                         f"{settings.AGENTS_MAX_WHEELS_BYTES:,} allowed (MEDALBOARD_AGENTS_MAX_WHEELS_BYTES)")
