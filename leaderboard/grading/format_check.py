"""Checking a submission's format before the private answers are there to score it.

A site that has no answers for a competition cannot grade its runs yet; that is the site's state,
not a fault of the file, so such runs wait (Run.Status.WAITING) until `manage.py regrade` scores
them. The file is still checked now, as far as the site can: against the sample submission when one
is registered (the public data `mlebench prepare` made), or else against what the grader itself
knows (a readable CSV with the id column and the named prediction columns).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from django.core.exceptions import ObjectDoesNotExist

from .spec_types import GraderSpec

if TYPE_CHECKING:
    from leaderboard.models import Competition

SAMPLE_NAME = "sample_submission.csv"


def sample_submission(competition: Competition) -> Path | None:
    """The registered sample submission, or the public data folder's; None when neither exists."""
    candidates = []
    try:
        candidates.append(competition.answers.sample_submission_path)
    except ObjectDoesNotExist:
        pass
    public = getattr(competition, "public_data_dir", "")  # registered by import_competitions --data-dir
    if public:
        candidates.append(str(Path(public) / SAMPLE_NAME))
    for candidate in candidates:
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


def answers_file(competition: Competition) -> Path | None:
    """The registered private answers, when the file is really there (a registered path whose file
    is missing cannot grade anything either)."""
    try:
        path = competition.answers.answers_path
    except ObjectDoesNotExist:
        return None
    return Path(path) if path and Path(path).is_file() else None


def competitions_with_answers() -> set[int]:
    """Ids of the competitions whose registered answers file exists, for lists (one query)."""
    from leaderboard.models import CompetitionAnswers

    rows = CompetitionAnswers.objects.exclude(answers_path="").values_list("competition_id", "answers_path")
    return {competition_id for competition_id, path in rows if Path(path).is_file()}


def check_format(spec: GraderSpec, submission: Path, sample: Path | None) -> str:
    """What the check compared against; SubmissionError when the file is not a valid submission."""
    from . import reading, validation  # pandas: when a file is checked, not when a page names answers

    if sample is not None:
        return _against_sample(spec, submission, sample)
    header = reading.read_header(submission)
    validation.check_header(header, _known_targets(spec), False, spec.id_column)
    frame = reading.read_frame(submission, spec.id_column, [], [], every_column=True)
    validation.check_not_empty(len(frame))
    return "the grader's columns (no sample submission registered: ids and values are checked once answers arrive)"


def _against_sample(spec: GraderSpec, submission: Path, sample: Path) -> str:
    """The sample submission stands in for the answers: same ids, same columns, values of the right kind.
    Its own values are placeholders, so only SubmissionError counts; anything the sample cannot stand
    in for (a grader that needs answer-only columns) falls back to comparing headers."""
    from . import reading, validation
    from .engine import score_files
    from .validation import SubmissionError

    try:
        score_files(spec, submission, sample)
    except SubmissionError:
        raise
    except Exception:  # noqa: BLE001 - the sample is not an answers file for this grader
        sample_header = reading.read_header(sample)
        targets = [c for c in sample_header if c != spec.id_column]
        validation.check_header(reading.read_header(submission), targets, False, spec.id_column)
        frame = reading.read_frame(submission, spec.id_column, [], [], every_column=True)
        validation.check_not_empty(len(frame))
        return "the sample submission's columns"
    return "the sample submission (columns, ids and values)"


def _known_targets(spec: GraderSpec) -> list[str]:
    if spec.positional_columns:
        return []
    return list(spec.submission_targets or spec.target_columns or ()) + list(spec.required_columns)
