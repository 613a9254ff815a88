"""A research run as an MLAgentBench log folder, zipped, so MLAgentBench's own eval.py can score it.

    write_trace_zip(run, out)   # out: a binary file; the zip holds run-<id>/ laid out as below

The layout of MLAgentBench's Environment (environment.py `save`, runner.py `env.save("final")`, its
`__exit__`), which `MLAgentBench/eval.py --log-folder <unzipped> --task <task> [--eval-intermediate]`
reads:

    run-<id>/env_log/trace.json                    {"steps": [...], "low_level_steps": [], "action_infos": {},
                                                    "task_description": the research problem}
    run-<id>/env_log/traces/step_<n>_files/        the n-th kept workspace snapshot, in time order
    run-<id>/env_log/traces/step_final_files/      the final workspace (`workspace/` artifacts)
    run-<id>/env_log/overall_time.txt              the run's duration in seconds
    run-<id>/env_log/error.txt                     only for a run that ended in error (MLAgentBench's class)
    run-<id>/log, run-<id>/agent_log/main_log      the end of the agent's output; main_log empty (eval.py
                                                   opens both to look for its failure markers)

trace.json's steps are the snapshots, one step each ("Workspace snapshot" at its time, so step_<n>_files
is step n's), then "Final Answer" where the agent ended by itself: MLAgentBench's
`submitted_final_answer`. eval.py scores at most 50 steps (it subsamples past that), as many as a run
keeps by default (RESEARCH_MAX_SNAPSHOTS). Only the run's own stored files go in: never the task's
scripts/ or answers, never a read-only file of the task (MLAgentBench leaves them out of its traces too).
"""

from __future__ import annotations

import json
import shutil
import tempfile
import zipfile
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from leaderboard.lib import archives
from leaderboard.lib.research_failures import ERROR, NO_FINAL_ANSWER
from leaderboard.models import Artifact, ResearchTask, Run

FINAL_FOLDER = "workspace"
STEPS_FOLDER = "workspace-snapshots"
OUTPUT_LOG = "logs/agent-output.log"  # the runner's record of the agent's output
LOG_TAIL_BYTES = 8 << 20
SNAPSHOT_ACTION = "Workspace snapshot"
CHUNK = 1 << 20


def has_trace(run: Run) -> bool:
    """Whether the run has workspace files to export: a research run's final workspace or snapshots."""
    return exportable(run, run.artifacts.values_list("name", flat=True))


def exportable(run: Run, artifact_names) -> bool:
    """has_trace from the names of the run's artifacts (the run page has them already)."""
    competition = run.competition
    return competition is not None and competition.kind == "research" and any(
        name.startswith((f"{FINAL_FOLDER}/", f"{STEPS_FOLDER}/")) for name in artifact_names)


def write_trace_zip(run: Run, out: BinaryIO) -> None:
    root = f"run-{run.pk}"
    steps = list(run.snapshots.filter(artifact__isnull=False).select_related("artifact").order_by("elapsed_seconds"))
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf, tempfile.TemporaryDirectory() as scratch:
        zf.writestr(f"{root}/env_log/trace.json", json.dumps(_trace(run, steps), indent=2))
        for n, snapshot in enumerate(steps):
            zf.writestr(f"{root}/env_log/traces/step_{n}_files/", "")  # the folder, even were it empty
            _copy_zip(snapshot.artifact, zf, f"{root}/env_log/traces/step_{n}_files", Path(scratch))
        finals = run.artifacts.filter(kind=Artifact.Kind.CODE, name__startswith=f"{FINAL_FOLDER}/")
        if finals:
            zf.writestr(f"{root}/env_log/traces/step_final_files/", "")
        for artifact in finals:
            rel = PurePosixPath(artifact.name[len(FINAL_FOLDER) + 1:])
            if not rel.is_absolute() and ".." not in rel.parts:
                with artifact.file.open("rb") as src, zf.open(f"{root}/env_log/traces/step_final_files/{rel}",
                                                             "w") as dest:
                    shutil.copyfileobj(src, dest, CHUNK)
        if run.duration_s is not None:
            zf.writestr(f"{root}/env_log/overall_time.txt", repr(float(run.duration_s)))
        if ERROR in (run.failure_classes or []):
            zf.writestr(f"{root}/env_log/error.txt", f"the run ended in error ({run.grading_error or run.status})\n")
        zf.writestr(f"{root}/log", _output_tail(run))
        zf.writestr(f"{root}/agent_log/main_log", "")


def _trace(run: Run, steps: list) -> dict:
    start = run.started_at.timestamp() if run.started_at else 0.0
    trace_steps = [{"action": {"name": SNAPSHOT_ACTION, "args": {"elapsed_seconds": s.elapsed_seconds}},
                    "observation": f"The workspace as the run kept it {s.elapsed_seconds:g} s in (Medalboard).",
                    "timestamp": start + s.elapsed_seconds} for s in steps]
    if NO_FINAL_ANSWER not in (run.failure_classes or []):
        trace_steps.append({"action": {"name": "Final Answer", "args": {"final_answer": "the final workspace"}},
                            "observation": "end", "timestamp": start + (run.duration_s or 0.0)})
    task = ResearchTask.objects.filter(competition_id=run.competition_id).first()
    return {"steps": trace_steps, "low_level_steps": [], "action_infos": {},
            "task_description": task.research_problem if task else run.task_name}


def _copy_zip(artifact: Artifact, zf: zipfile.ZipFile, folder: str, scratch: Path) -> None:
    """A snapshot's zip, read under the archive limits, into the export's step folder."""
    local = scratch / f"snapshot-{artifact.pk}.zip"
    with artifact.file.open("rb") as src, local.open("wb") as dest:
        shutil.copyfileobj(src, dest, CHUNK)
    try:
        with archives.open_archive(local) as unpacked:
            for name in unpacked.names():
                with zf.open(f"{folder}/{name}", "w") as dest:
                    for chunk in unpacked.chunks(name):
                        dest.write(chunk)
    except archives.ArchiveError:
        pass  # a step whose files cannot be read is an empty step folder: eval.py's score then says so
    finally:
        local.unlink(missing_ok=True)


def _output_tail(run: Run) -> bytes:
    artifact = run.artifacts.filter(name=OUTPUT_LOG).first()
    if artifact is None:
        return b""
    with artifact.file.open("rb") as f:
        size = artifact.size or 0
        if size > LOG_TAIL_BYTES:
            f.seek(size - LOG_TAIL_BYTES)
        return f.read(LOG_TAIL_BYTES)
