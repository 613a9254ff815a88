"""Job workflows: create (validate everything first, create nothing on a refusal), cancel, summarise.

`create_job` makes one Job and one JobTask per competition x seed, queued in the database with the queue
name of the hardware it needs (runner.jobs.queues): runners attached by URL and token claim them through
the runner API (runner.api_v1.claims); nothing is sent to the broker for them. The web layer adds
permissions and per-user limits around it; secrets arrive decrypted in `env` and are sealed here.
"""

from __future__ import annotations

import json
import logging
import math
import re
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction

from leaderboard.models import Competition, Split
from runner.agents.base_image import builds_images
from runner.host.networks import NetworkRefused, check_network, refusal
from runner.host.secrets import MIN_REDACTED_CHARS
from runner.jobs import states
from runner.jobs.queues import gpu_type_matches, queue_for
from runner.jobs.task_leases import cancel_queued
from runner.models import AgentDefinition, Job, JobTask, Runner

log = logging.getLogger(__name__)
BASELINE = "baseline"
NO_MODEL = "no-llm"
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")


class JobError(Exception):
    """A job was refused; the message says why, in words a user can act on. Nothing was created."""


def default_agent_image() -> str:
    return settings.MEDALBOARD_AGENT_IMAGE  # one default, in settings


def ensure_builtin_agents() -> None:
    """The built-in baseline agent: the site's agent image running the baseline script."""
    AgentDefinition.objects.update_or_create(
        name=BASELINE,
        defaults={
            "image": "", "builtin": True, "env_vars": [],
            "command": ["python3", "{TOOLS_DIR}/baseline_agent.py"],
            "description": "Time-budgeted scikit-learn search with cross-validation; no LLM.",
        },
    )


def create_job(
    *, user, agent: str, model: str = "", competitions: list[str] | tuple[str, ...] = (), split: str | None = None,
    seeds: int = 1, time_limit_minutes: float, gpus: int = 0, gpu_type: str = "", cpus: float = 1,
    memory_gb: float = 4, settings: dict | None = None, network: str | None = None,
    env: dict[str, str] | None = None, private: bool | None = None, experiment=None,
    requirements: dict[str, str] | None = None,
) -> Job:
    """Validate the request, then create the job and its tasks; they are enqueued after commit.
    `private` (None: the site's MEDALBOARD_JOB_RUNS_PRIVATE_DEFAULT) makes every run of the job
    private to its owner and staff, as an upload's privacy does. `experiment` (a reproduction's)
    is the one its runs join instead of the configuration's own; `requirements` ({"backend",
    "runtime"}) what a runner must match to take its tasks."""
    if agent == BASELINE:
        ensure_builtin_agents()
    definition = _agent(agent)
    chosen = _competitions(competitions, split)
    _check_numbers(seeds=seeds, time_limit_minutes=time_limit_minutes, gpus=gpus, cpus=cpus, memory_gb=memory_gb)
    _check_hardware(gpus=gpus, gpu_type=gpu_type, cpus=cpus, memory_gb=memory_gb)
    _check_image(definition)
    _check_network(network)
    _check_settings(settings)
    _check_requirements(requirements or {})
    sealed = _seal(definition, env or {})
    with transaction.atomic():
        experiment = experiment or _experiment(user, definition, model, settings, gpus, gpu_type, cpus, memory_gb,
                                               time_limit_minutes, network)
        job = Job.objects.create(
            experiment=experiment,
            agent=definition, model_name=model.strip(), settings=settings or {}, split=split or "", seeds=seeds,
            time_limit_s=time_limit_minutes * 60, gpu_type=gpu_type.strip(), gpus=gpus, cpus=cpus,
            memory_gb=memory_gb, network=network, sealed_env=sealed, created_by=user,
            private=job_runs_private(private), requirements=requirements or {},
        )
        queue_name = queue_for(gpus=gpus, gpu_type=gpu_type)
        JobTask.objects.bulk_create(
            JobTask(job=job, competition=c, seed=s, queue=queue_name, max_attempts=settings_max_attempts())
            for c in chosen for s in range(seeds)
        )
    return job


def job_runs_private(private: bool | None) -> bool:
    return settings.JOB_RUNS_PRIVATE_DEFAULT if private is None else bool(private)


