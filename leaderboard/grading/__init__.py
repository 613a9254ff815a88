"""The grading engine: metric registry, per-competition specs, validation and reports.

Public API: grade_submission, grader_for, grading_available, GradingReport.
"""

from __future__ import annotations

from .engine import grade_submission
from .report import GradingReport
from .spec_types import GraderSpec
from .specs import grader_for, grading_available

__all__ = ["GraderSpec", "GradingReport", "grade_submission", "grader_for", "grading_available"]
