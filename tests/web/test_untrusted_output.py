"""Agent output is untrusted: every string renders inert, long output is cut, binary is a notice."""

from __future__ import annotations

import pytest
from django.urls import reverse

from leaderboard.models import Run
from tests.web.test_replay_page import add_steps, make_run

SCRIPT = "<script>window.__pwned = 1; alert(1)</script>"
IMG = '<img src=x onerror="window.__pwned = 2">'
LINK = '<a href="javascript:window.__pwned=3">click</a>'
IMPORT = '<link rel="import" href="/evil.html"><iframe src="javascript:alert(1)"></iframe>'
PAYLOADS = [SCRIPT, IMG, LINK, IMPORT, '"><svg onload=alert(1)>', "</pre></article><b>escaped</b>"]


def hostile_specs() -> list[dict]:
    """Every payload in every field a card renders, across every kind."""
    blob = " ".join(PAYLOADS)
    return [
        {"kind": "plan", "title": blob, "text": blob, "data": {"stage": blob}},
        {"kind": "code", "title": blob, "text": blob, "data": {"file": blob, "content": blob, "diff": "+" + blob}},
        {"kind": "command", "title": blob, "data": {"command": blob, "stdout": blob, "stderr": blob,
                                                   "exit_code": blob, "duration": blob}},
        {"kind": "score", "title": blob, "score": 1.0, "data": {"metric": blob, "value": blob}},
        {"kind": "llm", "title": blob, "text": blob, "data": {"model": blob, "tokens_in": blob, "cost": blob}},
        {"kind": "error", "title": blob, "text": blob},
        {"kind": "message", "title": blob, "text": blob, "parent_index": 0},
    ]


def hostile_run() -> Run:
    run = make_run(task_name=SCRIPT, grading_error=IMG, is_private=False)
    add_steps(run, hostile_specs())
    return run


def assert_inert(html: str) -> None:
    for payload in PAYLOADS:
        assert payload not in html
    assert "&lt;script&gt;window.__pwned" in html
    assert "<script>window.__pwned" not in html and "onerror=" not in html.replace("onerror=&quot;", "")
    assert 'href="javascript:' not in html


@pytest.fixture
def run(db):
    return hostile_run()


def test_replay_page_escapes_everything(client, run):
    assert_inert(client.get(reverse("run-detail", args=[run.pk])).content.decode())


def test_step_windows_escape_everything(client, run):
    assert_inert(client.get(reverse("run-steps-window", args=[run.pk])).content.decode())


def test_compare_escapes_everything(client, run):
    html = client.get(reverse("compare"), {"runs": f"{run.pk},{run.pk}"}).content.decode()
    assert_inert(html)


def test_api_returns_json_not_html(client, run):
    response = client.get(reverse("run-steps", args=[run.pk]))
    assert response["Content-Type"] == "application/json"
    assert response.json()["results"][0]["text"].startswith(SCRIPT)  # data stays intact, rendering escapes


def test_very_long_output_is_truncated(client, db):
    run = make_run()
    add_steps(run, [{"kind": "command", "data": {"command": "cat big.log", "stdout": "y" * 1_000_000}}])
    html = client.get(reverse("run-detail", args=[run.pk])).content.decode()
    assert len(html) < 100_000
    assert 'class="show-all" data-field="stdout"' in html


@pytest.mark.parametrize("spec", [
    {"kind": "observation", "text": "", "data": {"binary": True}},
    # Control bytes without NUL: PostgreSQL cannot store NUL at all (the importers turn it into a notice).
    {"kind": "observation", "text": "PK\x03\x04\x14\x01\x02\x05\x06\x07\x08"},
])
def test_binary_output_is_a_notice(client, db, spec):
    run = make_run()
    add_steps(run, [spec])
    html = client.get(reverse("run-detail", args=[run.pk])).content.decode()
    assert "Binary output" in html and "\x00" not in html


def test_tool_arguments_are_shown_escaped(client, db):
    run = make_run()
    add_steps(run, [{"kind": "action", "title": "Edit Script (AI)",
                     "data": {"tool": "Edit Script (AI)",
                              "arguments": {"script_name": "train.py", "edit": "<script>window.__pwned=1</script>"}}}])
    html = client.get(reverse("run-detail", args=[run.pk])).content.decode()
    assert "tool <code>Edit Script (AI)</code>" in html
    assert "&quot;script_name&quot;: &quot;train.py&quot;" in html
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in html and "<script>window.__pwned" not in html


def test_import_warnings_are_listed_escaped(client, db):
    run = make_run()
    run.import_warnings = ["line 7: not JSON: <script>window.__pwned=1</script>", "line 9: unknown kind 'x'"]
    run.save()
    html = client.get(reverse("run-detail", args=[run.pk])).content.decode()
    assert "2 import warnings" in html and "line 9: unknown kind" in html
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in html and "<script>window.__pwned" not in html
