"""Helpers shared by the test_import_* modules (no tests here)."""

from __future__ import annotations

from pathlib import Path

from leaderboard.importers import read_trajectories, save_steps
from leaderboard.models import Agent, Experiment, LanguageModel, Run, Step
from tests.conftest import TRAJECTORIES_DIR

__all__ = ["TRAJECTORIES_DIR", "import_all", "make_run"]


def make_run(task_name: str = "") -> Run:
    agent, _ = Agent.objects.get_or_create(name="test-agent", version="1")
    model, _ = LanguageModel.objects.get_or_create(name="test-model")
    experiment, _ = Experiment.objects.get_or_create(agent=agent, model=model, name="importer tests")
    return Run.objects.create(experiment=experiment, task_name=task_name)


def import_all(path: Path) -> list[tuple[Run, list[Step]]]:
    """Every trajectory in `path` saved into its own run, with the stored steps in order."""
    saved = []
    for parsed in read_trajectories(path):
        run = make_run()
        save_steps(run, parsed)
        run.refresh_from_db()
        saved.append((run, list(run.steps.order_by("index"))))
    return saved
