"""The one door through which a runner (runner/) creates, streams into, stores, grades and fails the
run of a job task.

runner/ imports nothing else of leaderboard but its models, so what a job does to its run is the
list of functions here, and the runs write side behind them can change without a runner noticing.
The steps' JSONL lines (`header_line`, `step_line`) are named here too: agents and the LLM gateway
write their trajectories in the format the site reads (docs/trajectory-format.md).
"""

from __future__ import annotations

import logging
import os
import re
from array import array
from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime
from itertools import chain
from pathlib import Path
from typing import Any

from django.core.exceptions import SuspiciousFileOperation
from django.core.files import File
from django.db import DatabaseError, transaction
from django.utils import timezone

from leaderboard.lib import chat
from leaderboard.models import Artifact, Experiment, LanguageModel, Run
from leaderboard.runs import snapshots
from leaderboard.runs.artifacts import MAX_MEMBER_PATH, STORAGE_ERRNOS, Upload, store_upload
from leaderboard.runs.experiments import ExperimentSpec, get_or_create_experiment, with_model
from leaderboard.runs.job_run_rows import (
    fail_job_run,
    hold_for_research_scoring,
    record_invalid_submission,
    record_job_end,
    record_usage,
    restart_job_run,
    start_job_run,
)
from leaderboard.runs.research import ResearchEvidence, record_research_result
from leaderboard.runs.research_traces import (
    REMOTE_JOB_REPORT,
    Workspaces,
    ask_a_runner,
    is_remote_job_to_score,
    record_trace_scores,
    unpack_workspaces,
)
from leaderboard.runs.snapshots import SnapshotError
from leaderboard.trajectories.importers.base import to_count, to_float  # a run's numbers as its columns hold them
from leaderboard.trajectories.importers.jsonl import header_line, step_line
from leaderboard.trust import disclosures
from leaderboard.trust.reproductions import may_reproduce

__all__ = [
    "MAX_NAME_CHARS", "ExperimentSpec", "FileRefused", "LiveSteps", "ResearchEvidence", "SnapshotError",
    "add_snapshot", "experiment_for", "grade", "grade_on_site", "header_line", "may_reproduce", "record_recipe",
    "record_research_result", "report_prices_with", "report_progress_with", "reproduction_of",
    "save_final_trajectory", "settle_model", "step_line", "store_file", "to_count", "to_float", "Workspaces",
    "claim_trace_scoring", "record_trace_scores", "unpack_workspaces", "ask_a_runner",
    "REMOTE_JOB_REPORT", "is_remote_job_to_score", "start_job_run", "restart_job_run", "record_job_end",
    "record_usage", "fail_job_run", "record_invalid_submission", "hold_for_research_scoring",
]

log = logging.getLogger(__name__)
MAX_NAME_CHARS = MAX_MEMBER_PATH  # the longest artifact name a run's file is shown under


def experiment_for(*, owner, spec: ExperimentSpec, network: str | None = None) -> Experiment:
    """The owner's experiment a job's runs join: its hardware described from the GPUs, CPUs and memory
    its sandboxes are limited to, and internet used exactly when they join an egress `network`, all
    recorded as the runner's (leaderboard.trust.disclosures), not an uploader's statement."""
    return get_or_create_experiment(
        replace(spec, hardware="", agent_version="", disclosures=disclosures.for_job(network=network),
                disclosed_by=Experiment.DisclosedBy.RUNNER),
        owner=owner,
    )


def reproduction_of(*, original: Experiment, owner) -> Experiment:
    """A new experiment for a reproduction of `original`, owned by whoever asked for it: the
    original's configuration, its own runs (leaderboard.trust.reproductions compares the two)."""
    from leaderboard.runs.reproductions import new_reproduction

    return new_reproduction(original=original, owner=owner)


def record_recipe(run: Run, recipe: dict[str, Any]) -> None:
    """What the run needs to run again (runner.jobs.recipes), as its sandbox starts."""
    Run.objects.filter(pk=run.pk).update(recipe=recipe)


