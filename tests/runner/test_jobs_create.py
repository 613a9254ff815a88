"""create_job: one task per competition x seed, routed by hardware; every bad request refused with a
clear message and nothing created."""

from __future__ import annotations

import pytest
from django.utils import timezone

from leaderboard.models import Competition, Experiment
from runner.jobs.services import JobError, cancel_job, create_job, job_summary
from runner.models import AgentDefinition, Job, JobTask, Runner

COMPETITIONS = ["spaceship-titanic", "aerial-cactus-identification"]


@pytest.fixture
def public_data(db, tmp_path):
    """Every competition has public data registered (the field the catalogue import fills)."""
    Competition.objects.update(public_data_dir=str(tmp_path))


def runner(name="r1", gpus=(), images=("*",), heartbeat=True, networks=(), **hardware) -> Runner:
    return Runner.objects.create(
        name=name,
        gpus=[{"index": i, "name": n, "memory_mb": 24000, "uuid": f"GPU-{name}-{i}"} for i, n in enumerate(gpus)],
        images=list(images), last_heartbeat=timezone.now() if heartbeat else None, networks=list(networks),
        **hardware,
    )


def make(user, **overrides) -> Job:
    request = {"agent": "baseline", "competitions": COMPETITIONS, "seeds": 2, "time_limit_minutes": 5}
    request.update(overrides)
    return create_job(user=user, **request)


def test_one_task_per_competition_and_seed_queued_for_the_runners_claims(
    alice, catalogue, public_data, django_capture_on_commit_callbacks, monkeypatch
):
    from webapp import queue

    published = []  # nothing goes to the broker: runners attached by URL claim them through the runner API
    monkeypatch.setattr(queue, "send", lambda *args, **kwargs: published.append(args))
    with django_capture_on_commit_callbacks(execute=True):
        job = make(alice, model="gpt-4o", settings={"steps": 3})
    tasks = list(job.tasks.order_by("competition__slug", "seed"))
    assert [(t.competition.slug, t.seed) for t in tasks] == [
        ("aerial-cactus-identification", 0), ("aerial-cactus-identification", 1),
        ("spaceship-titanic", 0), ("spaceship-titanic", 1),
    ]
    assert {t.queue for t in tasks} == {"jobs.cpu"} and {t.status for t in tasks} == {"queued"}
    assert published == []
    assert job.experiment.agent.name == "baseline" and job.experiment.model.name == "gpt-4o"
    assert job.experiment.time_limit_hours == pytest.approx(5 / 60) and job.experiment.settings == {"steps": 3}
    assert job.status == Job.Status.QUEUED and job.created_by == alice


def test_a_split_expands_to_its_competitions(alice, catalogue, public_data, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        job = make(alice, competitions=(), split="low", seeds=1)
    expected = set(Competition.objects.filter(splits__slug="low").values_list("slug", flat=True))
    assert expected and set(job.tasks.values_list("competition__slug", flat=True)) == expected


def test_gpu_tasks_are_routed_to_queues_naming_what_they_need(
    alice, catalogue, public_data, django_capture_on_commit_callbacks
):
    runner(gpus=["NVIDIA A10", "NVIDIA A10"])
    with django_capture_on_commit_callbacks(execute=False):
        any_gpu = make(alice, gpus=2, seeds=1)
        a10 = make(alice, gpus=1, gpu_type="A10", seeds=1)
    assert set(any_gpu.tasks.values_list("queue", flat=True)) == {"jobs.gpu.2"}
    assert set(a10.tasks.values_list("queue", flat=True)) == {"jobs.gpu.a10.1"}


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"competitions": ["no-such-competition"]}, "unknown competition: no-such-competition"),
        ({"competitions": (), "split": "nope"}, "unknown split 'nope'"),
        ({"competitions": ()}, "say which competitions"),
        ({"time_limit_minutes": 0}, "time limit must be above 0"),
        ({"time_limit_minutes": -3}, "time limit must be above 0"),
        ({"time_limit_minutes": 24 * 60 + 1}, "at most 1440 minutes"),
        ({"time_limit_minutes": float("nan")}, "time limit"),
        ({"seeds": 0}, "seeds must be a whole number from 1 to 20"),
        ({"seeds": 21}, "seeds must be a whole number from 1 to 20"),
        ({"gpus": 3}, "3 GPUs asked for, but no runner has more than 2"),
        ({"gpus": 1, "gpu_type": "H100"}, "1 H100 GPUs asked for, but no runner has more than 0"),
        ({"gpu_type": "A10"}, "a GPU type was given without a GPU count"),
        ({"agent": "nobody"}, "unknown agent 'nobody'"),
        ({"network": "bad name!"}, "is not a network name"),
        ({"cpus": 0}, "cpus and memory_gb must be positive"),
    ],
)
def test_bad_requests_are_refused_and_create_nothing(alice, catalogue, public_data, overrides, message):
    runner(gpus=["NVIDIA A10", "NVIDIA A10"])
    experiments = Experiment.objects.count()
    with pytest.raises(JobError, match=message.replace("(", r"\(").replace(")", r"\)")):
        make(alice, **overrides)
    assert Job.objects.count() == 0 and JobTask.objects.count() == 0
    assert Experiment.objects.count() == experiments


