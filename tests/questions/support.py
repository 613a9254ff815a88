"""Helpers for the saved-question tests (no tests here): runs of two experiments with public and
private runs of two owners, and a brute-force count that reads the stored steps run by run."""

from __future__ import annotations

import random
from collections import Counter

from leaderboard.failures.signatures import from_error
from leaderboard.models import Run
from leaderboard.questions.models import SavedQuestion
from leaderboard.search.query import parse
from leaderboard.search.text import step_text
from leaderboard.trajectories.store import StoredTrajectory
from tests.search.support import generated_texts, run_with, scan_matches

ERRORS = [
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
    "KeyError: 'col_{n}'",
    "FileNotFoundError: [Errno 2] No such file: '/data/test_labels_{n}.csv'",
    "ValueError: shapes ({n},) and (3,) not aligned",
]
TRACEBACK = "Traceback (most recent call last)"


def seen_by(user, run: Run) -> bool:
    """Visibility written out: public, or the viewer's own, or any for staff."""
    if user is not None and user.is_staff:
        return True
    return not run.is_private or (user is not None and run.owner_id == user.pk)


def generated_runs(owners: list, n: int = 24) -> list[Run]:
    """n runs over two experiments, some private, some failed with an error that varies in its numbers."""
    rng, runs = random.Random(7), []
    for i in range(n):
        texts = generated_texts(100 + i, rng.randint(3, 25))
        failed = rng.random() < 0.6
        if failed and rng.random() < 0.8:
            texts.append(("error", rng.choice(ERRORS).format(n=rng.randint(0, 999))))
        owner = owners[i % len(owners)]
        outcome = {"score": None} if failed else {"score": 0.5, "submission_exists": True, "valid_submission": True}
        runs.append(
            run_with(
                texts,
                agent=f"agent-{i % 2}",
                owner=owner,
                private=owner is not None and i % 3 == 0,
                status=Run.Status.GRADED,
                **outcome,
            )
        )
    return runs


def brute_force_counts(question: SavedQuestion, user, runs: list[Run]) -> Counter:
    """experiment id -> runs the viewer may see that the question matches, from the stored steps."""
    found = Counter()
    for run in runs:
        run.refresh_from_db()
        if seen_by(user, run) and _matches(question, run):
            found[run.experiment_id] += 1
    return found


def _matches(question: SavedQuestion, run: Run) -> bool:
    steps = list(StoredTrajectory.of(run).steps())
    if question.kind == SavedQuestion.Kind.FAILURE:
        label = _failure_label(run, steps)
        return label is not None and question.signature_matches(label)
    terms = [(t.kind, t.value) for t in parse(question.query).terms]
    kind = question.filters.get("kind", "")
    return any((not kind or s.kind == kind) and scan_matches(step_text(s.title, s.text, s.data), terms) for s in steps)


def _failure_label(run: Run, steps: list) -> str | None:
    """The signature of a run with no file and no job: its last error step's, or "no submission";
    None for a run that did not fail."""
    if run.status != Run.Status.GRADED or run.score is not None or run.submission_exists:
        return None
    errors = [s for s in steps if s.kind == "error" or TRACEBACK in _text(s) or "Error: " in _text(s)]
    return from_error(_text(errors[-1])) if errors else "no submission"


def _text(step) -> str:
    return step_text(step.title, step.text, step.data)
