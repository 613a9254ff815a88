"""Every run from a job records its recipe as its sandbox starts: agent version, image, command,
data version, seed, settings, hardware, time limit and how the sandbox ran. The data version is a
hash of the public folder computed once per state of the folder (a listing finds it again), never
following a link; a job that asks for a runtime goes only to runners that start sandboxes that way."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from runner.backends.local import LocalBackend
from runner.jobs import recipes
from runner.jobs.services import JobError, create_job
from runner.models import JobTask, PublicDataVersion, Runner
from tests.job_support import COMPETITION, scripted_job
from tests.runner.test_jobs_execution import run_task


def by_hand(folder: Path) -> str:
    """The documented hash, computed here: sha256 over '<path>\\0file\\0<sha256 of content>' lines in path order."""
    lines = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()):
        relative = path.relative_to(folder).as_posix()
        lines.append(f"{relative}\0file\0{hashlib.sha256(path.read_bytes()).hexdigest()}\n")
    return hashlib.sha256("".join(lines).encode()).hexdigest()


@pytest.fixture
def folder(tmp_path) -> Path:
    root = tmp_path / "public"
    (root / "images").mkdir(parents=True)
    (root / "train.csv").write_text("id,y\n1,0\n")
    (root / "images" / "a.png").write_bytes(b"\x89PNG" + bytes(range(256)) * 10)
    return root


def test_the_data_version_is_the_folders_content_hash(db, folder):
    version = recipes.data_version(folder)
    assert version == {"version": by_hand(folder), "files": 2, "bytes": 9 + 2564}


def test_it_is_computed_once_per_state_of_the_folder(db, folder, monkeypatch):
    first = recipes.data_version(folder)["version"]
    real = recipes.content_digest
    monkeypatch.setattr(recipes, "content_digest", lambda *a: pytest.fail("hashed the content again"))
    assert recipes.data_version(folder)["version"] == first  # the listing found the cached hash
    (folder / "train.csv").write_text("id,y\n1,1\n")
    os.utime(folder / "train.csv", ns=(1, 1))
    monkeypatch.setattr(recipes, "content_digest", real)
    changed = recipes.data_version(folder)["version"]
    assert changed != first and changed == by_hand(folder)
    assert PublicDataVersion.objects.filter(path=str(folder)).count() == 2


def test_links_are_listed_never_followed(db, folder, tmp_path):
    outside = tmp_path / "answers.csv"
    outside.write_text("secret answers\n")
    (folder / "answers.csv").symlink_to(outside)
    before = recipes.data_version(folder)
    outside.write_text("other answers\n")
    os.utime(outside, ns=(5, 5))
    assert recipes.data_version(folder) == before  # the target's content never entered the hash
    assert before["version"] != by_hand(folder) and before["files"] == 2


def test_a_job_run_records_its_recipe(alice, loopback, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        job = scripted_job(alice, seeds=1, steps=2, sleep=0.05, colour="blue")
    task = job.tasks.get()
    assert run_task(task, loopback).status == JobTask.Status.SUCCEEDED
    task.refresh_from_db()
    recipe = task.run.recipe
    data = Path(task.competition.public_data_dir)
    assert recipe["agent"]["name"] == "scripted" and recipe["agent"]["command"] == job.agent.command
    assert recipe["agent"]["version"] == recipes.agent_version(job) and recipe["agent"]["version"].startswith("site-")
    assert recipe["data"] == {"competition": COMPETITION, "version": by_hand(data), "files": 2,
                              "bytes": sum(p.stat().st_size for p in data.iterdir())}
    assert (recipe["seed"], recipe["settings"], recipe["time_limit_s"], recipe["model"]) == (
        0, {"steps": 2, "sleep": 0.05, "colour": "blue"}, 60.0, "")
    assert recipe["hardware"]["cpus"] == job.cpus and recipe["hardware"]["runner_cpus"] == task.runner.cpu_count
    assert recipe["sandbox"] == {"attached": "api", "backend": "local"}  # the runner's word on its sandbox
    assert "sandbox" not in {f.name for f in JobTask._meta.get_fields()}  # one place: the run's recipe


def test_a_runtime_asked_for_needs_a_runner_that_has_it(alice, job_world, loopback):
    with pytest.raises(JobError, match="no runner starts sandboxes with backend docker, runtime runsc"):
        create_job(user=alice, agent="scripted", competitions=[COMPETITION], time_limit_minutes=1,
                   requirements={"backend": "docker", "runtime": "runsc"})
    Runner.objects.create(name="gvisor-box", backend="docker", runtime="runsc", images=["*"], cpu_count=2,
                          last_heartbeat=job_world.last_heartbeat, queues=["jobs.cpu"])
    job = create_job(user=alice, agent="scripted", competitions=[COMPETITION], time_limit_minutes=1,
                     requirements={"backend": "docker", "runtime": "runsc"})
    with pytest.raises(AssertionError, match="served no task"):  # a local runner: not this job's kind
        loopback.run_one(LocalBackend(), timeout_s=5)
    assert job.tasks.get().status == JobTask.Status.QUEUED and job.tasks.get().attempts == 0
    loopback_runner = Runner.objects.exclude(name__in=["gvisor-box", job_world.name]).get()
    assert Runner.objects.get(name="gvisor-box").meets(job.requirements)
    assert not loopback_runner.meets(job.requirements)


def test_the_lease_is_renewed_while_a_large_folder_is_hashed(db, folder, monkeypatch):
    monkeypatch.setattr(recipes, "TICK_S", 0.0)
    monkeypatch.setattr(recipes, "CHUNK", 256)  # a.png is 11 chunks
    ticks = []
    recipes.data_version(folder, lambda: ticks.append(1))
    assert len(ticks) >= 11
    ticks.clear()
    recipes.data_version(folder, lambda: ticks.append(1))  # cached: only the listing, a tick per folder
    assert 1 <= len(ticks) <= 3


def test_a_folder_that_cannot_be_read_is_said_in_the_recipe(db, folder, monkeypatch):
    def unreadable(*args):
        raise PermissionError(13, "Permission denied", str(folder / "images"))

    monkeypatch.setattr(recipes, "listing", unreadable)
    spec = SimpleNamespace(data_dir=folder, image="img", gpus=())
    job = SimpleNamespace(agent=SimpleNamespace(name="a", command=["x"], image=""), agent_version="v", agent_image="",
                          model_name="", settings={}, gpus=0, gpu_type="", cpus=1, memory_gb=1, time_limit_s=60,
                          network=None)
    task = SimpleNamespace(job=job, competition=SimpleNamespace(slug=COMPETITION), seed=3, runner=None)
    backend = SimpleNamespace(name="local", describe=lambda spec: {"backend": "local"})
    recipe = recipes.build(task, spec, backend)
    assert recipe["data"] == {"competition": COMPETITION, "error": f"PermissionError: [Errno 13] Permission denied: "
                                                                   f"'{folder / 'images'}'"}
    assert recipe["seed"] == 3 and recipe["agent"]["version"] == "v"


def test_a_remote_runners_recipe_is_the_same_record_with_its_report_bounded(alice, job_world,
                                                                             django_capture_on_commit_callbacks):
    """A remote runner reports only how its sandbox ran; the site makes the rest as in-process (the same
    data version for the same public folder) and keeps of the report a few short strings."""
    with django_capture_on_commit_callbacks(execute=False):
        job = scripted_job(alice, seeds=1, steps=2, sleep=0.05)
    task = JobTask.objects.select_related("job__agent", "competition", "runner").get(job=job)
    report = {"sandbox": {"backend": "docker", "runtime": "runsc", "image_id": "sha256:" + "a" * 64,
                          "runner": "x" * 5000, "image": "built-on-the-runner:1", "privileged": True, "extra": ["no"],
                          "image_environment": {"flavour": "light"}}, "agent": {"name": "forged"}}
    recipe = recipes.from_remote(task, "medalboard-agent:test", report)
    assert recipe["sandbox"] == {"attached": "api", "backend": "docker", "runtime": "runsc", "runner": "x" * 200}
    assert recipe["agent"]["name"] == "scripted" and recipe["agent"]["image"] == "built-on-the-runner:1"  # as it ran
    assert recipe["agent"]["image_id"] == "sha256:" + "a" * 64
    assert recipe["agent"]["environment"] == {"flavour": "light"}
    del report["sandbox"]["image"]
    assert recipes.from_remote(task, "medalboard-agent:test", report)["agent"]["image"] == "medalboard-agent:test"
    assert recipe["data"]["version"] == by_hand(Path(task.competition.public_data_dir))
    assert recipes.from_remote(task, "i", {"sandbox": "not a dict"})["sandbox"] == {"attached": "api"}
    assert recipes.from_remote(task, "i", ["not", "a", "dict"])["agent"]["image_id"] == ""


def test_the_manifest_a_remote_runner_gets_keeps_the_data_version_unread_again(db, folder, monkeypatch):
    """The claim's manifest hashes every public file once; the recipe's data version (made by the site
    in the run's start request) comes from those hashes, never from reading the folder again."""
    from runner.api_v1 import data

    data.manifest(folder)
    monkeypatch.setattr(recipes, "file_hash", lambda *a: pytest.fail("read the folder again"))
    assert recipes.data_version(folder) == {"version": by_hand(folder), "files": 2, "bytes": 9 + 2564}
