"""Downloading a run's trajectory as Medalboard JSONL: complete, private-aware, and re-importable."""


import pytest

from leaderboard.models import Run
from leaderboard.trajectories.importers import detect, read_trajectories, save_steps
from tests.runs.test_import_run_command import import_run
from tests.runs.test_submission import TRAJECTORIES
from tests.trajectories.import_support import make_run, stored_rows

FIELDS = ("index", "parent_index", "kind", "t", "title", "text", "data", "score")


def _steps(run: Run) -> list[tuple]:
    return stored_rows(run, FIELDS)


@pytest.mark.parametrize("fixture", ["aide/translucent-spaniel_journal.json",
                                     "mlagentbench/gemini-pro_cifar10_0_trace.json",
                                     "openhands/basic_gui_mode.json"])
def test_export_then_import_gives_the_same_steps(client, catalogue, tmp_path, fixture):
    import_run(TRAJECTORIES / fixture, "--agent", "agent", "--model", "model", "--competition", "some-task")
    original = Run.objects.get()
    response = client.get(f"/runs/{original.pk}/trajectory.jsonl")
    assert response.status_code == 200 and response["Content-Type"] == "application/x-ndjson"
    exported = tmp_path / "exported.jsonl"
    exported.write_bytes(b"".join(response.streaming_content))
    assert detect(exported) == "jsonl"
    [parsed] = list(read_trajectories(exported))
    copy = make_run()
    save_steps(copy, parsed)
    assert parsed.warnings == []
    assert _steps(copy) == _steps(original) and copy.n_steps == original.n_steps
    assert parsed.meta.task_name == "some-task" and parsed.meta.agent == "agent"


def test_export_streams_in_chunks(client, catalogue, monkeypatch, tmp_path):
    from leaderboard.trajectories import exports

    monkeypatch.setattr(exports, "CHUNK", 1000)
    import_run(TRAJECTORIES / "aide" / "translucent-spaniel_journal.json", "--agent", "a", "--model", "m")
    run = Run.objects.get()
    chunks = list(client.get(f"/runs/{run.pk}/trajectory.jsonl").streaming_content)
    assert len(chunks) > 10 and max(len(c) for c in chunks[1:]) <= 1000  # header, then the file piece by piece
    lines = b"".join(chunks).splitlines()
    assert len(lines) == run.n_steps + 1


def test_private_trajectories_are_not_downloadable_by_others(client, catalogue, alice, bob):
    import_run(TRAJECTORIES / "aide" / "translucent-spaniel_journal.json", "--agent", "a", "--model", "m",
               "--owner", "alice", "--private")
    run = Run.objects.get()
    assert client.get(f"/runs/{run.pk}/trajectory.jsonl").status_code == 404
    client.force_login(bob)
    assert client.get(f"/runs/{run.pk}/trajectory.jsonl").status_code == 404
    client.force_login(alice)
    assert client.get(f"/runs/{run.pk}/trajectory.jsonl").status_code == 200
