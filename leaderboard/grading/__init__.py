"""The grading engine: metric registry, per-competition specs, validation and reports.

Public API: grade_submission, grader_for, grading_available, GradingReport.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .report import GradingReport
from .spec_types import GraderSpec
from .specs import grader_for, grading_available

if TYPE_CHECKING:
    from .engine import grade_submission

__all__ = ["GraderSpec", "GradingReport", "grade_submission", "grader_for", "grading_available"]


def __getattr__(name: str):
    # The engine reads CSVs with pandas: imported when a submission is graded, not when a page or a
    # management command only asks whether a competition can be graded.
    if name == "grade_submission":
        from .engine import grade_submission

        return grade_submission
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
