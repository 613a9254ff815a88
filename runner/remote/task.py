"""One claimed task on a remote runner, from its data to its finish:

    outcome = run_task(client, claim, backend, work_dir=..., cache=..., runner_name=...)

The sandbox is runner.backends's, and the readers of what the agent leaves are runner.host's: new
trajectory lines (runner.host.live.LineTail), changed submissions (runner.host.live.SnapshotWatch,
within their share of the run's limits), the outputs at the end (runner.host.outputs.collect_outputs:
regular files only, bounded, redacted) and the outcome rules (runner.host.outcomes). What the run
needs goes to the site through the runner API: the lease renewed at every poll (which also says
whether the job was cancelled), steps, snapshots, the files, the finish. If the site says the task is
no longer this runner's (fenced, another runner's, a revoked token) or stays away past the client's
bounded wait, the sandbox is stopped and nothing more is written: the site's lease runs out and the
task goes back to the queue.
"""

from __future__ import annotations

import dataclasses
import logging
import shutil
import time
from datetime import datetime
from pathlib import Path

from django.conf import settings

from runner.backends import TOOLS_DIR, Backend, BackendUnavailable, ImageNotFound, SandboxSpec, StartFailed
from runner.client import SiteClient
from runner.gateway import STEPS_FILE
from runner.host import outcomes
from runner.host.live import LineTail, SnapshotWatch
from runner.host.outcomes import Outcome
from runner.host.output_budget import Budget
from runner.host.outputs import SUBMISSION_FILE, TRAJECTORY_FILE, Limits, Stored, collect_outputs
from runner.host.scratch import Scratch
from runner.host.secrets import Redactor
from runner.remote import agents, research
from runner.remote.data import DataCache
from runner.remote.llm import GatewayFailed, RemoteLlm

log = logging.getLogger(__name__)
LOG_TAIL_BYTES = 16_384
LOG_TAIL_EVERY_S = 3.0
OUTPUT_LOG_BYTES = 8 << 20
STEP_BATCH_BYTES = 1 << 20
SNAPSHOT_SHARE = 2  # snapshots' part of the run's output limits: 1/2


class EngineDown(Exception):
    """The sandbox engine was down before the agent started; the task was handed back to the site,
    which now has it as `status` ("queued", or "failed" past its retries)."""

    def __init__(self, error: str, status: str) -> None:
        super().__init__(error)
        self.status = status


def run_task(
    client: SiteClient, claim: dict, backend: Backend, *, work_dir: Path, cache: DataCache, runner_name: str
) -> Outcome:
    """Run the claimed task to its finish on the site. Raises the client's Revoked, Fenced, Forbidden
    or SiteLost when the site no longer takes this attempt's writes (its sandbox stopped first), and
    EngineDown when the sandbox engine was down before the agent started (the task handed back)."""
    scratch = Scratch(
        work_dir / f"task-{claim['task']}-a{claim['lease']['attempt']}",
        claim["limits"]["disk_quota_bytes"],
        mount=settings.JOB_DISK_QUOTA_MOUNT,  # this runner's operator's choice (runner.remote.settings)
    )
    try:
        data_dir = cache.folder(client, claim, tick=_every(claim["timing"]["poll_s"] * 5, lambda: client.renew(claim)))
        spec = _spec(claim, backend, scratch, data_dir, runner_name)
        return _run(client, claim, backend, spec, scratch, agents_dir=cache.root / "agents")
    except BackendUnavailable as exc:  # before the agent started: the site takes it back, no attempt spent
        error = Redactor(claim["redact"]).text(f"{backend.name} unavailable: {exc}")
        raise EngineDown(error, client.release(claim, error).get("status", "")) from exc
    finally:
        scratch.delete()
        shutil.rmtree(scratch.path.parent / f"{scratch.path.name}.runner", ignore_errors=True)


