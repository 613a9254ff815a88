"""Helpers shared by the test_import_* modules (no tests here)."""

from __future__ import annotations

from pathlib import Path

from leaderboard.models import Agent, Experiment, LanguageModel, Run
from leaderboard.trajectories.importers import read_trajectories, save_steps
from leaderboard.trajectories.store import StoredStep, StoredTrajectory
from tests.conftest import TRAJECTORIES_DIR

__all__ = ["TRAJECTORIES_DIR", "import_all", "make_run", "stored_rows", "stored_steps"]


def make_run(task_name: str = "") -> Run:
    agent, _ = Agent.objects.get_or_create(name="test-agent", version="1")
    model, _ = LanguageModel.objects.get_or_create(name="test-model")
    experiment, _ = Experiment.objects.get_or_create(agent=agent, model=model, name="importer tests")
    return Run.objects.create(experiment=experiment, task_name=task_name)


def stored_steps(run: Run) -> list[StoredStep]:
    """Every stored step of the run as readers see it (diffs of code steps filled in)."""
    stored = StoredTrajectory.of(run)
    return stored.complete(list(stored.steps()))


def stored_rows(run: Run, fields=("index", "kind", "title", "text", "data", "t", "parent_index", "score")) -> list:
    return [tuple(getattr(s, f) for f in fields) for s in stored_steps(run)]


def import_all(path: Path) -> list[tuple[Run, list[StoredStep]]]:
    """Every trajectory in `path` saved into its own run, with the stored steps in order."""
    saved = []
    for parsed in read_trajectories(path):
        run = make_run()
        save_steps(run, parsed)
        run.refresh_from_db()
        saved.append((run, stored_steps(run)))
    return saved
