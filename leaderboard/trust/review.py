"""Scanning a run: every registered check (and the LLM judge, when one is configured) turned into the
run's Finding rows, one per check.

Scanning again is safe and is how a run is re-checked: a check that fires updates its open finding in
place (summary, steps, evidence, severity); a check that no longer fires removes its open finding; a
finding staff confirmed or dismissed is theirs and stays as they left it. Every way a run comes in ends
in leaderboard.runs.outcome, which calls `schedule_review` once the run's outcome commits.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import transaction

from leaderboard.models import Run
from leaderboard.trust import judge, similarity
from leaderboard.trust.checks import Hit, run_checks
from leaderboard.trust.models import Finding
from webapp import queue

log = logging.getLogger(__name__)

Reviewer = Callable[[Run], dict[str, Hit | None]]


def code_similarity(run: Run) -> dict[str, Hit | None]:
    """Fingerprint the run's code and compare it (leaderboard.trust.similarity). Its `code-similarity`
    findings concern pairs of runs, so the index keeps them on both sides itself: nothing to return."""
    similarity.index_run(run)
    return {}


# Each reviewer returns {check name: Hit, or None for "does not fire"} for the checks it owns; a name
# it leaves out is left alone (the judge, switched off, leaves its earlier findings as they are).
REVIEWERS: list[Reviewer] = [run_checks, judge.review, code_similarity]


def review_run(run: Run | int) -> list[Finding]:
    """Run every reviewer over the run and store what they found; returns the run's findings."""
    run = Run.objects.select_related("competition__answers", "experiment").get(pk=getattr(run, "pk", run))
    hits: dict[str, Hit | None] = {}
    for reviewer in REVIEWERS:
        hits.update(reviewer(run))
    with transaction.atomic():
        store_hits(run, hits)  # each change raises the leaderboard's version (trust.models' signals)
    return list(run.findings.all())


def store_hits(run: Run, hits: dict[str, Hit | None]) -> bool:
    """Upsert the findings of these checks on the run; returns whether anything changed."""
    existing = {f.check_name: f for f in Finding.objects.select_for_update().filter(run=run, check_name__in=hits)}
    changed = False
    for name, hit in hits.items():
        finding = existing.get(name)
        if finding is not None and finding.status != Finding.Status.OPEN:
            continue  # a staff decision stands
        if hit is None:
            if finding is not None:
                finding.delete()
                changed = True
            continue
        fields = {"severity": hit.severity, "summary": hit.summary[:2000], "steps": list(hit.steps),
                  "evidence": hit.evidence}
        if finding is None:
            Finding.objects.create(run=run, check_name=name, **fields)
            changed = True
        elif any(getattr(finding, k) != v for k, v in fields.items()):
            for key, value in fields.items():
                setattr(finding, key, value)
            finding.save(update_fields=list(fields))
            changed = True
    return changed


def schedule_review(run_id: int) -> None:
    """Scan the run once the current transaction commits (now, outside one), in a worker."""
    transaction.on_commit(lambda: _publish(run_id))


def _publish(run_id: int) -> None:
    queue.publish(queue.REVIEW_RUN, [run_id], what=f"the rule checks of run {run_id}")
