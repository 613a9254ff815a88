"""The in-process runner's live trajectory: new lines of the agent's trajectory file (runner.host.live's
readers) appended to the run's trajectory in the database as they arrive. A remote runner sends the
same lines to the site instead (runner.remote.task), which appends them there."""

from __future__ import annotations

from pathlib import Path

from runner.host.live import LineTail
from runner.host.secrets import Redactor


class TrajectoryStream:
    """New lines of the agent's trajectory file (and of `gateway`, the LLM gateway's steps in the
    runner's folder) -> steps appended to the run's live trajectory, in the order they arrive. Only the
    gateway's lines become gateway-recorded steps; the agent's are its own claims."""

    def __init__(
        self,
        run,
        root: Path,
        name: str,
        redactor: Redactor,
        gateway: tuple[Path, str] | None = None,
        most: int | None = None,
    ) -> None:
        from leaderboard.runs.job_runs import LiveSteps

        self.tail, self.redactor = LineTail(root, name, most=most), redactor
        self.gateway_tail = LineTail(*gateway) if gateway is not None else None
        self.steps = LiveSteps(run)

    def pump(self, fence) -> int:
        if not self.steps.available:
            return 0
        agent = [(lineno, self.redactor.bytes(line)) for lineno, line in self.tail.new_lines()]
        gateway = [
            (lineno, self.redactor.bytes(line))
            for lineno, line in (self.gateway_tail.new_lines() if self.gateway_tail else [])
        ]
        return self.steps.append(agent, fence, gateway)

    def close(self) -> None:
        self.steps.close()
