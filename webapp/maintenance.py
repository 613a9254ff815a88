"""The site-wide sweep, which every worker runs (webapp.worker.RecoveryStep) and the `runner.tasks.sweep`
task runs for deployments that schedule it with celery beat.

It joins the two apps' recoveries, so it lives above both: the job tasks' (runner.jobs.sweep: expired
job leases, tasks never published, GPUs held by tasks that no longer run), the grading's
(leaderboard.runs.recovery: runs and snapshots), the uploads' (leaderboard.runs.intake: intakes
nobody picked up, expired import claims), the orphaned files' (leaderboard.runs.orphans) and the research
baselines' (runner.research.baseline_sweep: asked for while the broker was down, or lost with their runner).
Expired claims of all four kinds of leased work go through the one lease machine's
`webapp.leases.sweep_expired`. Every step makes conditional UPDATEs on the state it read, so
concurrent sweepers are safe.
"""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)


def sweep() -> dict[str, int]:
    """One pass of every recovery; safe to run anywhere, any number of times at once."""
    from leaderboard.runs.intake import sweep_intakes
    from leaderboard.runs.orphans import sweep_orphans_when_due
    from leaderboard.runs.recovery import sweep_grading, sweep_snapshots
    from runner.jobs.sweep import sweep_tasks
    from runner.research.baseline_sweep import sweep_baselines

    counts = {**sweep_tasks(), **sweep_grading(), **sweep_snapshots(), **sweep_intakes(),
              **sweep_orphans_when_due(), **sweep_baselines()}
    if any(counts.values()):
        log.info("sweep: %s", counts)
    return counts
