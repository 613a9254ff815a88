"""The runner API's views: parse, call one function of runner.api_v1, answer. Errors keep one shape:
403 another runner's task, 409 a lease handed on (`fenced`) or an upload out of order, 401 an
unknown or revoked token (the runner stops)."""

from __future__ import annotations

from django.http import FileResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from runner.api_v1 import agents, claims, data, releases, writes
from runner.api_v1.auth import IsRunner, RunnerTokenAuthentication
from runner.jobs import attempts, task_leases
from runner.models import JobTask, Runner

TAG = ["runner v1"]


def documented(summary: str):
    """A JSON endpoint of the runner API in the OpenAPI schema."""
    return extend_schema(tags=TAG, request=OpenApiTypes.OBJECT, responses=OpenApiTypes.OBJECT, summary=summary)


class RunnerView(APIView):
    authentication_classes = [RunnerTokenAuthentication]
    permission_classes = [IsRunner]
    throttle_classes: list = []

    def handle_exception(self, exc):
        if isinstance(exc, writes.Forbidden):
            return Response({"detail": str(exc)}, status=status.HTTP_403_FORBIDDEN)
        if isinstance(exc, task_leases.LeaseLost):
            return Response({"detail": str(exc), "fenced": True}, status=status.HTTP_409_CONFLICT)
        if isinstance(exc, writes.Refused):
            return Response({"detail": str(exc), **exc.extra}, status=exc.status)
        return super().handle_exception(exc)

    def held(self, request, pk: int, lease: dict | None = None) -> task_leases.Claim:
        return writes.held_by(request.auth, pk, lease if lease is not None else request.data.get("lease") or {})


def _lease_from_headers(request) -> dict:
    return {"owner": request.headers.get("X-Lease-Owner", ""), "attempt": request.headers.get("X-Lease-Attempt", "")}


@documented("Register: the hardware and images this runner has, and its slots (tasks at once, 1 to 64)")
class RegisterView(RunnerView):
    def post(self, request):
        fields = {
            k: request.data[k]
            for k in ("hostname", "gpus", "cpu_count", "memory_gb", "images", "backend", "runtime", "version")
            if k in request.data
        }
        try:  # the tasks it runs at once; a runner that does not say runs one
            fields["concurrency"] = claims.checked_slots(request.data.get("slots", 1))
        except ValueError as exc:
            raise writes.Refused(str(exc)) from None
        Runner.objects.filter(pk=request.auth.pk).update(**fields, status=Runner.Status.ONLINE)
        claims.heartbeat(request.auth)
        request.auth.refresh_from_db()
        task_leases.sync_gpu_slots(request.auth)
        return Response({"runner": request.auth.name})


@documented("Claim a task this runner can serve (long-poll up to `wait_s`); 204 if none came")
class ClaimView(RunnerView):
    def post(self, request):
        found = claims.claim_next(request.auth, float(request.data.get("wait_s", 0) or 0))
        if found is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        held, task = found
        try:
            return Response(claims.answer(held, task, request.auth))
        except Exception as exc:  # noqa: BLE001 - the task cannot be run anywhere as it is: fail it, saying why
            attempts.fail(held, f"{exc.__class__.__name__}: {exc}")
            raise


@documented("Renew the lease (with the output's tail); answers whether the job was cancelled")
class LeaseView(RunnerView):
    def post(self, request, pk: int):
        return Response(writes.renew(self.held(request, pk), request.data.get("log_tail")))


@documented("The agent started (once per attempt), with the run's recipe")
class StartView(RunnerView):
    def post(self, request, pk: int):
        return Response(writes.started(self.held(request, pk), request.data.get("recipe") or {}))


@documented(
    "Hand the task back before its agent started (`error`: why this runner's engine cannot run it): queued "
    "again without spending an attempt, failed past the retries; a retry gets the same answer"
)
class ReleaseView(RunnerView):
    def post(self, request, pk: int):
        return Response(releases.release(self.held(request, pk), request.data.get("error")))


@documented("New trajectory lines, [[line number, text]] per stream; lines sent again are skipped")
class StepsView(RunnerView):
    def post(self, request, pk: int):
        held = self.held(request, pk)
        return Response(writes.steps(held, request.data.get("agent") or [], request.data.get("gateway") or []))


@extend_schema(
    tags=TAG,
    request={"application/octet-stream": OpenApiTypes.BINARY},
    responses=OpenApiTypes.OBJECT,
    summary="A chunk of a file at Upload-Offset (GET: how much the site has)",
    parameters=[
        OpenApiParameter(name, str, OpenApiParameter.HEADER)
        for name in (
            "X-Lease-Owner",
            "X-Lease-Attempt",
            "Upload-Offset",
            "Upload-Length",
            "Upload-Sha256",
            "Upload-Name",
            "Upload-Kind",
        )
    ],
)
class UploadView(RunnerView):
    def get(self, request, pk: int, key: str):
        return Response(writes.upload_state(self.held(request, pk, _lease_from_headers(request)), key))

    def put(self, request, pk: int, key: str):
        from urllib.parse import unquote

        held = self.held(request, pk, _lease_from_headers(request))
        try:
            size, offset = int(request.headers["Upload-Length"]), int(request.headers["Upload-Offset"])
            sha256 = request.headers["Upload-Sha256"]
        except (KeyError, ValueError):
            raise writes.Refused("Upload-Length, Upload-Offset and Upload-Sha256 headers expected") from None
        body = request._request  # the raw body, read in blocks; never held whole in memory
        return Response(
            writes.upload_chunk(
                held,
                key,
                name=unquote(request.headers.get("Upload-Name", key)),
                kind=request.headers.get("Upload-Kind", "other"),
                size=size,
                sha256=sha256,
                offset=offset,
                body=body,
            )
        )


@documented("An uploaded submission as a snapshot at `seconds` into the run")
class SnapshotView(RunnerView):
    def post(self, request, pk: int):
        held = self.held(request, pk)
        return Response(writes.snapshot(held, str(request.data.get("key", "")), float(request.data.get("seconds", 0))))


@documented("The end: status, error, exit code, notes, the uploaded files, the LLM gateway's meter; the site grades")
class FinishView(RunnerView):
    def post(self, request, pk: int):
        return Response(writes.finish(self.held(request, pk), request.data))


@extend_schema(
    tags=TAG,
    responses={(200, "application/octet-stream"): OpenApiTypes.BINARY},
    summary="A public data file of the task's competition, by its sha256",
)
class DataView(RunnerView):
    def get(self, request, pk: int, sha256: str):
        writes.held_by(request.auth, pk, {"owner": "", "attempt": 0})
        task = JobTask.objects.select_related("competition").get(pk=pk)
        from pathlib import Path

        path = data.file_by_hash(Path(task.competition.public_data_dir or "/nonexistent"), sha256)
        return _file(path, "no public file of this task has that hash")


def _file(path, missing: str):
    if path is None:
        return Response({"detail": missing}, status=404)
    return FileResponse(open(path, "rb"), content_type="application/octet-stream")  # noqa: SIM115


@extend_schema(
    tags=TAG,
    responses={(200, "application/octet-stream"): OpenApiTypes.BINARY},
    summary="A file of the task's MLE-bench-packaged agent (its folder as the job took it), by its sha256",
)
class AgentFileView(RunnerView):
    def get(self, request, pk: int, sha256: str):
        writes.held_by(request.auth, pk, {"owner": "", "attempt": 0})
        task = JobTask.objects.select_related("job__agent").get(pk=pk)
        path = agents.file_by_hash(task.job, sha256) if agents.is_packaged(task.job) else None
        return _file(path, "no file of this task's agent has that hash")
