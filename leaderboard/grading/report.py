"""The grading report: MLE-bench's report fields plus where the score lands among human teams."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime

from leaderboard.competitions import medals


@dataclass
class GradingReport:
    competition_id: str
    score: float | None = None
    gold_threshold: float | None = None
    silver_threshold: float | None = None
    bronze_threshold: float | None = None
    median_threshold: float | None = None
    any_medal: bool = False
    gold_medal: bool = False
    silver_medal: bool = False
    bronze_medal: bool = False
    above_median: bool = False
    submission_exists: bool = False
    valid_submission: bool = False
    is_lower_better: bool | None = None
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    human_rank: int | None = None
    beats_human_pct: float | None = None
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    grading_available: bool = True  # False: nothing was judged (no grader, answers missing or unreadable)
    awaiting_answers: bool = False  # True: the file's format passed; the answers are not registered yet
    metric: str | None = None
    grader: str | None = None  # which grader judged it (specs.grader_name); None: no grader exists

    def set_thresholds(self, thresholds: medals.Thresholds | None) -> None:
        if thresholds is None:
            self.notes.append("no human baseline available: no medals or human rank")
            return
        self.gold_threshold, self.silver_threshold = thresholds.gold, thresholds.silver
        self.bronze_threshold, self.median_threshold = thresholds.bronze, thresholds.median

    def set_score(self, score: float, thresholds: medals.Thresholds | None, human_scores: list[float]) -> None:
        """A valid score: rounded as MLE-bench does, medals from medals.award, placing from medals.place."""
        self.score = medals.round_score(score)
        self.valid_submission = True
        awarded = medals.award(self.score, thresholds)
        self.gold_medal, self.silver_medal, self.bronze_medal = awarded.gold, awarded.silver, awarded.bronze
        self.above_median, self.any_medal = awarded.above_median, awarded.any
        if human_scores and self.is_lower_better is not None:
            placing = medals.place(self.score, human_scores, self.is_lower_better)
            self.human_rank, self.beats_human_pct = placing.rank, round(placing.beats_pct, 2)

    def to_dict(self) -> dict:
        data = asdict(self)
        data["created_at"] = self.created_at.isoformat()
        return data