def _run(
    client: SiteClient, claim: dict, backend: Backend, spec: SandboxSpec, scratch: Scratch, *, agents_dir: Path
) -> Outcome:
    llm = RemoteLlm(claim)
    try:
        return _run_with(client, claim, backend, spec, scratch, llm, agents_dir)
    finally:
        llm.stop()


def _run_with(
    client: SiteClient,
    claim: dict,
    backend: Backend,
    spec: SandboxSpec,
    scratch: Scratch,
    llm: RemoteLlm,
    agents_dir: Path,
) -> Outcome:
    limits = Limits(**{k: claim["limits"][k] for k in ("file_bytes", "total_bytes", "files")})
    try:  # an MLE-bench-packaged agent: its image built here, MLE-bench's contract (runner.remote.agents)
        spec = llm.start(spec, backend, adapt=agents.adapter(client, claim, backend, agents_dir))
        if client.renew(claim).get("cancel", False):  # cancelled while its data or its image was made ready
            outcome = Outcome(outcomes.CANCELLED, "cancelled before its sandbox started")
            return _finish(client, claim, outcome, spec, Redactor([*claim["redact"], *llm.hidden()]), limits, None, llm)
        sandbox = backend.start(spec)
    except (ImageNotFound, StartFailed, GatewayFailed, agents.AgentUnavailable) as exc:  # permanent: say which
        outcome = Outcome(outcomes.FAILED, f"{exc.__class__.__name__}: {exc}")
        return _finish(client, claim, outcome, spec, Redactor([*claim["redact"], *llm.hidden()]), limits, None, llm)
    redactor = Redactor([*claim["redact"], *llm.hidden()])  # the run's token too, where the agent prints it
    try:
        llm.agent_started()  # until the site answers with the start it recorded
        llm.agent_started(_instant(client.start(claim, _recipe(claim, backend, spec)).get("agent_started_at")))
        watch = Watch(client, claim, spec, sandbox, scratch, redactor, limits, llm)
        outcome = watch.run()
    except BaseException:
        _stop(sandbox, claim["timing"]["stop_grace_s"])
        raise
    finally:
        _keep_output(sandbox)
        sandbox.remove()
    return _finish(client, claim, outcome, spec, redactor, limits, watch, llm)


