"""Bounded step size: one huge step must not make every replay, compare view and steps API page of
its run cost seconds. At import a step whose text or data holds a string longer than
STEP_FIELD_LIMIT bytes (or whose strings add up to more than STEP_LIMIT) is stored cut, each cut
string ending in a note, and the whole step as it came in is kept as an artifact of the run: it
downloads from the run page, for whoever may see the run, like the run's other files.

The stored step's `data["truncated"]` says so ({"bytes", "artifact", "name"}), which the replay
card shows with a download link. A running run's live steps are cut the same way as they arrive.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator

import orjson
from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction

from leaderboard.models import Artifact, Run
from leaderboard.trajectories.importers.base import StepData
from leaderboard.trajectories.importers.jsonl import step_json

ARTIFACT_PREFIX = "steps/step-"  # + "<index>-full.json": the name of a whole step's artifact


def note(size: int, name: str) -> str:
    return f"\n[truncated: {size:,} bytes; the full step is in artifact {name}]"


class Cutter:
    """Cuts the strings of one step to what is left of the step's budget, each to at most `field`."""

    def __init__(self, field: int, step: int, marker: str) -> None:
        self.field, self.left, self.marker, self.cut = field, step, marker, 0

    def string(self, value: str) -> str:
        if len(value) <= min(self.field, self.left) // 4:  # fits whatever its UTF-8 is: no encoding
            self.left -= len(value)
            return value
        raw = value.encode()
        allowed = min(self.field, max(self.left, 0))
        if len(raw) <= allowed:
            self.left -= len(raw)
            return value
        self.cut += 1
        self.left -= allowed
        return raw[:allowed].decode("utf-8", "ignore") + self.marker

    def value(self, value):
        if isinstance(value, str):
            return self.string(value)
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v) for v in value]
        return value


def cut_step(step: StepData, raw: bytes, name: str, *, field: int, total: int) -> bool:
    """Cut the step's text and data strings in place (title is bounded by the importers); True if
    anything was cut. Data that stays bigger than twice `total` (the notes count too; a huge list
    of numbers, say) is replaced by the note alone."""
    cutter = Cutter(field, total, note(len(raw), name))
    text, data = cutter.string(step.text or ""), cutter.value(step.data or {})
    if not cutter.cut and len(raw) <= total:
        return False
    if len(orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS)) > 2 * total:
        data = {"note": cutter.marker.strip()}
    step.text, step.data = text, {**data, "truncated": {"bytes": len(raw), "name": name}}
    step.raw = None  # the writer serialises the cut step
    return True


def bounded(run: Run, steps: Iterable[StepData], warn: Callable[[str], None], kept: list[str]) -> Iterator[StepData]:
    """The steps, each bounded by the settings. A step that had to be cut is kept whole as an
    artifact of the run; its storage name goes into `kept`, for the caller to delete if the import
    fails (the rows roll back with its transaction; the orphan sweep catches what a crash leaves)."""
    field, total = settings.STEP_FIELD_LIMIT, settings.STEP_LIMIT
    limit = min(field, total)
    _forget_earlier(run)
    for step in steps:
        raw = step.raw if step.raw is not None else step_json(step)
        if len(raw) <= limit:  # no string of it can be over a limit
            step.raw = raw
            yield step
            continue
        name = f"{ARTIFACT_PREFIX}{step.index}-full.json"
        if cut_step(step, raw, name, field=field, total=total):
            artifact = _keep(run, name, raw)
            kept.append(artifact.file.name)
            step.data["truncated"]["artifact"] = artifact.pk
            warn(f"step {step.index}: {len(raw):,} bytes, cut to the step size limit; the whole step is "
                 f"kept as the artifact {name}")
        else:
            step.raw = raw
        yield step


def bound_live(steps: Iterable[StepData]) -> None:
    """Cut the huge steps of a running run's live trajectory in place (leaderboard.trajectories.store
    LiveTrajectory). No artifact yet: the run's final import reads the agent's own file again and
    keeps the whole step then, under the name the note gives."""
    field, total = settings.STEP_FIELD_LIMIT, settings.STEP_LIMIT
    for step in steps:
        raw = step.raw if step.raw is not None else step_json(step)
        if len(raw) > min(field, total):
            cut_step(step, raw, f"{ARTIFACT_PREFIX}{step.index}-full.json (once the run ends)", field=field,
                     total=total)


def _keep(run: Run, name: str, raw: bytes) -> Artifact:
    artifact = Artifact(run=run, kind=Artifact.Kind.TRAJECTORY, name=name, size=len(raw),
                        sha256=hashlib.sha256(raw).hexdigest())
    artifact.file.save(name.rsplit("/", 1)[-1], ContentFile(raw), save=True)
    return artifact


def _forget_earlier(run: Run) -> None:
    """A re-import replaces the run's steps, and with them the whole steps kept by an earlier one."""
    earlier = list(run.artifacts.filter(name__startswith=ARTIFACT_PREFIX))
    for artifact in earlier:
        name = artifact.file.name
        transaction.on_commit(lambda name=name: default_storage.delete(name))
    run.artifacts.filter(pk__in=[a.pk for a in earlier]).delete()
