"""Keeping the index in step with the stored steps. The store calls `index_trajectory` in the
transaction that writes a run's steps (an import, a re-import, a job's final trajectory) and
`index_steps` for each batch of a live run; rows go with their trajectory and run by cascade, so a
deletion needs nothing here. `manage.py index_search` builds the rows of runs stored before."""

from __future__ import annotations

from collections.abc import Iterable

from django.db import connection, transaction

from leaderboard.search.models import StepText
from leaderboard.search.text import fold, step_text, word_set

BATCH = 500


def rows_of(trajectory, steps: Iterable, first: int | None = None) -> Iterable[StepText]:
    with_words = connection.vendor == "postgresql"
    for k, step in enumerate(steps):
        text = step_text(step.title or "", step.text or "", step.data)
        index = step.index if first is None else first + k
        yield StepText(trajectory_id=trajectory.pk, run_id=trajectory.run_id, index=index, kind=step.kind,
                       text=text, words=word_set(fold(text)) if with_words else "")


def index_steps(trajectory, steps: Iterable, first: int | None = None) -> int:
    """Add rows for these steps (StepData or stored steps) of the trajectory; returns how many. A
    live run's batch passes `first`, the index its first step is stored at (the file's count)."""
    count, batch = 0, []
    for row in rows_of(trajectory, steps, first):
        batch.append(row)
        if len(batch) >= BATCH:
            count += len(StepText.objects.bulk_create(batch))
            batch = []
    if batch:
        count += len(StepText.objects.bulk_create(batch))
    return count


def index_trajectory(trajectory) -> int:
    """The rows of a whole stored trajectory, replacing any it had; returns how many."""
    from leaderboard.trajectories.store import StoredTrajectory

    with transaction.atomic():
        StepText.objects.filter(trajectory=trajectory).delete()
        return index_steps(trajectory, StoredTrajectory(trajectory, run_id=trajectory.run_id).steps())
