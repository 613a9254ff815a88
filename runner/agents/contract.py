"""MLE-bench's container contract on our sandbox, for one variant: what a runner (runner.remote.agents,
from its claim; the site's side in runner.agents.job_package, from a Job) gives an MLE-bench agent's
sandbox. It reads no database: everything comes in as arguments.

MLE-bench runs `bash /home/agent/start.sh <kwargs>` as `nonroot` in a container where /home is
writable, /home/data is the public data (read-only), /home/instructions.txt says what to do,
`COMPETITION_ID` and the variant's env vars are set, and a checker answers on localhost:5000. Here:

- the command is sandbox_init.py (mounted with the agent tools), which starts the checker and any
  other helper, copies the image's /home back under the writable /home and runs start.sh;
- /home is a folder of the task's scratch (so within its disk quota; the root filesystem stays
  read-only), holding instructions.txt (with the job's time limit) and validate_submission.sh;
- `${{ secrets.NAME }}` in env_vars and kwargs is the job's secret NAME, resolved only now.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

from runner.agents.base_image import SEED_HOME, USER
from runner.agents.mlebench import BUILD_ARGS, START_SCRIPT, Variant
from runner.backends import SandboxSpec

HERE = Path(__file__).resolve().parent
TOOLS = HERE.parent / "agent_tools"
INSTRUCTIONS = HERE / "instructions.txt"
PYTHON = "/usr/bin/python3"  # the image's own, outside the agent's environment


def adapt_variant(
    spec: SandboxSpec,
    variant: Variant,
    *,
    name: str,
    competition: str,
    backend,
    paths,
    secrets: dict[str, str],
    allow_privileged: bool,
) -> SandboxSpec:
    """`spec` as the variant's start.sh needs it (`name`: the agent as the site names it; `secrets`:
    the job's as the sandbox may see them). RuntimeError says why it cannot run here."""
    if backend.name != "docker":
        raise RuntimeError(f"the MLE-bench agent {name} runs only on Docker runners, not {backend.name}")
    if variant.privileged and not allow_privileged:  # allowed at import, no longer
        raise RuntimeError(
            f"the agent {variant.id} asks for a privileged container, which this site refuses "
            "(MEDALBOARD_AGENTS_ALLOW_PRIVILEGED is off)"
        )
    try:
        argv, variables = variant.argv(secrets), variant.environment(secrets)
    except KeyError as exc:
        raise RuntimeError(f"the agent {variant.id} needs a secret the job was not given: {exc.args[0]}") from None
    command = [
        PYTHON,
        f"{paths.tools}/sandbox_init.py",
        "--seed-home",
        SEED_HOME,
        "--user",
        USER,
        "--",
        "bash",
        START_SCRIPT,
        *argv,
    ]
    env = {
        **spec.env,
        "COMPETITION_ID": competition,
        **variables,
        "AGENT_DIR": BUILD_ARGS["AGENT_DIR"],
        "USER": USER,
        "LOGNAME": USER,
    }
    return dataclasses.replace(
        spec, command=command, env=env, home_dir=prepare_home(spec), privileged=variant.privileged
    )


def prepare_home(spec: SandboxSpec) -> Path:
    home = spec.workdir / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "instructions.txt").write_text(instructions(spec.time_limit_s))
    script = home / "validate_submission.sh"
    shutil.copyfile(TOOLS / "validate_submission.sh", script)
    script.chmod(0o755)
    return home


def instructions(time_limit_s: float) -> str:
    text = INSTRUCTIONS.read_text()
    return text.replace("{time_limit}", _duration(time_limit_s)).replace("{time_limit_seconds}", str(int(time_limit_s)))


def _duration(seconds: float) -> str:
    hours, rest = divmod(int(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    parts = [(hours, "hour"), (minutes, "minute"), (secs, "second")]
    return ", ".join(f"{n} {unit}{'' if n == 1 else 's'}" for n, unit in parts if n) or "0 seconds"