def report_progress_with(source) -> None:
    """`source(experiment_ids) -> {experiment id: tasks not finished}`: how the site tells a pending
    reproduction from a finished one without knowing what a job is (the runner registers it)."""
    from leaderboard.trust.reproductions import set_progress_source

    set_progress_source(source)


def report_prices_with(source) -> None:
    """`source(model, tokens_in, tokens_out) -> USD or None`: what the site's own calls to its model
    cost, by the runner's price table (the same the gateway meters jobs with)."""
    chat.price_with(source)


class FileRefused(Exception):
    """Storage could not take this one file (its name, its row); the message says why. Storage that
    is down or full is not this: it raises OSError, as every file of the run would fail the same."""


def store_file(run: Run, kind: str, name: str, file: File) -> Artifact:
    """One of the run's output files, measured and stored as an artifact (a snapshot is registered too),
    in a savepoint of its own: FileRefused leaves the run and its other files as they were. `name` is
    kept as the artifact's name (the file is stored under a safe one derived from it); one longer than
    MAX_NAME_CHARS is refused."""
    if len(name) > MAX_NAME_CHARS:
        raise FileRefused(f"the name is longer than {MAX_NAME_CHARS} characters")
    try:
        with transaction.atomic():
            return snapshots.register_if_snapshot(run, store_upload(run, Upload(kind, name, file)))
    except OSError as exc:
        if exc.errno in STORAGE_ERRNOS:
            raise
        raise FileRefused(exc.strerror or str(exc)) from exc
    except (SuspiciousFileOperation, DatabaseError, ValueError) as exc:
        raise FileRefused(str(exc)) from exc


def claim_trace_scoring(run_id: int, owner: str):
    """An imported trace on a research task, pending its scores, claimed as a grading (a Lease, renewed
    with webapp.leases.Heartbeat; None if it is not pending or not a research run)."""
    from leaderboard.runs.grading_claims import GRADINGS
    from webapp import leases

    return leases.claim(GRADINGS, run_id, owner, where={"competition__kind": "research"})


def add_snapshot(run: Run, elapsed_seconds: float, file: File):
    """A submission the agent wrote while running, graded later; SnapshotError if it cannot be kept."""
    return snapshots.add_snapshot(run=run, elapsed_seconds=elapsed_seconds, file=file)


class LiveSteps:
    """Steps appended to the run's trajectory while the agent writes its JSONL file, so the run page
    shows them during the run. Storage without local paths (S3) takes none: the steps arrive at the end."""

    def __init__(self, run: Run) -> None:
        from leaderboard.trajectories.importers.base import ParsedTrajectory, TrajectoryMeta
        from leaderboard.trajectories.store import LiveTrajectory

        try:
            self.live = LiveTrajectory(run)
        except NotImplementedError:
            self.live = None
        self.parsed = ParsedTrajectory(format="jsonl", meta=TrajectoryMeta(), steps=iter(()))

    @property
    def available(self) -> bool:
        return self.live is not None

    def append(self, numbered_lines: Iterable[tuple[int, bytes]], fence,
               gateway_lines: Iterable[tuple[int, bytes]] = ()) -> int:
        """Parse (line number, line) pairs of the agent's file, then of the gateway's, and append their
        steps; `fence` runs in the transaction that stores them. Returns how many steps were added.
        Only the gateway's steps carry its mark (leaderboard.trajectories.provenance)."""
        if self.live is None:
            return 0
        steps = self._parsed(numbered_lines, self.live.count, gateway=False)
        steps += self._parsed(gateway_lines, self.live.count + len(steps), gateway=True)
        self.live.append(steps, fence)
        return len(steps)

    def _parsed(self, numbered_lines: Iterable[tuple[int, bytes]], first: int, *, gateway: bool) -> list:
        from leaderboard.trajectories import provenance
        from leaderboard.trajectories.importers.jsonl import is_header_line, parse_step_line

        steps = []
        for lineno, line in numbered_lines:
            if lineno == 1 and is_header_line(line):
                continue
            step = parse_step_line(line, lineno, first + len(steps), self.parsed)
            if step is None:
                continue
            provenance.strip_mark(step)
            if gateway:
                provenance.mark_gateway(step)
            steps.append(step)
        return steps

    def close(self) -> None:
        if self.live is not None:
            self.live.close()