def settings_max_attempts() -> int:
    return max(1, settings.JOB_MAX_ATTEMPTS)


def _agent(name: str) -> AgentDefinition:
    definition = AgentDefinition.objects.filter(name=(name or "").strip()).first()
    if definition is None:
        known = ", ".join(AgentDefinition.objects.values_list("name", flat=True)) or BASELINE
        raise JobError(f"unknown agent {name!r}; known agents: {known}")
    return definition


def _competitions(slugs, split: str | None) -> list[Competition]:
    slugs = [s.strip() for s in slugs if s and s.strip()]
    if slugs and split:
        raise JobError("give competitions or a split, not both")
    if split:
        matches = list(Split.objects.filter(slug=split.strip()))
        if not matches:
            raise JobError(f"unknown split {split!r}")
        if len(matches) > 1:
            raise JobError(f"the split {split!r} exists in several benchmarks; name the competitions instead")
        chosen = list(matches[0].competitions.order_by("slug"))
        if not chosen:
            raise JobError(f"the split {split!r} has no competitions")
    elif slugs:
        found = {c.slug: c for c in Competition.objects.filter(slug__in=slugs)}
        unknown = [s for s in slugs if s not in found]
        if unknown:
            raise JobError(f"unknown competition{'s' if len(unknown) > 1 else ''}: {', '.join(unknown)}")
        chosen = [found[s] for s in dict.fromkeys(slugs)]
    else:
        raise JobError("say which competitions to run: a list or a split")
    missing = [c.slug for c in chosen if not getattr(c, "public_data_dir", "")]
    if missing:
        raise JobError(
            f"no public data registered for {', '.join(missing[:10])}{' ...' if len(missing) > 10 else ''} "
            "(import it with `import_competitions DIR --data-dir ROOT`)"
        )
    return chosen


MAX_CPUS = 4096
MAX_MEMORY_GB = 2**20


def _check_numbers(*, seeds, time_limit_minutes, gpus, cpus, memory_gb) -> None:
    if not isinstance(seeds, int) or not 1 <= seeds <= settings.MAX_SEEDS:
        raise JobError(f"seeds must be a whole number from 1 to {settings.MAX_SEEDS}, not {seeds!r}")
    limit = settings.MAX_TIME_LIMIT_MINUTES
    if not _finite(time_limit_minutes) or not 0 < time_limit_minutes <= limit:
        raise JobError(f"the time limit must be above 0 and at most {limit:g} minutes, not {time_limit_minutes!r}")
    if not isinstance(gpus, int) or gpus < 0:
        raise JobError(f"gpus must be a whole number, 0 or more, not {gpus!r}")
    if not _finite(cpus) or not 0 < cpus <= MAX_CPUS or not _finite(memory_gb) or not 0 < memory_gb <= MAX_MEMORY_GB:
        # Bounded because they become an integer column (cpu_count) and a byte count (memory_gb * 2^30)
        raise JobError(f"cpus and memory_gb must be positive numbers (cpus at most {MAX_CPUS}, memory_gb at most "
                       f"{MAX_MEMORY_GB})")


def _check_settings(value: dict | None) -> None:
    """Settings are stored as JSON and handed to the agent: NaN and infinity are not JSON."""
    try:
        json.dumps(value or {}, allow_nan=False)
    except (ValueError, TypeError, RecursionError) as exc:
        raise JobError(f"settings must be plain JSON with finite numbers: {exc}") from None