class Watch:
    """The sandbox while it runs: every poll renews the lease, streams new lines and keeps a changed
    submission; it ends the agent at the time limit, on cancellation or past its disk quota."""

    def __init__(
        self,
        client: SiteClient,
        claim: dict,
        spec: SandboxSpec,
        sandbox,
        scratch: Scratch,
        redactor: Redactor,
        limits: Limits,
        llm: RemoteLlm | None = None,
    ) -> None:
        self.client, self.claim, self.spec, self.sandbox, self.scratch = client, claim, spec, sandbox, scratch
        self.llm = llm
        self.redactor, self.timing = redactor, claim["timing"]
        self.tail = LineTail(spec.host_logs_dir, TRAJECTORY_FILE, most=limits.total_bytes)
        self.gateway_tail = LineTail(spec.runner_dir, STEPS_FILE)
        self.snapshots = SnapshotWatch(
            spec.host_submission_dir, SUBMISSION_FILE, redactor, Budget.share_of(limits, SNAPSHOT_SHARE)
        )
        self.research = research.snapshots(claim, spec)  # a research task's workspace snapshots
        self.started = time.monotonic()
        self.last_tail, self.cancelled, self.kept = 0.0, False, 0

    def run(self) -> Outcome:
        while True:
            code = self.sandbox.poll()
            self.tick(final=code is not None)
            if code is not None:
                return outcomes.sandbox_ended(self.sandbox, self.scratch, code)
            if self.cancelled:
                return self._stop(outcomes.CANCELLED, "cancelled")
            if spent := (self.llm.budget_spent() if self.llm else ""):
                return self._stop(outcomes.SUCCEEDED, spent)
            if self.elapsed() >= self.spec.time_limit_s:
                return self._stop(outcomes.TIMED_OUT, f"stopped at the {self.spec.time_limit_s:g} s limit")
            if self.scratch.over_quota_due():
                return self._stop(outcomes.FAILED, self.scratch.quota_note)
            time.sleep(self.timing["poll_s"])

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def notes(self) -> list[str]:
        return [*self.tail.notes, *self.snapshots.notes, *(self.research.notes if self.research else [])]

    def tick(self, final: bool = False) -> None:
        tail = None
        if final or time.monotonic() - self.last_tail >= LOG_TAIL_EVERY_S:
            self.last_tail = time.monotonic()
            tail = self.redactor.text(self.sandbox.output_tail(LOG_TAIL_BYTES), cut_start=True)
        self.cancelled = self.client.renew(self.claim, tail).get("cancel", False)
        self._send_steps()
        self._snapshot()
        if self.research is not None:
            self.research.tick(self.elapsed())

    def _send_steps(self) -> None:
        agent = [(n, self.redactor.bytes(line)) for n, line in self.tail.new_lines()]
        gateway = [(n, self.redactor.bytes(line)) for n, line in self.gateway_tail.new_lines()]
        while agent or gateway:
            batch_a, agent = _batch(agent)
            batch_g, gateway = _batch(gateway)
            self.client.steps(self.claim, batch_a, batch_g)

    def last_gateway_steps(self) -> None:
        """The gateway's lines it wrote out on stopping, after the sandbox's last tick."""
        while gateway := [(n, self.redactor.bytes(line)) for n, line in self.gateway_tail.new_lines()]:
            while gateway:
                batch, gateway = _batch(gateway)
                self.client.steps(self.claim, [], batch)

    def _snapshot(self) -> None:
        content = self.snapshots.changed()
        if content is None:
            return
        seconds = round(self.elapsed(), 1)
        self.kept += 1
        path = self.spec.runner_dir / f"snapshot-{self.kept}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        key = f"snap-{self.kept:05d}"
        self.client.upload(self.claim, key, path, name=f"snapshots/{seconds}.csv", kind="snapshot")
        if not self.client.snapshot(self.claim, key, seconds).get("kept"):
            self.snapshots.give_back(content)
        path.unlink()

    def _stop(self, status: str, why: str) -> Outcome:
        code = self.sandbox.stop(self.timing["stop_grace_s"])
        self.tick(final=True)
        return Outcome(status, why, code)


def _batch(lines: list[tuple[int, bytes]]) -> tuple[list, list]:
    size, at = 0, 0
    while at < len(lines) and (at == 0 or size + len(lines[at][1]) <= STEP_BATCH_BYTES):
        size += len(lines[at][1])
        at += 1
    return lines[:at], lines[at:]


def _finish(
    client: SiteClient,
    claim: dict,
    outcome: Outcome,
    spec: SandboxSpec,
    redactor: Redactor,
    limits: Limits,
    watch: Watch | None,
    llm: RemoteLlm | None = None,
) -> Outcome:
    """Upload what the run keeps (each file once, resumable) and end the task on the site, with the
    gateway's meter (its last steps sent first: stopping it writes them out)."""
    meter = llm.finish(redactor) if llm else None
    if watch is not None:
        watch.last_gateway_steps()
    files: list[tuple[str, str, Path]] = []
    wrapped = research.wrap_up(  # a research task's snapshot zips, charged to the outputs' limits
        claim, spec, watch.research if watch else None, redactor, limits, watch.elapsed() if watch else None
    )
    stored = collect_outputs(
        spec,
        redactor,
        lambda kind, name, path: files.append((kind, name, path)),
        limits,
        wrapped.charged(watch.snapshots.budget if watch else None),
        name_chars=claim["limits"]["name_chars"],
    )
    files += wrapped.files
    keys = []
    for index, (kind, name, path) in enumerate(files):
        key = f"out-{index:05d}"
        client.upload(claim, key, path, name=name, kind=kind)
        keys.append(key)
    client.finish(claim, {**_report(outcome, redactor, stored, watch, keys), "llm": meter, **wrapped.report})
    return outcome


