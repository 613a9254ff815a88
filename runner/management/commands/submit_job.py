"""`manage.py submit_job`: create a job from the command line; with --wait, block until its runs end
and print one JSON object per task."""

from __future__ import annotations

import json
import os
import time

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from runner.jobs.services import JobError, create_job, job_summary
from runner.models import Job, JobTask


class Command(BaseCommand):
    help = "Submit a benchmark job: an agent on competitions (or a split) x seeds, with a time limit and resources."

    def add_arguments(self, parser):
        parser.add_argument("--agent", required=True, help="An agent name; `baseline` is built in")
        parser.add_argument("--competition", action="append", default=[], help="Repeat for several")
        parser.add_argument("--split", help="Every competition of a split instead")
        parser.add_argument("--seeds", type=int, default=1)
        parser.add_argument("--time-limit-minutes", type=float, required=True)
        parser.add_argument("--gpus", type=int, default=0)
        parser.add_argument("--gpu-type", default="")
        parser.add_argument("--cpus", type=float, default=1)
        parser.add_argument("--memory-gb", type=float, default=4)
        parser.add_argument("--model", default="")
        parser.add_argument("--network", default=None, help="An egress network (default: no network)")
        privacy = parser.add_mutually_exclusive_group()
        privacy.add_argument("--private", dest="private", action="store_const", const=True, default=None,
                             help="Only the submitter and staff see the runs (default: the site's setting)")
        privacy.add_argument("--public", dest="private", action="store_const", const=False,
                             help="Everyone sees the runs, their logs and code")
        parser.add_argument("--agent-settings", default="{}", help="Agent settings as a JSON object")
        parser.add_argument("--secret", action="append", default=[], metavar="NAME[=VALUE]",
                            help="Give the job the secret NAME=VALUE, or NAME alone to read its value from this "
                                 "command's own environment (kept off the command line); repeat for several")
        parser.add_argument("--user", default="", help="Submit as this user (default: the first superuser)")
        parser.add_argument("--wait", action="store_true", help="Block until every run ended; print JSON lines")
        parser.add_argument("--poll-seconds", type=float, default=2.0)

    def handle(self, *args, **o):
        try:
            job = create_job(
                user=self._user(o["user"]), agent=o["agent"], model=o["model"], competitions=o["competition"],
                split=o["split"], seeds=o["seeds"], time_limit_minutes=o["time_limit_minutes"], gpus=o["gpus"],
                gpu_type=o["gpu_type"], cpus=o["cpus"], memory_gb=o["memory_gb"], network=o["network"],
                settings=self._settings(o["agent_settings"]), private=o["private"], env=self._secrets(o["secret"]),
            )
        except JobError as exc:
            raise CommandError(str(exc)) from None
        self.stderr.write(f"job {job.pk}: {job.tasks.count()} tasks on queue {job.queue}")
        if not o["wait"]:
            self.stdout.write(json.dumps({"job": job.pk, "status": job.status, "state": job.state}))
            return
        for row in wait_for(job, o["poll_seconds"]):
            self.stdout.write(json.dumps(row))

    def _user(self, name: str):
        users = get_user_model().objects
        user = users.filter(username=name).first() if name else users.filter(is_superuser=True).order_by("pk").first()
        if user is None:
            raise CommandError(f"no user {name!r}" if name else
                               "no superuser to submit as: pass --user NAME or run createsuperuser")
        return user

    def _secrets(self, items: list[str]) -> dict[str, str]:
        """`NAME=VALUE` as given, or `NAME` alone: the value of this command's own variable NAME (which
        keeps the value out of the shell's history and the process list)."""
        given = dict(item.split("=", 1) for item in items if "=" in item)
        names = [item for item in items if "=" not in item]
        missing = [name for name in names if name not in os.environ]
        if missing:
            raise CommandError(f"--secret names variables this command's environment lacks: {', '.join(missing)}")
        return {**given, **{name: os.environ[name] for name in names}}

    def _settings(self, text: str) -> dict:
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CommandError(f"--agent-settings is not JSON: {exc}") from None
        if not isinstance(value, dict):
            raise CommandError("--agent-settings must be a JSON object")
        return value


def finished(job: Job) -> bool:
    """Every task ended and every run it produced is no longer being graded (or cannot be yet)."""
    tasks = job.tasks.select_related("run")
    ended = ("graded", "failed", "waiting")  # waiting: no answers registered, so nothing to wait for here
    return all(t.status in JobTask.FINISHED and (t.run is None or t.run.status in ended) for t in tasks)


def wait_for(job: Job, poll_seconds: float) -> list[dict]:
    while not finished(job):
        time.sleep(poll_seconds)
    return job_summary(job)["tasks"]
