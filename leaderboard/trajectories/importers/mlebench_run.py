"""An MLE-bench run folder `<competition>_<uuid>/` with logs/, code/ and submission/.

A trajectory in a format we know found under logs/ is read with its own importer; otherwise the
log files, code files and submission files become steps of their own.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from leaderboard.trajectories.importers.base import (
    Importer,
    ParsedTrajectory,
    StepCounter,
    StepData,
    TrajectoryError,
    TrajectoryMeta,
    detect,
    register,
    registry,
)

PARTS = ("logs", "code", "submission")
MAX_FILE_TEXT = 2_000_000  # characters kept from one log or code file; the artifact holds the rest
_RUN_FOLDER = re.compile(r"^(?P<competition>.+?)_(?P<uuid>[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?"
                         r"[0-9a-f]{12})$", re.IGNORECASE)
LOG_SUFFIXES = {".log", ".txt", ".out", ".err", ""}


@register
class MleBenchRunImporter(Importer):
    name = "mlebench_run"

    def sniff(self, path, head, shape) -> bool:
        return path.is_dir() and sum((path / part).is_dir() for part in PARTS) >= 2

    def read(self, path: Path) -> Iterator[ParsedTrajectory]:
        competition = competition_name(path)
        inner = known_trajectory(path / "logs")
        if inner is not None:
            name, file = inner
            for parsed in registry[name].read(file):
                parsed.meta.task_name = parsed.meta.task_name or competition
                parsed.meta.extra.update(run_folder=path.name, trajectory_file=str(file.relative_to(path)))
                yield parsed
            return
        files = [f for part in PARTS for f in sorted((path / part).rglob("*")) if f.is_file()]
        if not files:
            raise TrajectoryError(f"{path.name}: the run folder holds no files")
        meta = TrajectoryMeta(task_name=competition, extra={"run_folder": path.name})
        parsed = ParsedTrajectory(format=self.name, meta=meta, steps=iter(()))
        parsed.steps = _file_steps(path, files, parsed)
        yield parsed


def competition_name(path: Path) -> str:
    match = _RUN_FOLDER.match(path.name)
    return match.group("competition") if match else path.name


def known_trajectory(logs: Path) -> tuple[str, Path] | None:
    if not logs.is_dir():
        return None
    for file in sorted(logs.rglob("*")):
        if file.is_file() and (name := detect(file)) not in (None, "mlebench_run"):
            return name, file
    return None


def _file_steps(root: Path, files: list[Path], parsed: ParsedTrajectory) -> Iterator[StepData]:
    make = StepCounter()
    starts = [f.stat().st_mtime for f in files]
    start = min(starts)
    for file, mtime in zip(files, starts, strict=True):
        relative = str(file.relative_to(root))
        part = file.relative_to(root).parts[0]
        if part == "submission":
            yield make("submission", title=relative, data={"file": relative, "size": file.stat().st_size},
                       t=mtime - start)
            continue
        text = _read_text(file, parsed, relative)
        if part == "code":
            yield make("code", title=relative, data={"file": relative, "content": text, "diff": ""}, t=mtime - start)
        else:
            yield make("observation", title=relative, text=text, data={"file": relative, "log": True},
                       t=mtime - start)


def _read_text(file: Path, parsed: ParsedTrajectory, relative: str) -> str:
    with open(file, "rb") as f:
        raw = f.read(MAX_FILE_TEXT + 1)
    if len(raw) > MAX_FILE_TEXT:
        parsed.warn(f"{relative}: longer than {MAX_FILE_TEXT} bytes; only the start is shown")
        raw = raw[:MAX_FILE_TEXT]
    return raw.decode("utf-8", errors="surrogateescape")  # invalid bytes are escaped and flagged later