def _report(outcome: Outcome, redactor: Redactor, stored: Stored, watch: Watch | None, keys: list[str]) -> dict:
    return {
        "status": outcome.status,
        "error": redactor.text(outcome.error),
        "exit_code": outcome.exit_code,
        "counted": outcome.counted,
        "files": keys,
        "trajectory_from": stored.trajectory_from,
        "trajectory_cut": stored.trajectory_cut,
        "submission_problem": stored.submission_problem,
        "notes": [redactor.text(note) for note in (watch.notes() if watch else []) if note] + stored.notes,
    }


def _spec(claim: dict, backend: Backend, scratch: Scratch, data_dir: Path, runner_name: str) -> SandboxSpec:
    box = claim["sandbox"]
    scratch.create()
    (scratch.path / "code").mkdir(parents=True, exist_ok=True)
    site = getattr(backend, "site", "")[:8]  # several sites can share one Docker host
    spec = SandboxSpec(
        name=f"medalboard-{runner_name}-{site}-task-{claim['task']}-a{claim['lease']['attempt']}",
        command=list(box["command"]),
        data_dir=data_dir,
        workdir=scratch.path,
        tools_dir=TOOLS_DIR,
        image=box["image"],
        env=dict(box["env"]),
        gpus=tuple(box["gpus"]),
        cpus=box["cpus"],
        memory_bytes=box["memory_bytes"],
        time_limit_s=box["time_limit_s"],
        network=box["network"],
    )
    if claim.get("research"):  # the workspace copied from env/, the problem, the read-only files
        spec = research.prepare(claim, spec, backend)
    paths = backend.paths(spec)
    if (spec.data_dir / "description.md").is_file():
        description = f"{paths.data}/description.md"
    else:
        (scratch.path / "code" / "description.md").write_text(claim["description"])
        description = f"{paths.code}/description.md"
    variables = {**paths.env(), "DESCRIPTION_FILE": description}
    command = [_placeholders(part, variables) for part in box["command"]]
    return dataclasses.replace(spec, command=command, env={**spec.env, "DESCRIPTION_FILE": description})


def _instant(iso) -> float | None:
    """A time the site sent (ISO 8601) as a timestamp; None for anything else."""
    try:
        return datetime.fromisoformat(iso).timestamp() if isinstance(iso, str) else None
    except ValueError:
        return None


def _placeholders(part: str, variables: dict[str, str]) -> str:
    for name, value in variables.items():
        part = part.replace("{" + name + "}", value)
    return part


def _recipe(claim: dict, backend: Backend, spec: SandboxSpec) -> dict:
    """How the sandbox ran, as only the runner knows it (its backend's description: the runtime, the
    image's id); the site records it in the run's recipe with what it knows (runner.jobs.recipes.from_remote)."""
    try:
        described = dict(backend.describe(spec))
    except Exception as exc:  # noqa: BLE001 - a record, never a reason to stop the run
        described = {"backend": backend.name, "error": str(exc)[:200]}
    return {"sandbox": described}


def _keep_output(sandbox) -> None:
    path = sandbox.spec.host_output_log
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(sandbox.output_tail(OUTPUT_LOG_BYTES))


def _stop(sandbox, grace_s: float) -> None:
    try:
        sandbox.stop(grace_s)
    except Exception:  # noqa: BLE001 - remove() kills what is left
        log.exception("stopping sandbox %s failed", sandbox.spec.name)


def _every(seconds: float, action):
    last = [time.monotonic()]

    def tick() -> None:
        if time.monotonic() - last[0] >= seconds:
            last[0] = time.monotonic()
            action()

    return tick
