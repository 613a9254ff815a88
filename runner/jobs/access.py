"""Who may submit jobs, how many at once, and which jobs a user sees.

Submitting runs agents on the site's machines, so it takes staff or the `runner.submit_job`
permission (staff grant it in the admin, per user or through a group;
MEDALBOARD_NEW_USERS_CAN_SUBMIT_JOBS gives it to every new account, as `make run` does on a personal
site). Each user has a limit on jobs still active at once (MEDALBOARD_MAX_ACTIVE_JOBS_PER_USER); staff have none.
"""

from __future__ import annotations

from django.conf import settings
from django.db.models import Exists, OuterRef, QuerySet

from runner.models import Job, JobTask


class JobRefused(Exception):
    """The user may not submit this job now; the message says why."""


def can_submit_jobs(user) -> bool:
    return bool(user and user.is_authenticated and (user.is_staff or user.has_perm("runner.submit_job")))


def active_jobs(user) -> QuerySet[Job]:
    unfinished = JobTask.objects.filter(job=OuterRef("pk")).exclude(status__in=JobTask.FINISHED)
    return Job.objects.filter(created_by=user).filter(Exists(unfinished))


def check_may_submit(user) -> None:
    if not can_submit_jobs(user):
        raise JobRefused("submitting jobs needs staff or the 'runner.submit_job' permission; ask a site admin")
    if user.is_staff:
        return
    limit = settings.MAX_ACTIVE_JOBS_PER_USER
    active = active_jobs(user).count()
    if active >= limit:
        raise JobRefused(f"you have {active} active job{'s' if active != 1 else ''}; the limit is {limit}. "
                         "Wait for one to finish or cancel one.")


def grant_new_user(sender, instance, created: bool, **kwargs) -> None:
    """On a personal site (`make run`: MEDALBOARD_NEW_USERS_CAN_SUBMIT_JOBS=true) every new account may
    submit jobs, so a newcomer can run the baseline from the page; a public site leaves it off."""
    if created and settings.NEW_USERS_CAN_SUBMIT_JOBS:
        from django.contrib.auth.models import Permission

        instance.user_permissions.add(Permission.objects.get(codename="submit_job", content_type__app_label="runner"))


def visible_jobs(user) -> QuerySet[Job]:
    """A job is seen by its creator and staff; everyone else sees the runs it made, not the job."""
    jobs = Job.objects.select_related("agent", "experiment__model", "created_by")
    if user is None or not user.is_authenticated:
        return jobs.none()
    return jobs if user.is_staff else jobs.filter(created_by=user)
