#!/usr/bin/env python3
"""The command an MLE-bench agent's sandbox runs: start the in-sandbox helpers, then the agent.

    python3 /opt/medalboard/sandbox_init.py [--seed-home DIR] [--user nonroot] [--workdir DIR]
        [--also CMD]... [--no-validate] -- bash /home/agent/start.sh KWARGS...

1. Copies what the agent's image had under /home (kept at --seed-home when the image was built) into
   the sandbox's writable /home, leaving alone what is already there (the mounted folders, the
   instructions the runner wrote).
2. Starts the helpers in the background: the submission checker on 127.0.0.1:5000 (validate_server.py;
   the sandbox has no network, so it lives here), then each --also CMD (one shell-quoted command
   line, e.g. a gateway forwarder), and waits until the checker answers /health.
3. Runs the agent command in its own process group, as --user if started as root (else as itself),
   in --workdir (default $MEDALBOARD_AGENT_WORKDIR, the image's WORKDIR). SIGTERM, SIGINT and SIGHUP
   are passed on to the agent's whole group.
4. When the agent ends, stops the helpers and exits with the agent's code (128+N for signal N).

Standard library only: it runs on the image's /usr/bin/python3, outside the agent's environment.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
HOME = Path("/home")
MOUNTED = {"data", "submission", "logs", "code"}  # the runner's mounts under /home: never written here
HEALTH_URL = "http://127.0.0.1:{port}/health"
HEALTH_WAIT_S = 30.0
HELPER_GRACE_S = 2.0


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed-home", type=Path, default=None, help="the image's /home, copied into /home")
    parser.add_argument("--home", type=Path, default=HOME)
    parser.add_argument("--user", default="", help="run the agent as this user when started as root")
    parser.add_argument("--workdir", default=os.environ.get("MEDALBOARD_AGENT_WORKDIR") or str(HOME))
    parser.add_argument("--also", action="append", default=[], metavar="CMD", help="another helper to start")
    parser.add_argument("--no-validate", action="store_true", help="do not start the submission checker")
    parser.add_argument("--validate-port", type=int, default=5000)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.command[:1] == ["--"]:
        args.command = args.command[1:]
    if not args.command:
        parser.error("give the agent's command after --")
    return args


def seed_home(seed: Path | None, home: Path) -> None:
    if seed is None or not seed.is_dir():
        return
    for entry in seed.iterdir():
        if entry.name in MOUNTED:
            continue
        target = home / entry.name
        if entry.is_dir() and not entry.is_symlink():
            shutil.copytree(entry, target, symlinks=True, dirs_exist_ok=True, copy_function=_copy_new)
        elif not target.exists() and not target.is_symlink():
            shutil.copy2(entry, target, follow_symlinks=False)


def _copy_new(source: str, target: str) -> None:
    if not os.path.lexists(target):
        shutil.copy2(source, target, follow_symlinks=False)


def start_helpers(args: argparse.Namespace) -> list[subprocess.Popen]:
    commands = [] if args.no_validate else [
        [sys.executable, str(HERE / "validate_server.py"), "--port", str(args.validate_port)]]
    commands += [shlex.split(line) for line in args.also]
    helpers = [subprocess.Popen(command, stdin=subprocess.DEVNULL) for command in commands]
    if not args.no_validate:
        wait_healthy(args.validate_port, helpers[0])
    return helpers


def wait_healthy(port: int, server: subprocess.Popen) -> None:
    deadline = time.monotonic() + HEALTH_WAIT_S
    while time.monotonic() < deadline and server.poll() is None:
        try:
            with urllib.request.urlopen(HEALTH_URL.format(port=port), timeout=1) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"the submission checker did not answer on port {port} within {HEALTH_WAIT_S:g} s")


def run_agent(args: argparse.Namespace) -> int:
    drop = {"user": args.user, "group": _group(args.user)} if args.user and os.getuid() == 0 else {}
    workdir = args.workdir if os.path.isdir(args.workdir) else str(args.home)
    agent = subprocess.Popen(args.command, cwd=workdir, start_new_session=True, **drop)

    def forward(signum, frame) -> None:
        try:
            os.killpg(agent.pid, signum)
        except ProcessLookupError:
            pass

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, forward)
    code = agent.wait()
    return 128 - code if code < 0 else code


def _group(user: str):
    import pwd

    return pwd.getpwnam(user).pw_gid


def stop(helpers: list[subprocess.Popen]) -> None:
    for helper in helpers:
        if helper.poll() is None:
            helper.terminate()
    deadline = time.monotonic() + HELPER_GRACE_S
    for helper in helpers:
        try:
            helper.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            helper.kill()


def main(argv: list[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    seed_home(args.seed_home, args.home)
    helpers: list[subprocess.Popen] = []
    try:
        helpers = start_helpers(args)
        return run_agent(args)
    except (RuntimeError, OSError) as exc:
        print(f"sandbox_init: {exc}", file=sys.stderr, flush=True)
        return 1
    finally:
        stop(helpers)


if __name__ == "__main__":
    sys.exit(main())
