"""A trajectory that cannot be read is refused by the form and the API as the CLI refuses it,
never stored as an empty run; absurd token counts are repaired with a warning
that names the line (item 14)."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from leaderboard.models import Run
from leaderboard.trajectories.importers.jsonl import header_line, step_line
from tests.api.test_runs import payload, token_client


def _fake_eval() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("readme.txt", "not an Inspect log")
    return buffer.getvalue()


def _aide_with_a_huge_first_node() -> bytes:
    node = {"code": "x = 1\n" * 250_000, "plan": "train a model", "id": "a", "step": 0, "metric": None}
    return json.dumps({"nodes": [node, {**node, "code": "y = 2", "id": "b", "step": 1}],
                       "node2parent": {"b": "a"}}).encode()


UNREADABLE = [
    pytest.param("journal.json", b"[]", id="empty-array"),
    pytest.param("journal.json", b"{}", id="empty-object"),
    pytest.param("journal.json", b'"a bare string"', id="bare-string"),
    pytest.param("journal.json", b"42", id="bare-number"),
    pytest.param("journal.json", json.dumps({"nodes": [{"plan": "p", "code": "c"}]}).encode("utf-16"),
                 id="utf-16-journal"),
    pytest.param("log.eval", _fake_eval(), id="fake-eval"),
    pytest.param("log.eval", b"not even a zip", id="fake-eval-not-zip"),
    pytest.param("run.jsonl", b'{"format": "medalboard-trajectory", "version": 1, "task": ["x"], '
                              b'"tokens_in": "many", "started_at": 5}\n'
                 + step_line({"kind": "message", "text": "hi"}), id="jsonl-header-bad-types"),
    pytest.param("run.jsonl", header_line({"task": "t"}), id="jsonl-no-steps"),
    pytest.param("journal.json", _aide_with_a_huge_first_node(), id="aide-first-node-over-1MiB"),
]


@pytest.mark.parametrize(("name", "content"), UNREADABLE)
def test_the_api_refuses_an_unreadable_trajectory(alice, catalogue, name, content):
    response = token_client(alice).post("/api/runs/", payload(
        trajectory_files=[SimpleUploadedFile(name, content)]), format="multipart")
    assert response.status_code == 400, response.content
    assert name in response.json()["detail"]
    assert not Run.objects.exists()


@pytest.mark.parametrize(("name", "content"), UNREADABLE)
def test_the_cli_refuses_them_too(db, catalogue, tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(CommandError):
        call_command("import_run", str(path), "--agent", "a", "--model", "m", "--competition",
                     "spaceship-titanic", stdout=io.StringIO())
    assert not Run.objects.exists()


def test_the_form_refuses_an_unreadable_trajectory(client, alice, catalogue):
    from tests.web.test_upload_form import URL, form_data

    client.force_login(alice)
    response = client.post(URL, form_data(trajectory_files=SimpleUploadedFile("journal.json", b"{}")))
    assert response.status_code == 200 and b"journal.json" in response.content
    assert not Run.objects.exists()


def test_a_plain_text_log_is_kept_beside_the_submission(alice, catalogue):
    response = token_client(alice).post("/api/runs/", payload(
        trajectory_files=[SimpleUploadedFile("run.log", b"epoch 1 loss 0.3\n")]), format="multipart")
    assert response.status_code == 201, response.content
    run = Run.objects.get()
    assert run.artifacts.filter(name="run.log").exists() and run.n_steps == 0


@pytest.mark.parametrize("where", ["header", "step"])
def test_a_token_count_beyond_64_bits_is_dropped_with_a_warning_naming_the_line(alice, catalogue, where):
    huge = 10**30
    header = {"task": "spaceship-titanic", **({"tokens_in": huge} if where == "header" else {})}
    steps = [step_line({"kind": "llm", "text": "a", "data": {"tokens_in": 10, "tokens_out": 5}}),
             step_line({"kind": "llm", "text": "b", "data": {"tokens_in": huge if where == "step" else 1}})]
    content = json.dumps({"format": "medalboard-trajectory", "version": 1, **header}).encode() + b"\n"
    response = token_client(alice).post("/api/runs/", payload(
        trajectory_files=[SimpleUploadedFile("run.jsonl", content + b"".join(steps))]), format="multipart")
    assert response.status_code == 201, response.content
    run = Run.objects.get()
    line = "line 1" if where == "header" else "line 3"
    assert any(line in w and "tokens_in" in w for w in run.import_warnings), run.import_warnings
    assert run.n_steps == 2 and run.tokens_out == 5
    assert run.tokens_in == (11 if where == "header" else 10)
