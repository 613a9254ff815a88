#!/usr/bin/python3 -I
"""`conda` for the mlebench-env image: the parts of conda MLE-bench's agents use, over Python venvs.

MLE-bench's base image has Miniconda with an environment named `agent`; ours does not download conda,
so each "environment" is a venv under /opt/conda/envs: `agent` made by the image build with the
flavour's pinned requirements (runner.agents.base_image), others by `conda create` with
--system-site-packages over Debian's python3. What works:

    conda run [-n NAME | -p PREFIX] [--no-capture-output] [--live-stream] [--cwd DIR] CMD ...
    eval "$(conda shell.bash hook)"   then   conda activate NAME / conda deactivate
    source /opt/conda/bin/activate [NAME]
    conda create -n NAME [python[=X.Y]] [PKG ...] [-y]   a new venv; packages as `install` checks them
    conda install [-n NAME] [-c CHANNEL] [-y] PKG ...    succeeds only if every PKG is already there
    conda clean ..., conda init, conda tos ...           nothing to do: succeed
    conda env list, conda info [--envs], conda --version

Anything else, or a package that is not in the image, fails with a message saying so (nothing can be
downloaded here). Standard library only: it runs on Debian's python3, outside every environment.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(os.environ.get("MEDALBOARD_CONDA_ROOT", "/opt/conda"))
ENVS = ROOT / "envs"
VERSION = "conda 24.0.0 (medalboard shim over venv)"
NOOPS = {"clean", "init", "tos", "config"}
# Conda package names that Python distributions or the interpreter itself answer to.
ALIASES = {"pytorch": "torch", "py-xgboost": "xgboost", "tensorflow-gpu": "tensorflow"}
HOOK = """\
__medalboard_conda_exe={exe}
conda() {{
    case "$1" in
        activate|deactivate) eval "$("$__medalboard_conda_exe" shell.bash "$@")" ;;
        *) "$__medalboard_conda_exe" "$@" ;;
    esac
}}
export CONDA_EXE="$__medalboard_conda_exe"
export CONDA_SHLVL="${{CONDA_SHLVL:-0}}"
"""


class CondaError(Exception):
    pass


def prefix_of(name: str | None, path: str | None) -> Path:
    if path:
        return Path(path)
    if not name or name == "base":
        return ROOT
    if not re.fullmatch(r"[A-Za-z0-9._-]+", name):
        raise CondaError(f"invalid environment name {name!r}")
    return ENVS / name


def existing(prefix: Path) -> Path:
    if prefix != ROOT and not (prefix / "bin" / "python").exists():
        raise CondaError(f"environment {prefix} does not exist (known: {', '.join(env_names())})")
    return prefix


def env_names() -> list[str]:
    return ["base", *sorted(p.name for p in ENVS.glob("*") if (p / "bin" / "python").exists())]


def activated_env(prefix: Path) -> dict[str, str]:
    """The environment variables of a shell with `prefix` active (base: the system's python3)."""
    env = dict(os.environ)
    path = [p for p in env.get("PATH", "").split(":") if p and not p.startswith(str(ENVS) + "/")]
    if prefix != ROOT:
        path.insert(0, str(prefix / "bin"))
        env["VIRTUAL_ENV"] = str(prefix)
    else:
        env.pop("VIRTUAL_ENV", None)
    env.update(PATH=":".join(path), CONDA_PREFIX=str(prefix), CONDA_DEFAULT_ENV=prefix.name if prefix != ROOT
               else "base", CONDA_SHLVL="1")
    return env


def take(args: list[str], *flags: str) -> str | None:
    """Remove `FLAG VALUE` or `FLAG=VALUE` from args and return the value."""
    for i, arg in enumerate(args):
        for flag in flags:
            if arg == flag and i + 1 < len(args):
                value = args[i + 1]
                del args[i:i + 2]
                return value
            if arg.startswith(flag + "="):
                del args[i]
                return arg.split("=", 1)[1]
    return None


def drop(args: list[str], *flags: str) -> list[str]:
    return [a for a in args if a not in flags]


def cmd_run(args: list[str]) -> int:
    options: list[str] = []
    while args and args[0].startswith("-"):  # conda run's own options come before the command
        options.append(args.pop(0))
        if options[-1] in ("-n", "--name", "-p", "--prefix", "--cwd") and args:
            options.append(args.pop(0))
    prefix = existing(prefix_of(take(options, "-n", "--name"), take(options, "-p", "--prefix")))
    cwd = take(options, "--cwd")
    unknown = drop(options, "--no-capture-output", "--live-stream", "-s", "--debug-wrapper-scripts")
    if unknown:
        raise CondaError(f"conda run: unsupported options {' '.join(unknown)}")
    if not args:
        raise CondaError("conda run: no command given")
    env = activated_env(prefix)
    if cwd:
        os.chdir(cwd)
    os.execvpe(args[0], args, env)
    return 127  # not reached


def cmd_shell(args: list[str]) -> int:
    """`conda shell.bash hook|activate NAME|deactivate`: shell code for `eval`."""
    action, rest = (args[0], args[1:]) if args else ("", [])
    if action == "hook":
        print(HOOK.format(exe=shlex.quote(str(Path(sys.argv[0]).resolve()))))
        return 0
    if action == "activate":
        positional = [a for a in rest if not a.startswith("-")]
        prefix = existing(prefix_of(take(rest, "-n", "--name") or (positional[0] if positional else None), None))
    elif action == "deactivate":
        prefix = ROOT
    else:
        raise CondaError(f"conda shell: unsupported action {action!r} (hook, activate, deactivate)")
    env = activated_env(prefix)
    names = ("PATH", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "CONDA_SHLVL", "VIRTUAL_ENV")
    print("".join(f"export {n}={shlex.quote(env[n])}\n" if n in env else f"unset {n}\n" for n in names), end="")
    print("hash -r 2>/dev/null || true")
    return 0


def split_spec(spec: str) -> tuple[str, str]:
    """`numpy>=1.2`, `python=3.11`, `conda-forge::nodejs=18` -> (name, version constraint)."""
    spec = spec.split("::", 1)[-1]
    match = re.match(r"([A-Za-z0-9_.\-]+)\s*(.*)", spec)
    if not match:
        raise CondaError(f"cannot read the package spec {spec!r}")
    return match.group(1).lower(), match.group(2).lstrip("=").strip()


def missing_packages(prefix: Path, specs: list[str]) -> list[str]:
    python = str(prefix / "bin" / "python") if prefix != ROOT else "/usr/bin/python3"
    missing = []
    for spec in specs:
        name, version = split_spec(spec)
        if name == "python":
            have = subprocess.run([python, "-c", "import platform; print(platform.python_version())"],
                                  capture_output=True, text=True).stdout.strip()
            if version and not have.startswith(version.rstrip("*").rstrip(".")):
                missing.append(f"{spec} (the image has Python {have})")
            continue
        probe = f"import importlib.metadata as m; print(m.version({ALIASES.get(name, name)!r}))"
        found = subprocess.run([python, "-c", probe], capture_output=True, text=True)
        if found.returncode != 0:
            missing.append(spec)
    return missing


def package_args(args: list[str]) -> tuple[Path, list[str]]:
    prefix = prefix_of(take(args, "-n", "--name"), take(args, "-p", "--prefix"))
    while take(args, "-c", "--channel") is not None:
        pass
    return prefix, [a for a in args if not a.startswith("-")]


def cmd_install(args: list[str]) -> int:
    prefix, specs = package_args(args)
    missing = missing_packages(existing(prefix), specs)
    if missing:
        raise CondaError("conda install: not in this offline image and nothing can be downloaded: "
                         + ", ".join(missing) + ". Bake them into the agent's image another way, or use "
                         "packages the image has (numpy, pandas, scipy, scikit-learn)")
    print(f"All requested packages already installed in {prefix}.")
    return 0


def cmd_create(args: list[str]) -> int:
    prefix, specs = package_args(args)
    if prefix == ROOT:
        raise CondaError("conda create: give the new environment a name (-n NAME)")
    if not (prefix / "bin" / "python").exists():
        subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", str(prefix)], check=True)
    return cmd_install(["-p", str(prefix), *specs])


def cmd_envs(args: list[str]) -> int:
    print("# conda environments:")
    for name in env_names():
        print(f"{name:<20} {prefix_of(name, None)}")
    return 0


def cmd_info(args: list[str]) -> int:
    if "--envs" in args or "-e" in args:
        return cmd_envs(args)
    print(f"{VERSION}\nbase environment : {ROOT}\nenvs directories : {ENVS}")
    return 0


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    command, args = argv[0], list(argv[1:])
    if command in ("-V", "--version"):
        print(VERSION)
        return 0
    if command in ("activate", "deactivate"):
        raise CondaError(f"'conda {command}' needs the shell function: run eval \"$(conda shell.bash hook)\" first")
    if command.startswith("shell."):
        return cmd_shell(args)
    if command == "env" and args[:1] == ["list"]:
        return cmd_envs(args[1:])
    handlers = {"run": cmd_run, "install": cmd_install, "create": cmd_create, "info": cmd_info}
    if command in handlers:
        return handlers[command](args)
    if command in NOOPS:
        return 0
    raise CondaError(f"'conda {command}' is not supported by this offline image's conda (see conda --help)")


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except CondaError as exc:
        print(f"CondaError: {exc}", file=sys.stderr)
        sys.exit(1)