def test_without_runners_the_site_maximum_bounds_gpus(alice, catalogue, public_data, settings):
    settings.MAX_GPUS = 4
    with pytest.raises(JobError, match="at most 4 GPUs per task"):
        make(alice, gpus=5)
    assert Job.objects.count() == 0


def test_offline_runners_count_only_when_none_is_online(alice, catalogue, public_data):
    runner("old", gpus=["A100"] * 8, heartbeat=False)
    runner("live", gpus=["A100"])
    with pytest.raises(JobError, match="no runner has more than 1"):
        make(alice, gpus=2)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"cpus": 9}, "9 CPUs asked for, but no runner has more than 8"),
        ({"memory_gb": 64.5}, "64.5 GB of memory asked for, but no runner has more than 64"),
        ({"gpus": 2, "cpus": 8}, "no runner has 2 GPUs, 8 CPUs and 4 GB of memory together"),
    ],
)
def test_cpus_and_memory_beyond_every_runner_are_refused(alice, catalogue, public_data, overrides, message):
    runner("big-cpu", cpu_count=8, memory_gb=64)
    runner("gpu", gpus=["A10", "A10"], cpu_count=4, memory_gb=32)
    with pytest.raises(JobError, match=message):
        make(alice, **overrides)
    assert Job.objects.count() == 0


def test_resources_one_runner_has_are_accepted(alice, catalogue, public_data, django_capture_on_commit_callbacks):
    runner("big-cpu", cpu_count=8, memory_gb=64)
    runner("unknown-memory", cpu_count=2, memory_gb=0)  # memory not detected: not held against a job
    with django_capture_on_commit_callbacks(execute=False):
        assert make(alice, cpus=8, memory_gb=64).cpus == 8
        assert make(alice, cpus=2, memory_gb=500).memory_gb == 500


def test_an_image_no_runner_has_is_refused(alice, catalogue, public_data):
    runner(images=["medalboard-agent:latest"])
    AgentDefinition.objects.create(name="aide", image="aide:missing", command=["aide"])
    with pytest.raises(JobError, match="the image 'aide:missing' does not exist on any runner"):
        make(alice, agent="aide")
    assert Job.objects.count() == 0


def test_competitions_without_public_data_are_refused(alice, catalogue):
    with pytest.raises(JobError, match="no public data registered for spaceship-titanic"):
        make(alice, competitions=["spaceship-titanic"])


def test_secrets_are_sealed_and_required_ones_checked(
    alice, catalogue, public_data, django_capture_on_commit_callbacks, settings
):
    from cryptography.fernet import Fernet

    from runner.host.secrets import unseal

    settings.RUNNER_SECRETS_FERNET_KEY = Fernet.generate_key().decode()
    runner(images=["aide:1"], networks=["egress"])
    AgentDefinition.objects.create(name="aide", image="aide:1", command=["aide"], env_vars=["OPENAI_API_KEY"])
    with pytest.raises(JobError, match="the agent aide needs OPENAI_API_KEY"):
        make(alice, agent="aide")
    with django_capture_on_commit_callbacks(execute=False):
        job = make(alice, agent="aide", env={"OPENAI_API_KEY": "sk-very-secret"}, network="egress")
    assert "sk-very-secret" not in job.sealed_env
    assert unseal(job.sealed_env) == {"OPENAI_API_KEY": "sk-very-secret"} and job.network == "egress"


def test_cancel_ends_queued_tasks_and_only_the_creator_or_staff_may(
    alice, bob, staff, catalogue, public_data, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        job = make(alice)
    with pytest.raises(PermissionError):
        cancel_job(job=job, user=bob)
    job = cancel_job(job=job, user=staff)
    assert job.cancel_requested and set(job.tasks.values_list("status", flat=True)) == {"cancelled"}
    assert job.status == Job.Status.CANCELLED


def test_summary_rows_are_what_submit_job_prints(alice, catalogue, public_data, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        job = make(alice, competitions=["spaceship-titanic"], seeds=1)
    summary = job_summary(job)
    assert summary["status"] == "queued"
    assert summary["tasks"] == [{
        "job": job.pk, "competition": "spaceship-titanic", "seed": 0, "status": "queued", "run": None,
        "score": None, "valid_submission": None, "any_medal": None, "run_status": None, "grading_error": None,
        "state": "queued",
    }]
