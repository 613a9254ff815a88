"""Where a competition's grading files are: its registered private answers, and the sample submission that
stands in for them while the answers are not there (engine.check_format)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from django.core.exceptions import ObjectDoesNotExist

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
