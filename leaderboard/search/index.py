"""Keeping the index in step with the stored steps. The store calls `index_trajectory` with the
steps it stored, in the transaction that writes a run's steps (an import, a re-import, a job's final trajectory) and
`index_steps` for each batch of a live run; rows go with their trajectory and run by cascade, so a
deletion needs nothing here. `manage.py index_search` builds the rows of runs stored before."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice

from django.db import connection, transaction

from leaderboard.search.engines import FTS_TABLE
from leaderboard.search.models import StepText
from leaderboard.search.text import fold, step_text, word_set

BATCH = 500


INSERT = ('INSERT INTO leaderboard_steptext (trajectory_id, run_id, "index", kind, text, words) VALUES ')
ROW = "(%s, %s, %s, %s, %s, %s)"


def rows_of(trajectory, texts: Iterable[tuple[int, str, str]]) -> Iterator[tuple]:
    """(index, kind, searchable text) -> the row's values."""
    with_words = connection.vendor == "postgresql"
    for index, kind, text in texts:
        yield (trajectory.pk, trajectory.run_id, index, kind, text, word_set(fold(text)) if with_words else "")


def index_steps(trajectory, steps: Iterable, first: int | None = None) -> int:
    """Add rows for these steps (StepData or stored steps) of the trajectory; returns how many. A
    live run's batch passes `first`, the index its first step is stored at (the file's count)."""
    texts = ((step.index if first is None else first + k, step.kind,
              step_text(step.title or "", step.text or "", step.data)) for k, step in enumerate(steps))
    return _insert(trajectory, texts)


def _insert(trajectory, texts: Iterable[tuple[int, str, str]]) -> int:
    """One statement per batch of rows (model instances and bulk_create cost 4x more on an import's
    hot path): on PostgreSQL one INSERT of many rows (executemany there is a round trip a row), on
    SQLite executemany, then the batch into the FTS table as one statement (engines.py)."""
    count, rows = 0, rows_of(trajectory, texts)
    postgresql = connection.vendor == "postgresql"
    with connection.cursor() as cursor:
        while batch := list(islice(rows, BATCH)):
            if postgresql:
                cursor.execute(INSERT + ", ".join([ROW] * len(batch)), [v for row in batch for v in row])
            else:
                cursor.executemany(INSERT + ROW, batch)
                cursor.execute(f"INSERT INTO {FTS_TABLE}(rowid, text) SELECT id, text FROM leaderboard_steptext "
                               'WHERE run_id = %s AND "index" BETWEEN %s AND %s AND trajectory_id = %s',
                               [trajectory.run_id, batch[0][2], batch[-1][2], trajectory.pk])
            count += len(batch)
    return count


def index_trajectory(trajectory, steps: Iterable) -> int:
    """The rows of a whole trajectory, replacing any it had; returns how many. `steps`: all of its
    steps, as the store reads them back (the store passes them: search knows nothing of its files)."""
    with transaction.atomic():
        StepText.objects.filter(trajectory=trajectory).delete()
        return index_steps(trajectory, steps)
