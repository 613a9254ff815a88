"""Reproduce an experiment: submit its jobs again, on runners like the ones that ran them.

    reproduction = reproduce(user=user, experiment=experiment)

Each job of the experiment is submitted again as it was made (agent, model, competitions, seeds,
settings, time limit, resources, network, privacy) into one new experiment that `reproduces` the
original (leaderboard.runs.job_runs.reproduction_of); the page of the original then compares the two
(leaderboard.trust.reproductions). The new jobs go to the same queue (the same hardware request) and
ask for runners that start sandboxes as the original's did (backend and OCI runtime, from its runs'
recipes). The agent is taken as it is now: a definition changed since shows as a new agent version
in the recipes, and usually as a result that does not reproduce.
"""

from __future__ import annotations

from django.db import transaction

from leaderboard.models import Experiment, Run
from leaderboard.runs.job_runs import may_reproduce, reproduction_of
from runner.jobs import access, services
from runner.models import Job, JobTask


class ReproduceRefused(Exception):
    """The experiment cannot be reproduced (by this user, now); the message says why."""


def jobs_of(experiment: Experiment) -> list[Job]:
    return list(experiment.jobs.select_related("agent", "created_by").prefetch_related("tasks__competition")
                .order_by("created_at", "pk"))


@transaction.atomic
def reproduce(*, user, experiment: Experiment) -> Experiment:
    """The new experiment, its jobs created and enqueued on commit; ReproduceRefused or PermissionError."""
    if not may_reproduce(user, experiment):
        raise PermissionError("only staff or the experiment's owner can reproduce it")
    jobs = jobs_of(experiment)
    if not jobs:
        raise ReproduceRefused("its runs were uploaded, not run by a job here, so there is no job to run again")
    try:
        access.check_may_submit(user)
    except access.JobRefused as exc:
        raise ReproduceRefused(str(exc)) from None
    reproduction = reproduction_of(original=experiment, owner=user)
    for job in jobs:
        try:
            services.create_job(**_job_request(job, user), experiment=reproduction, requirements=requirements(job))
        except services.JobError as exc:
            raise ReproduceRefused(f"job {job.pk} cannot run again: {exc}") from None
    return reproduction


def _job_request(job: Job, user) -> dict:
    return {
        "user": user, "agent": job.agent.name, "model": job.model_name, "competitions": _competitions(job),
        "seeds": job.seeds, "time_limit_minutes": job.time_limit_s / 60, "gpus": job.gpus,
        "gpu_type": job.gpu_type, "cpus": job.cpus, "memory_gb": job.memory_gb, "settings": job.settings or None,
        "network": job.network, "env": _secrets(job, user), "private": job.private,
    }


def _competitions(job: Job) -> list[str]:
    return sorted({task.competition.slug for task in job.tasks.all()})


def _secrets(job: Job, user) -> dict[str, str] | None:
    """The job's secrets go to a reproduction by the one who gave them, never to anyone else's."""
    if not job.sealed_env:
        return None
    if job.created_by_id != user.pk:
        raise ReproduceRefused(f"job {job.pk} was given secrets by its owner; only they can run it again")
    from runner.host.secrets import SecretError

    try:
        return job.secrets()
    except SecretError as exc:
        raise ReproduceRefused(f"the secrets of job {job.pk} cannot be read any more: {exc}") from None


def requirements(job: Job) -> dict[str, str]:
    """How the job's sandboxes started (backend, runtime), when its runs' recipes agree on it."""
    seen = {(r.get("backend", ""), r.get("runtime", "")) for r in _sandboxes(job)}
    if len(seen) != 1:
        return {}
    backend, runtime = seen.pop()
    return {key: value for key, value in (("backend", backend), ("runtime", runtime)) if value}


def _sandboxes(job: Job) -> list[dict]:
    recipes = Run.objects.filter(job_task__job=job).values_list("recipe", flat=True)
    return [recipe.get("sandbox", {}) for recipe in recipes if recipe]


def unfinished_tasks(experiment_ids: list[int]) -> dict[int, int]:
    """{experiment id: its jobs' tasks not finished}: registered as the site's progress source."""
    counts: dict[int, int] = {}
    rows = (JobTask.objects.filter(job__experiment_id__in=experiment_ids).exclude(status__in=JobTask.FINISHED)
            .values_list("job__experiment_id", flat=True))
    for experiment_id in rows:
        counts[experiment_id] = counts.get(experiment_id, 0) + 1
    return counts
