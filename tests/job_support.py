"""Helpers shared by the job tests: a competition with public data and answers, a runner row, the
scripted test agent, and short leases and polls so faults show within seconds."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from django.utils import timezone

from leaderboard.models import Competition
from runner.models import AgentDefinition, Runner
from runner.services import create_job
from tests.test_services import IDS, answers_for

SCRIPTED_AGENT = Path(__file__).resolve().parent / "job_agents" / "scripted_agent.py"
COMPETITION = "spaceship-titanic"


def public_data(root: Path) -> Path:
    """A prepared public folder for spaceship-titanic: sample submission only (no answers in it)."""
    folder = root / "public"
    folder.mkdir(parents=True)
    (folder / "sample_submission.csv").write_text("PassengerId,Transported\n" + "".join(f"{i},False\n" for i in IDS))
    (folder / "description.md").write_text("# Spaceship Titanic\nPredict Transported.\n")
    return folder


@pytest.fixture
def fast_jobs(settings, tmp_path):
    settings.JOB_POLL_S = 0.2
    settings.JOB_LEASE_S = 5
    settings.JOB_STOP_GRACE_S = 1
    settings.RUNNER_WORK_DIR = tmp_path / "work"
    return settings


@pytest.fixture
def job_world(catalogue, tmp_path, monkeypatch, fast_jobs):
    """spaceship-titanic with registered answers and public data, a local runner, the scripted agent."""
    answers_for(tmp_path, catalogue)
    data = public_data(tmp_path)
    if "public_data_dir" not in {f.name for f in Competition._meta.get_fields()}:
        monkeypatch.setattr(Competition, "public_data_dir", str(data), raising=False)
    else:
        Competition.objects.filter(slug=COMPETITION).update(public_data_dir=str(data))
    runner = Runner.objects.create(name="test-runner", backend="local", images=["*"], cpu_count=2,
                                   last_heartbeat=timezone.now(), queues=["jobs.cpu"])
    AgentDefinition.objects.update_or_create(name="scripted", defaults={
        "command": [sys.executable, str(SCRIPTED_AGENT)], "image": ""})
    return runner


def scripted_job(user, minutes: float = 1.0, seeds: int = 1, **agent_settings):
    return create_job(user=user, agent="scripted", competitions=[COMPETITION], seeds=seeds,
                      time_limit_minutes=minutes, settings=agent_settings)
