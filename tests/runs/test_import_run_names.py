"""`import_run` without flags: the task and model come from the trajectory or the folders around it,
never from the file's own name with `_journal` on it; Inspect samples are tasks, epochs are seeds;
an empty file gets one clear message."""

from __future__ import annotations

import json
import shutil
import zipfile
from io import StringIO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from leaderboard.models import Run
from leaderboard.trajectories.importers.run_context import run_context
from tests.trajectories.import_support import TRAJECTORIES_DIR

JOURNAL = TRAJECTORIES_DIR / "aide" / "translucent-spaniel_journal.json"
TRACE = TRAJECTORIES_DIR / "mlagentbench" / "gemini-pro_cifar10_0_trace.json"


def import_run(*args) -> str:
    out = StringIO()
    call_command("import_run", *[str(a) for a in args], stdout=out)
    return out.getvalue()


def test_an_aide_log_folder_gives_task_and_model(catalogue, tmp_path):
    folder = tmp_path / "logs" / "2-translucent-spaniel-of-promotion"
    folder.mkdir(parents=True)
    shutil.copy(JOURNAL, folder / "journal.json")
    (folder / "config.yaml").write_text("data_dir: /data/house-prices\nexp_name: 2-translucent-spaniel\n"
                                        "agent:\n  code:\n    model: gpt-4o-2024-08-06\n")
    import_run(folder / "journal.json")
    run = Run.objects.get()
    assert run.task_name == "house-prices" and run.experiment.model.name == "gpt-4o-2024-08-06"


def test_an_mlebench_run_folder_names_the_competition(catalogue, tmp_path):
    folder = tmp_path / "spaceship-titanic_4f5e1d0c-1b2a-4c3d-9e8f-0a1b2c3d4e5f" / "logs"
    folder.mkdir(parents=True)
    shutil.copy(JOURNAL, folder / "journal.json")
    import_run(folder / "journal.json", "--model", "o1-preview")
    assert Run.objects.get().competition.slug == "spaceship-titanic"


def test_mlagentbench_layouts_give_task_and_model(tmp_path):
    nested = tmp_path / "gemini-pro" / "cifar10" / "0" / "env_log" / "trace.json"
    nested.parent.mkdir(parents=True)
    nested.write_text("{}")
    assert run_context(nested) == {"task": "cifar10", "model": "gemini-pro"}
    assert run_context(TRACE) == {"task": "cifar10", "model": "gemini-pro"}


def test_a_bare_journal_is_named_without_its_suffix(catalogue):
    import_run(JOURNAL, "--model", "gpt-4o")
    assert Run.objects.get().task_name == "translucent-spaniel"


def test_inspect_samples_are_tasks_and_epochs_are_seeds(catalogue, tmp_path):
    source = next((TRAJECTORIES_DIR / "inspect").glob("*.eval"))
    copy = tmp_path / "two-epochs.eval"
    with zipfile.ZipFile(source) as original, zipfile.ZipFile(copy, "w") as target:
        for item in original.infolist():
            data = original.read(item.filename)
            target.writestr(item, data)
            if item.filename == "samples/1_epoch_1.json":
                sample = json.loads(data)
                sample["epoch"] = 2
                target.writestr("samples/1_epoch_2.json", json.dumps(sample))
    import_run(copy)
    runs = Run.objects.filter(task_name="popularity/1")
    assert sorted(runs.values_list("seed", flat=True)) == [0, 1]
    assert Run.objects.count() == 11 and Run.objects.get(task_name="popularity/2").seed == 0
    assert {r.experiment.model.name for r in Run.objects.all()} == {"openai/gpt-4o-mini"}


def test_an_empty_file_gets_one_clear_message(catalogue, tmp_path, client, alice):
    empty = tmp_path / "journal.json"
    empty.write_bytes(b"")
    with pytest.raises(CommandError) as failure:
        import_run(empty)
    assert str(failure.value).endswith("the file is empty (nothing to import)")
    client.force_login(alice)
    page = client.post("/runs/upload/", {"task": "t", "agent": "a", "model": "m", "seed": 0, "gpu_count": 0,
                                         "trajectory_files": SimpleUploadedFile("t.json", b"")}).content.decode()
    assert "The submitted file is empty." in page and "Upload a submission, a trajectory, or both." not in page
    assert not Run.objects.exists()


def test_the_api_takes_a_task_as_the_form_does(catalogue, alice):
    from tests.api.test_runs import token_client

    files = [SimpleUploadedFile(TRACE.name, TRACE.read_bytes()),
             SimpleUploadedFile("main_log", (TRACE.parent / "gemini-pro_cifar10_0_main_log").read_bytes())]
    response = token_client(alice).post("/api/runs/", {"task": "cifar10", "agent": "MLAgentBench",
                                                       "model": "gemini-pro", "trajectory_files": files},
                                        format="multipart")
    assert response.status_code == 201, response.content
    assert response.json()["task_name"] == "cifar10" and response.json()["competition"] is None
    both = token_client(alice).post("/api/runs/", {"task": "cifar10", "competition": "spaceship-titanic",
                                                   "agent": "a", "model": "m", "score": 1.0}, format="multipart")
    assert both.status_code == 400 and "not both" in both.content.decode()


def test_the_api_docs_link_back_to_the_site(client, db):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    assert "[← Back to Medalboard](/)" in schema["info"]["description"]