def _finite(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _runners_to_ask() -> list[Runner]:
    """The online runners; if none is online, every registered one (their hardware is still known)."""
    runners = list(Runner.objects.all())
    online = [r for r in runners if r.current_status != Runner.Status.OFFLINE]
    return online or runners


def _check_hardware(*, gpus: int, gpu_type: str, cpus: float, memory_gb: float) -> None:
    """Some runner must have the GPUs, the CPUs and the memory asked for, all on the one machine."""
    if gpu_type.strip() and not gpus:
        raise JobError("a GPU type was given without a GPU count")
    runners = _runners_to_ask()
    if not runners:
        if gpus > settings.MAX_GPUS:
            raise JobError(f"at most {settings.MAX_GPUS} GPUs per task (no runner has registered yet)")
        return
    asked = {"gpus": gpus, "cpus": cpus, "memory_gb": memory_gb}
    offers = [_offer(r, gpu_type) for r in runners]
    for what, label in (("gpus", f"{gpu_type.strip()} GPUs".lstrip()), ("cpus", "CPUs"), ("memory_gb", "GB of memory")):
        best = max(offer[what] for offer in offers)
        if asked[what] > best:
            raise JobError(f"{asked[what]:g} {label} asked for, but no runner has more than {best:g}")
    if not any(all(asked[k] <= offer[k] for k in asked) for offer in offers):
        raise JobError(f"no runner has {gpus} GPUs, {cpus:g} CPUs and {memory_gb:g} GB of memory together")


def _offer(runner: Runner, gpu_type: str) -> dict[str, float]:
    """What one runner can give a task; a memory of 0 means the runner could not tell (not limiting)."""
    return {"gpus": sum(1 for g in runner.gpus if gpu_type_matches(gpu_type, str(g.get("name", "")))),
            "cpus": runner.cpu_count, "memory_gb": runner.memory_gb or math.inf}


def agent_image(definition: AgentDefinition) -> str:
    return definition.image or default_agent_image()


def _check_image(definition: AgentDefinition) -> None:
    runners = _runners_to_ask()
    if not runners and definition.builtin:
        return  # the site's own image: built with the documented command on each runner
    image = agent_image(definition)
    packaged = definition.package_format == AgentDefinition.Format.MLEBENCH  # a remote runner can build it
    if not any("*" in r.images or image in r.images or (packaged and builds_images(r)) for r in runners):
        raise JobError(_missing_image(definition, image))


def _missing_image(definition: AgentDefinition, image: str) -> str:
    """Why an agent's image is on no runner, and how to build it."""
    if definition.package_format != "mlebench":
        return f"the image {image!r} does not exist on any runner"
    build = f"`python manage.py build_agent_images {definition.name}` on a Docker runner's host"
    failure = (definition.package or {}).get("build_error")
    if failure:
        cause = f" (likely cause: {failure['cause']})" if failure.get("cause") else ""
        step = f" at {failure['step']}" if failure.get("step") else ""
        return (f"agent {definition.name}: its image {image} did not build{step}{cause} when it was imported; "
                f"fix its folder, then run {build}. The build said: {failure.get('error', '')[-1500:]}")
    return (f"agent {definition.name}: its image {image} is not built on any runner (imported with --no-build, "
            f"or built where no runner reports it): run {build}")


def _check_requirements(requirements: dict[str, str]) -> None:
    """Some runner must start sandboxes as asked (a reproduction: as its original ran)."""
    if requirements and not any(r.meets(requirements) for r in _runners_to_ask()):
        wanted = ", ".join(f"{key} {value}" for key, value in sorted(requirements.items()) if value)
        raise JobError(f"no runner starts sandboxes with {wanted}")


def _check_network(network: str | None) -> None:
    """Never a network that shares the host's or the site's (runner.host.networks), and only one some
    runner's operator offers sandboxes; each runner checks its own list again before the start."""
    try:
        check_network(network, networks_on_runners(), offered_by="any runner offers")
    except NetworkRefused as exc:
        raise JobError(str(exc)) from None


def networks_on_runners() -> list[str]:
    """The networks the runners that would be asked offer sandboxes, each once, sorted."""
    names = {name for r in _runners_to_ask() for name in r.networks or [] if refusal(name) is None}
    return sorted(names)


def _seal(definition: AgentDefinition, env: dict[str, str]) -> str:
    bad = [k for k, v in env.items() if not ENV_NAME.match(str(k)) or not isinstance(v, str)]
    if bad:
        raise JobError(f"environment names must be letters, digits and _ with text values: {', '.join(map(str, bad))}")
    missing = [name for name in definition.env_vars if name not in env]
    if missing:
        raise JobError(f"the agent {definition.name} needs {', '.join(missing)}")
    short = [k for k, v in env.items() if 0 < len(v) < MIN_REDACTED_CHARS]
    if short:  # a value that short cannot be told apart from ordinary text, so it could not be redacted
        raise JobError(f"secret values must be empty or at least {MIN_REDACTED_CHARS} characters: {', '.join(short)}")
    if not env:
        return ""
    from django.core.exceptions import ImproperlyConfigured

    from runner.host.secrets import seal

    try:
        return seal(env)
    except ImproperlyConfigured as exc:
        raise JobError(f"secrets cannot be stored on this site: {exc}") from None


def _experiment(user, definition, model, experiment_settings, gpus, gpu_type, cpus, memory_gb, minutes, network):
    from leaderboard.runs.job_runs import ExperimentSpec, experiment_for

    spec = ExperimentSpec(agent_name=definition.name, model_name=model.strip() or NO_MODEL, gpu_type=gpu_type,
                          gpu_count=gpus, cpu_count=math.ceil(cpus), memory_gb=memory_gb,
                          time_limit_hours=minutes / 60, settings=experiment_settings or {})
    return experiment_for(owner=user, spec=spec, network=network)


def cancel_job(*, job: Job, user) -> Job:
    """Queued tasks end at once; running ones are stopped by their runner within seconds."""
    if not (user.is_staff or job.created_by_id == user.pk):
        raise PermissionError("only the job's creator or staff can cancel it")
    with transaction.atomic():
        Job.objects.filter(pk=job.pk).update(cancel_requested=True)
        cancel_queued(JobTask.objects.filter(job=job))
    job.refresh_from_db()
    return job


@dataclass(frozen=True)
class _Row:
    job: int
    competition: str
    seed: int
    status: str
    run: int | None
    score: float | None
    valid_submission: bool | None
    any_medal: bool | None
    run_status: str | None  # added after the fields above, which keep their order
    grading_error: str | None  # why the run has no score, once grading has ended without one
    state: str  # the task in words (runner.jobs.states): how the agent stopped, what became of its submission


def task_row(task: JobTask) -> dict:
    """One line of `submit_job --wait`: the task and, once it has one, its run's grading outcome."""
    run = task.run
    graded = run is not None and run.status == run.Status.GRADED
    return _Row(
        job=task.job_id, competition=task.competition_id and task.competition.slug, seed=task.seed,
        status=task.status, run=run.pk if run else None, run_status=run.status if run else None,
        score=run.score if graded else None, valid_submission=run.valid_submission if graded else None,
        any_medal=run.any_medal if graded else None, grading_error=states.unscored_reason(run),
        state=states.task_state(task),
    ).__dict__


def job_summary(job: Job) -> dict:
    """The job's derived status and state and one row per task (the rows `submit_job --wait` prints);
    `not_scored` counts the runs whose grading ended without a score, each row saying why."""
    tasks = list(job.tasks.select_related("competition", "run").order_by("competition__slug", "seed"))
    rows = [task_row(t) for t in tasks]
    return {
        "job": job.pk, "status": Job.Status(states.job_status(tasks)).value, "agent": job.agent.name,
        "model": job.model_name, "cancel_requested": job.cancel_requested,
        "not_scored": states.not_scored(tasks), "tasks": rows, "state": states.job_state(tasks),
    }


def runner_summary(runner: Runner) -> dict:
    """A runner as /runners/ and the API show it: status, hardware, and which job holds which GPU."""
    holders = {slot.index: slot.task for slot in runner.gpu_slots.select_related("task")}
    return {
        "name": runner.name, "hostname": runner.hostname, "backend": runner.backend,
        "status": runner.current_status, "last_heartbeat": runner.last_heartbeat, "cpu_count": runner.cpu_count,
        "memory_gb": runner.memory_gb, "concurrency": runner.concurrency, "queues": runner.queues,
        "stuck_tasks": runner.stuck_tasks,
        "networks": runner.networks,
        "gpus": [{**gpu, "task": holders[gpu["index"]].pk if holders.get(gpu["index"]) else None,
                  "job": holders[gpu["index"]].job_id if holders.get(gpu["index"]) else None}
                 for gpu in runner.gpus],
        "running": list(runner.tasks.filter(status__in=(JobTask.Status.RUNNING, JobTask.Status.GRADING))
                        .values_list("pk", flat=True)),
    }