def save_final_trajectory(run: Run, files: Iterable[tuple[Path | str | None, str]],
                          gateway: tuple[Path | str | None, str] | None = None, *,
                          agent_started_at: datetime | None = None) -> None:
    """The run's trajectory from the agent's stored (redacted, whole) files, each (path, name), and the
    gateway's record of its LLM calls, as the importer reads them: one trajectory of their steps in
    time order, on one clock counted from `agent_started_at`. Only the gateway's steps carry its mark
    (leaderboard.trajectories.provenance), and none of the files' own figures (tokens, cost, duration,
    start) becomes the run's: those are the runner's and the gateway's. Where the agent's format allows
    (AIDE's journal), each call is linked to the node it wrote or reviewed (call_links). A file that
    cannot be read is named in a warning; with none readable the steps streamed live stay."""
    from leaderboard.trajectories import call_links, provenance
    from leaderboard.trajectories.importers import save_steps

    parts = [part for path, name in files if (part := _read_part(run, path, name)) is not None]
    for part in parts:
        _on_run_clock(part, agent_started_at)
    record = _read_part(run, *gateway) if gateway is not None else None
    if record is not None:
        record.steps = (_marked(step, provenance) for step in record.steps)
        parts.append(record)
    if parts:
        run.refresh_from_db()
        warnings = list(run.import_warnings)
        joined = _joined(parts)
        if record is not None and any(part.format == "aide" for part in parts):
            joined.steps = call_links.aide_links(joined.steps)
        save_steps(run, joined, take_totals=False)
        Run.objects.filter(pk=run.pk).update(import_warnings=[*warnings, *run.import_warnings])


def _read_part(run: Run, path: Path | str | None, name: str):
    from leaderboard.trajectories.importers import TrajectoryError, detect, read_trajectories

    if path is None or not os.path.isfile(path) or detect(path) is None:
        return None
    try:
        return next(iter(read_trajectories(path)), None)
    except TrajectoryError as exc:
        run.refresh_from_db()
        Run.objects.filter(pk=run.pk).update(import_warnings=[*run.import_warnings, f"{name}: {exc}"])
        return None


def _marked(step, provenance):
    provenance.mark_gateway(step)
    return step


def _on_run_clock(part, agent_started_at: datetime | None) -> None:
    """The agent's step times count from the start its file states (AIDE's first node, a JSONL
    header's started_at); moved onto the run's clock when that start lies within the run. The stated
    start is the agent's claim, so one outside the run moves nothing (a warning says so). Importers
    may learn the start only as they read (AIDE's), so it is looked at once the first step is read."""
    if agent_started_at is None:
        return
    steps = iter(part.steps)

    def shifted():
        first = next(steps, None)
        if first is None:
            return
        offset = _offset(part, agent_started_at)
        for step in chain((first,), steps):
            if offset and step.t is not None:
                step.t, step.raw = round(step.t + offset, 3), None
            yield step

    part.steps = shifted()


def _offset(part, agent_started_at: datetime) -> float:
    stated = part.meta.started_at
    if stated is None:
        return 0.0
    offset = (stated - agent_started_at).total_seconds()
    if not 0 <= offset <= (timezone.now() - agent_started_at).total_seconds():
        part.warn(f"the trajectory says it started at {stated.isoformat()}, outside the run "
                  f"(the agent started at {agent_started_at.isoformat()}); its step times are kept as written")
        return 0.0
    return offset


