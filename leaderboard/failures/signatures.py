"""A failed run's signature: what ended it, in words that are the same for the same failure in any
run. Only a run that was graded and has no valid submission failed (a run the site could not grade
has an unknown outcome; see RunQuerySet.for_leaderboard). In order, its signature is:

    "out of memory"                     the last error says so (CUDA or host memory, a SIGKILL'd process)
    "timeout"                           the runner stopped it at its time limit, or the last error says so
    "gateway refusal: <template>"       the LLM gateway refused a call (a budget, an unknown model)
    "<ExceptionType>: <template>"       the last error step's exception and its message, masked
    "invalid submission: <template>"    the grader's reason
    "no submission"

The last error step is the last step that is an `error` step or holds a traceback or an exception
type (AIDE's command steps carry `exc_type`); it is read from the search index's rows, two queries
for any number of runs."""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.db.models import Max, Q

from leaderboard.failures.templates import template
from leaderboard.models import Run
from leaderboard.search.models import StepText

OOM = re.compile(r"out of memory|OutOfMemoryError|\bMemoryError\b|\bOOM\b|Killed\b|exit code 137|signal 9", re.I)
TIMEOUT = re.compile(r"TimeoutError|timed out|time ?limit (?:exceeded|reached)|stopped at the .{0,20}limit", re.I)
REFUSAL = re.compile(r"^LLM call refused: (.*)$", re.M)  # the gateway's error step (runner.gateway.record)
EXCEPTION = re.compile(r"^\s*((?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception|Interrupt|Exit|Fault))\b:?[ \t]*(.*)$",
                       re.M)
ERROR_HINTS = Q(kind="error") | Q(text__contains="Traceback (most recent call last)") | Q(text__contains="Error: ")


@dataclass(frozen=True)
class Signature:
    label: str
    step: int | None = None  # the error step it was read from, for a permalink


def from_error(text: str) -> str:
    """The signature of an error step's text (search.text.step_text of the step)."""
    refusal = REFUSAL.search(text)
    if refusal:
        return "gateway refusal: " + template(refusal.group(1))
    if OOM.search(text):
        return "out of memory"
    if TIMEOUT.search(text):
        return "timeout"
    found = EXCEPTION.findall(text)
    if found:
        # the traceback's last line: the exception that ended it (a bare type after it is the step's data)
        kind, message = ([f for f in found if f[1]] or found)[-1]
        return f"{kind.rsplit('.', 1)[-1]}: {template(message)}".rstrip(": ")
    return "error: " + template(text)


def last_errors(run_ids: list[int]) -> dict[int, tuple[int, str]]:
    """run id -> (index, text) of its last error step."""
    hinted = StepText.objects.filter(ERROR_HINTS)
    last = (hinted.filter(run_id__in=run_ids).values("run_id").annotate(last=Max("index"))
            .values_list("run_id", "last"))
    wanted = Q()
    for run_id, index in last:
        wanted |= Q(run_id=run_id, index=index)
    if not wanted:
        return {}
    return {r: (i, t) for r, i, t in StepText.objects.filter(wanted).values_list("run_id", "index", "text")}


def failed(run: Run) -> bool:
    return run.status == Run.Status.GRADED and run.state in ("no submission", "invalid submission")


def signatures(runs: list[Run]) -> dict[int, Signature]:
    """run id -> signature, for the runs that failed."""
    failing = [r for r in runs if failed(r)]
    errors = last_errors([r.pk for r in failing])
    timed_out = _timed_out([r.pk for r in failing])
    out = {}
    for run in failing:
        index, text = errors.get(run.pk, (None, ""))
        out[run.pk] = Signature(_label(run, from_error(text) if text else "", run.pk in timed_out), index)
    return out


def _label(run: Run, error: str, timed_out: bool) -> str:
    """What ended the run comes first; then, for a file the grader refused, its reason (an earlier
    error may be one the agent got past); for no file, the last error."""
    if error == "out of memory" or error.startswith("gateway refusal"):
        return error
    if timed_out or error == "timeout":
        return "timeout"
    if run.submission_exists:
        return f"invalid submission: {template(run.grading_error)}".rstrip(": ")
    return error or "no submission"


def _timed_out(run_ids: list[int]) -> set[int]:
    """Runs whose runner task stopped them at the time limit (the runner's job_task relation)."""
    relation = "job_task__status"
    if not any(f.name == "job_task" for f in Run._meta.get_fields()):
        return set()
    return set(Run.objects.filter(pk__in=run_ids, **{relation: "timed_out"}).values_list("pk", flat=True))
