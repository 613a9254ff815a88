"""Pages for jobs and runners: submit a job, watch it, cancel it; see the runners and their GPUs.

The job form (which a browser sends secrets through), the job page and the live log tail are never
stored by a browser or a proxy (Cache-Control: no-store): an agent's output may hold what it was given."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST
from rest_framework.exceptions import PermissionDenied as ApiPermissionDenied
from rest_framework.exceptions import ValidationError

from leaderboard.models import Experiment, Run
from runner.jobs import access, reproduction, services, states
from runner.models import JobTask
from runner.web import jobs_api
from runner.web.forms import JobForm


@login_required
def job_list(request):
    jobs = list(access.visible_jobs(request.user).prefetch_related("tasks__run").order_by("-created_at", "-id")[:200])
    for job in jobs:  # a job whose runs grading could not score says so here too (runner.jobs.states)
        job.not_scored = states.not_scored(job.task_list())
    return render(request, "runner/job_list.html", {"jobs": jobs, "can_submit": access.can_submit_jobs(request.user)})


@never_cache
@login_required
def job_new(request):
    if not access.can_submit_jobs(request.user):
        raise PermissionDenied("submitting jobs needs staff or the 'runner.submit_job' permission")
    form = JobForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            job = jobs_api.submit(request.user, form.job_data())
        except ValidationError as exc:
            form.add_error(None, _message(exc))
        except ApiPermissionDenied as exc:
            form.add_error(None, str(exc.detail))
        else:
            return redirect("job-detail", pk=job.pk)
    return render(request, "runner/job_new.html", {"form": form})


def _message(exc: ValidationError) -> str:
    detail = exc.detail
    if isinstance(detail, dict):
        detail = detail.get("detail", detail)
    return " ".join(map(str, detail)) if isinstance(detail, list) else str(detail)


@never_cache
@login_required
def job_detail(request, pk: int):
    job = get_object_or_404(access.visible_jobs(request.user), pk=pk)
    data = jobs_api.JobOutputSerializer(job).data
    return render(request, "runner/job_detail.html", {"job": job, "data": data})


@login_required
@require_POST
def job_cancel(request, pk: int):
    job = get_object_or_404(access.visible_jobs(request.user), pk=pk)
    try:
        services.cancel_job(job=job, user=request.user)
    except PermissionError as exc:
        raise PermissionDenied(str(exc)) from None
    messages.success(request, f"Job {job.pk} cancelled: running sandboxes stop within seconds.")
    return redirect("job-detail", pk=job.pk)


@login_required
@require_POST
def experiment_reproduce(request, pk: int):
    """The Reproduce button of an experiment's page: its jobs again, into a reproduction experiment."""
    experiment = get_object_or_404(Experiment.objects.visible_to(request.user), pk=pk)
    try:
        made = reproduction.reproduce(user=request.user, experiment=experiment)
    except PermissionError as exc:
        raise PermissionDenied(str(exc)) from None
    except reproduction.ReproduceRefused as exc:
        messages.error(request, f"Cannot reproduce this experiment: {exc}")
    else:
        messages.success(request, f"Reproduction submitted: {made}. Its badge says pending until its jobs finish.")
    return redirect("experiment-detail", pk=experiment.pk)


def runner_list(request):
    runners = list(jobs_api.runners_for_display())
    for runner in runners:
        runner.gpu_rows = jobs_api.gpu_holders(runner)
    return render(request, "runner/runner_list.html", {"runners": runners})


@never_cache
def run_live(request, pk: int):
    """What the run page polls while an agent works: status, steps so far, elapsed vs limit, log tail."""
    run = get_object_or_404(Run.objects.visible_to(request.user).select_related("trajectory"), pk=pk)
    task = JobTask.objects.filter(run=run).select_related("job").first()
    n_steps = getattr(getattr(run, "trajectory", None), "n_steps", run.n_steps)
    payload = {"id": run.pk, "status": run.status, "n_steps": n_steps,
               "done": run.status in (Run.Status.GRADED, Run.Status.FAILED, Run.Status.WAITING)}
    if task is not None:
        payload.update({"task_status": task.status, "task_state": task.state,
                        "attempts": task.attempts, "elapsed_s": task.elapsed_s,
                        "time_limit_s": task.job.time_limit_s, "log_tail": task.log_tail[-4000:],
                        "error": task.error, "job": task.job_id, "recipe": run.recipe})
        payload["done"] = payload["done"] and task.is_finished
    return JsonResponse(payload)