def _joined(parts: list):
    """One trajectory of several: the first's format, the steps of all merged in time order (each
    part's own order kept; a step without a time goes next from its part), renumbered."""
    first = parts[0]
    if len(parts) == 1:
        return first
    sources = [iter(part.steps) for part in parts]  # before first.steps is replaced by the join

    def steps():
        numbers = [array("q") for _ in parts]  # per part: its step index -> the joined index
        heads = [next(source, None) for source in sources]
        index = 0
        while (k := _earliest(heads)) is not None:
            step = heads[k]
            numbers[k].append(index)  # the importers number each part's steps 0, 1, 2, ...
            step.index = index
            if step.parent_index is not None:
                step.parent_index = numbers[k][step.parent_index] if step.parent_index < len(numbers[k]) else None
            step.raw = None
            yield step
            index += 1
            heads[k] = next(sources[k], None)
        first.warnings.extend(w for part in parts[1:] for w in part.warnings)

    first.steps = steps()
    return first


def _earliest(heads: list) -> int | None:
    """Which part's next step comes first: one without a time at once, else the earliest."""
    best, best_t = None, None
    for k, step in enumerate(heads):
        if step is None:
            continue
        if step.t is None:
            return k
        if best is None or step.t < best_t:
            best, best_t = k, step.t
    return best


def settle_model(run: Run, *, named: str, seen: dict[str, int], unnamed: str) -> str:
    """The run's model is what its LLM calls went to, as the gateway metered them (`seen`: model ->
    calls). A job that named none (its experiment's model is `unnamed`) moves the run to the
    experiment of the model it called; a named model the calls contradict is flagged. The note for
    the run's warnings ("" when there is nothing to say)."""
    if not seen:
        return ""
    called = sorted(seen, key=lambda model: (-seen[model], model))
    counts = ", ".join(f"{model} ({seen[model]:,} call{'s' if seen[model] != 1 else ''})" for model in called)
    if named:
        other = [model for model in called if not _same_model(named, model)]
        return (f"the job names the model {named!r}, but the LLM gateway metered calls to {counts}"
                if other else "")
    # the experiment's model name holds 200 characters; many models called (an agent naming its own) are cut
    label = " + ".join(called)[: LanguageModel._meta.get_field("name").max_length].strip(" +")
    experiment = run.experiment
    if experiment is not None and not experiment.reproduces_id and experiment.model.name == unnamed:
        run.experiment = with_model(experiment, label)
        Run.objects.filter(pk=run.pk).update(experiment=run.experiment)
    return f"the job named no model; the LLM gateway metered calls to {counts}, so the run is {label}'s"


SNAPSHOT = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8}|\d{4}|latest)")  # gpt-4o-2024-08-06, claude-...-20241022


def _same_model(named: str, called: str) -> bool:
    """A dated snapshot (`gpt-4o-2024-08-06`) is the model a job named `gpt-4o` calls; `gpt-4o-mini` is not."""
    named, called = named.strip().lower(), called.strip().lower()
    return called == named or (called.startswith(named) and SNAPSHOT.fullmatch(called[len(named):]) is not None)


def grade(run: Run, owner: str) -> None:
    """Grade the finished job's run here, with the claim an upload's grading takes (`owner` names the
    claimant). A transient failure leaves the run pending: the sweep hands it to the grading queue."""
    from leaderboard.runs.grading_claims import TRANSIENT_ERRORS, claim_grading, grade_claimed

    Run.objects.filter(pk=run.pk).update(status=Run.Status.PENDING)
    try:
        if claim_grading(run.pk, owner):
            grade_claimed(run.pk, owner)
    except TRANSIENT_ERRORS as exc:
        log.warning("run %s: grading deferred to the sweep: %s", run.pk, exc)


def grade_on_site(run: Run) -> None:
    """Queue the finished run's grading for the site's own grading workers (a remote runner's run:
    the runner holds no answers), once the caller's transaction commits."""
    from leaderboard.runs.submission import enqueue_grading

    Run.objects.filter(pk=run.pk).update(status=Run.Status.PENDING)
    transaction.on_commit(lambda: enqueue_grading(run))
