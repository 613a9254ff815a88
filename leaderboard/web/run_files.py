"""Downloads of a run's own files: its artifacts (submission, logs, code, trajectory files) and its
grading report. Only for runs the reader may see; always as attachments, so a browser never renders
an agent's file as a page of this site. The report holds scores and thresholds, never answers."""

from __future__ import annotations

import json
import tempfile
from pathlib import PurePosixPath

from django.core.files.storage import default_storage
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404

from leaderboard.trajectories import mlagentbench_export
from leaderboard.web.visibility import visible_run


def artifact_download(request: HttpRequest, pk: int, artifact_id: int) -> FileResponse:
    run = visible_run(request, pk)
    artifact = get_object_or_404(run.artifacts, pk=artifact_id)
    try:
        handle = default_storage.open(artifact.file.name, "rb")
    except (FileNotFoundError, OSError):
        raise Http404("this file is missing from storage") from None
    name = PurePosixPath(artifact.name).name or f"artifact-{artifact.pk}"
    return FileResponse(handle, as_attachment=True, filename=name, content_type="application/octet-stream")


def report_download(request: HttpRequest, pk: int) -> HttpResponse:
    run = visible_run(request, pk)
    if not run.grading_report:
        raise Http404("this run has no grading report")
    response = HttpResponse(json.dumps(run.grading_report, indent=2, default=str),
                            content_type="application/json; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="medalboard-run-{run.pk}-grading-report.json"'
    return response


def mlagentbench_trace_download(request: HttpRequest, pk: int) -> FileResponse:
    """A research run as an MLAgentBench log folder (zip) that MLAgentBench's own eval.py scores."""
    run = visible_run(request, pk)
    if not mlagentbench_export.has_trace(run):
        raise Http404("only a research run with its workspace files can be exported as an MLAgentBench trace")
    out = tempfile.TemporaryFile()  # noqa: SIM115 - FileResponse closes it once sent
    mlagentbench_export.write_trace_zip(run, out)
    out.seek(0)
    return FileResponse(out, as_attachment=True, filename=f"medalboard-run-{run.pk}-mlagentbench.zip",
                        content_type="application/zip")
