"""Running the baseline agent (runner/agent_tools/) as a sandbox would: a subprocess with the env contract."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

TOOLS_DIR = Path(settings.BASE_DIR) / "runner" / "agent_tools"
AGENT = TOOLS_DIR / "baseline_agent.py"
CHECKER = TOOLS_DIR / "check_submission.py"


@dataclass
class AgentRun:
    workdir: Path
    process: subprocess.Popen | subprocess.CompletedProcess  # finished: read back from another worker

    @property
    def submission(self) -> Path:
        return self.workdir / "submission" / "submission.csv"

    @property
    def trajectory(self) -> Path:
        return self.workdir / "logs" / "trajectory.jsonl"

    def wait(self, timeout: float) -> int:
        return self.process.wait(timeout=timeout)

    def steps(self) -> list[dict]:
        lines = self.trajectory.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines[1:]]


def start_agent(data_dir: Path, workdir: Path, time_limit_s: float, seed: int = 0) -> AgentRun:
    """Start the agent with the venv's Python and the sandbox's environment variables; returns at once."""
    workdir.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_SETTINGS_MODULE", "PYTHONPATH")}
    env.update(DATA_DIR=str(data_dir), SUBMISSION_DIR=str(workdir / "submission"), LOGS_DIR=str(workdir / "logs"),
               CODE_DIR=str(workdir / "code"), TOOLS_DIR=str(TOOLS_DIR), TIME_LIMIT_SECONDS=str(time_limit_s),
               SEED=str(seed), N_JOBS="1")
    log = open(workdir / "agent.log", "wb")  # noqa: SIM115 - closed with the process by the OS
    process = subprocess.Popen([sys.executable, str(AGENT)], env=env, cwd=workdir, stdout=log,
                               stderr=subprocess.STDOUT)
    return AgentRun(workdir, process)


def check(submission: Path, sample: Path) -> tuple[int, dict]:
    done = subprocess.run([sys.executable, str(CHECKER), str(submission), "--sample", str(sample)],
                          capture_output=True, text=True, timeout=60)
    return done.returncode, json.loads(done.stdout)
