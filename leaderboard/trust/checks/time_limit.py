"""Time limit overrun: the run took longer than its experiment's time limit. MLE-bench compares agents
at a fixed budget (24 hours in its paper), so a result after the limit is not comparable with one
within it. The duration is the run's recorded one (a job's wall clock, an upload's log), else the
last step's time; a small grace covers the runner stopping a sandbox (SIGTERM, then a kill)."""

from __future__ import annotations

from django.conf import settings

from leaderboard.trust.checks.base import Check, Hit, register


@register
class TimeLimit(Check):
    name = "time-limit"
    title = "Time limit overrun"
    rule = "A run ends within its experiment's time limit."

    def begin(self, context) -> None:
        super().begin(context)
        hours = context.run.experiment.time_limit_hours
        self.limit_s = hours * 3600 if hours else None
        self.grace_s = max(settings.TRUST_TIME_LIMIT_GRACE_S, (self.limit_s or 0) * 0.01)
        self.late: list[int] = []
        self.last_t: float | None = None

    def see(self, step) -> None:
        if step.t is None:
            return
        self.last_t = step.t if self.last_t is None else max(self.last_t, step.t)
        if self.limit_s is not None and step.t > self.limit_s + self.grace_s and len(self.late) < 5:
            self.late.append(step.index)

    def end(self) -> Hit | None:
        if self.limit_s is None:
            return None
        run = self.context.run
        duration = run.duration_s if run.duration_s is not None else self.last_t
        if duration is None or duration <= self.limit_s + self.grace_s:
            return None
        over = duration - self.limit_s
        source = "the run's recorded duration" if run.duration_s is not None else "the last step's time"
        return Hit("violation", f"The run took {_hours(duration)}, {_hours(over)} past its time limit of "
                                f"{_hours(self.limit_s)} ({source}).",
                   self.late, {"duration_s": round(duration, 1), "limit_s": self.limit_s,
                               "grace_s": self.grace_s, "source": source})


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:.2f} h" if seconds >= 3600 else f"{seconds / 60:.1f} min"
