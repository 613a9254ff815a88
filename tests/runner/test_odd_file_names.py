"""Files an agent names as storage would never name them ("~", " ", "@@@", 50 extensions, 255 bytes,
a newline, a path longer than an artifact's name holds, bytes that are not UTF-8) next to a valid
submission: the run still ends, is graded, keeps its other files, and stores each odd one under a safe
name of its own, shown under the agent's name; a name that is not UTF-8 is skipped with a note. Run
through the real path: the local backend, and Docker under runc and runsc."""

from __future__ import annotations

import re
from io import BytesIO

import pytest
from django.core.files import File

from leaderboard.models import Artifact, Run
from leaderboard.runs import artifacts
from leaderboard.runs.job_runs import MAX_NAME_CHARS, FileRefused, store_file
from runner.backends.local import LocalBackend
from runner.models import JobTask
from tests.job_support import needs_agent_tools
from tests.runner.test_hostile_agents import (
    assert_no_scratch_left,
    assert_runner_still_healthy,
    everything_about,
    hostile_job,
    run_task,
)

FIFTY_EXTENSIONS = "model" + ".ext" * 50
LONG = "n" * 251 + ".txt"  # 255 bytes, the longest name a file system takes
ACCENTS = "é" * 127  # 254 bytes in UTF-8
FOLDER = "d" * 200  # three of them nest past MAX_NAME_CHARS
PLAIN = ["~", " ", "@@@", "...", "-", "a b.py", "new\nline.txt", FIFTY_EXTENSIONS, LONG, ACCENTS]
NOT_UTF8 = b"bad-\xff\xfe.txt"

AGENT = f"""
    valid_submission()
    (code / "solution.py").write_text("print('the ordinary file')")
    for name in {PLAIN!r}:
        (code / name).write_text("content of " + repr(name))
    with open(os.fsencode(code) + b"/" + {NOT_UTF8!r}, "wb") as f:
        f.write(b"content of bad bytes")
    deep = code / {FOLDER!r} / {FOLDER!r} / {FOLDER!r}
    deep.mkdir(parents=True)
    (deep / "deep.txt").write_text("deep down")
"""


def assert_odd_names_stored_safely(run: Run, job, client) -> None:
    assert run.status == Run.Status.GRADED and run.valid_submission and run.score is not None, run.grading_error
    stored = {a.name: a for a in run.artifacts.all()}
    assert stored["code/solution.py"].file.read() == b"print('the ordinary file')"
    for planted in PLAIN:  # shown under the agent's own name
        artifact = stored.get(f"code/{planted}")
        assert artifact is not None, (planted, sorted(stored))
        assert artifact.file.open("rb").read() == f"content of {planted!r}".encode(), planted
        artifact.file.close()
    for artifact in stored.values():  # under a name storage keeps as it is: short, no odd characters
        assert re.fullmatch(r"runs/\d{4}/\d\d/[\w.-]+", artifact.file.name), artifact.file.name
        assert len(artifact.file.name) <= Artifact._meta.get_field("file").max_length
    deep = [name for name in stored if name.startswith(f"code/{FOLDER}")]
    assert len(deep) == 1 and len(deep[0]) <= MAX_NAME_CHARS and stored[deep[0]].file.read() == b"deep down"
    warnings = "\n".join(run.import_warnings)
    assert "'bad-??.txt': skipped, the name is not UTF-8" in warnings, warnings
    assert not any("bad-" in name for name in stored)
    assert f"{deep[0]}: its name is {len(f'code/{FOLDER}/{FOLDER}/{FOLDER}/deep.txt'):,} characters long" in warnings
    page = everything_about(run, job, client)  # every page and download answers
    assert b"the ordinary file" in page


@needs_agent_tools
def test_odd_file_names_are_stored_safely_with_the_local_backend(alice, client, loopback):
    outcome, run, _ = run_task(hostile_job(alice, AGENT), loopback, LocalBackend())
    assert outcome.status == JobTask.Status.SUCCEEDED, outcome.error
    assert_odd_names_stored_safely(run, JobTask.objects.get(run=run).job, client)


@pytest.mark.docker
@needs_agent_tools
def test_odd_file_names_are_stored_safely_in_docker(alice, client, loopback, docker_backend):
    outcome, run, _ = run_task(hostile_job(alice, AGENT), loopback, docker_backend)
    assert outcome.status == JobTask.Status.SUCCEEDED, outcome.error
    assert_odd_names_stored_safely(run, JobTask.objects.get(run=run).job, client)
    assert_no_scratch_left()
    assert_runner_still_healthy(alice, loopback, docker_backend)


@pytest.mark.parametrize("name, stored_as", [
    ("code/~", r"file-[0-9a-f]{16}"), ("code/ ", r"file-[0-9a-f]{16}"), ("code/@@@", r"file-[0-9a-f]{16}"),
    ("code/..", r"file-[0-9a-f]{16}"), (f"code/{FIFTY_EXTENSIONS}", r"file-[0-9a-f]{16}\.ext"),
    (f"code/{ACCENTS}.csv", r"file-[0-9a-f]{16}\.csv"), ("code/x." + "y" * 70, r"file-[0-9a-f]{16}"),
    ("code/a b.py", r"a_b\.py"), ("logs/trajectory.jsonl", r"trajectory\.jsonl"),
])
def test_the_storage_name_is_the_files_own_when_storage_keeps_it_else_derived(name, stored_as):
    assert re.fullmatch(stored_as, artifacts.storage_name(name))


@needs_agent_tools
def test_one_refused_file_loses_neither_the_run_nor_its_other_files(alice, job_world, monkeypatch):
    from django.core.files.storage import default_storage

    job = hostile_job(alice, "")
    run = Run.objects.create(experiment=job.experiment, competition=job.tasks.get().competition)
    store_file(run, Artifact.Kind.CODE, "code/kept.py", File(BytesIO(b"kept"), name="kept.py"))
    real_save = Artifact.save

    def refuse_one(self, *args, **kwargs):
        if self.name == "code/refused.py":
            raise ValueError("a row storage refuses")
        return real_save(self, *args, **kwargs)

    monkeypatch.setattr(Artifact, "save", refuse_one)
    with pytest.raises(FileRefused, match="a row storage refuses"):
        store_file(run, Artifact.Kind.CODE, "code/refused.py", File(BytesIO(b"refused"), name="refused.py"))
    with pytest.raises(FileRefused, match="longer than"):
        store_file(run, Artifact.Kind.CODE, "c" * (MAX_NAME_CHARS + 1), File(BytesIO(b"x"), name="x"))
    assert list(run.artifacts.values_list("name", flat=True)) == ["code/kept.py"]
    _, files = default_storage.listdir(run.artifacts.get().file.name.rsplit("/", 1)[0])
    assert not any(name.startswith("refused") for name in files)  # its file was not left behind


@needs_agent_tools
def test_a_file_storage_refuses_is_skipped_with_a_note_and_the_run_keeps_the_rest(alice, client, loopback,
                                                                                   monkeypatch):
    real_save = Artifact.save

    def refuse_one(self, *args, **kwargs):
        if self.name == "code/refused.py":
            raise ValueError("a row storage refuses")
        return real_save(self, *args, **kwargs)

    monkeypatch.setattr(Artifact, "save", refuse_one)
    job = hostile_job(alice, """
        valid_submission()
        for name in ("before.py", "refused.py", "sub/after.py"):
            (code / name).parent.mkdir(exist_ok=True)
            (code / name).write_text(name)
    """)
    outcome, run, _ = run_task(job, loopback, LocalBackend())
    assert outcome.status == JobTask.Status.SUCCEEDED, outcome.error
    assert run.status == Run.Status.GRADED and run.valid_submission and run.score is not None
    names = set(run.artifacts.values_list("name", flat=True))
    assert {"code/before.py", "code/sub/after.py", "submission/submission.csv"} <= names
    assert "code/refused.py" not in names
    assert "code/refused.py: not stored, a row storage refuses" in run.import_warnings
