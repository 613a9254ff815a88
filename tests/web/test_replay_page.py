"""The replay page: header, one card per step kind, windows and permalinks, visibility, cost."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from leaderboard.models import Agent, Experiment, LanguageModel, Run
from leaderboard.trajectories.importers.base import StepData
from leaderboard.trajectories.store import write_steps
from leaderboard.web.replay import PAGE_SIZE, TEXT_LIMIT


def make_run(*, owner=None, is_private: bool = False, competition=None, **fields) -> Run:
    agent, _ = Agent.objects.get_or_create(name="AIDE", version="0.1")
    model, _ = LanguageModel.objects.get_or_create(name="gpt-4o")
    experiment, _ = Experiment.objects.get_or_create(agent=agent, model=model, hardware="1x A10 24GB")
    return Run.objects.create(
        experiment=experiment, owner=owner, is_private=is_private, competition=competition, **fields
    )


def add_steps(run: Run, specs: list[dict]) -> list[StepData]:
    """Steps from dicts; index defaults to the position and t to index seconds."""
    steps = [StepData(**{"index": i, "t": float(i), "kind": "message", **spec}) for i, spec in enumerate(specs)]
    write_steps(run, steps)
    run.n_steps = len(steps)
    run.save(update_fields=["n_steps"])
    return steps


def add_messages(run: Run, n: int) -> None:
    add_steps(run, [{"title": "message", "text": "text of a step"} for _ in range(n)])


KIND_SPECS = [
    {"kind": "plan", "title": "Draft", "text": "Try a gradient boosted model.", "data": {"stage": "draft"}},
    {"kind": "code", "title": "train.py", "data": {
        "file": "train.py", "content": "import pandas as pd\nprint('hi')\n",
        "diff": "@@ -1 +1,2 @@\n-print(1)\n+import pandas as pd\n+print('hi')"}},
    {"kind": "command", "title": "run", "data": {
        "command": "python train.py", "stdout": "epoch 1 loss 0.5", "stderr": "Warning: slow",
        "exit_code": 1, "duration": 3.5}},
    {"kind": "score", "score": 0.81, "data": {"metric": "accuracy", "value": 0.81, "maximize": True}},
    {"kind": "llm", "text": "Here is my plan",
     "data": {"model": "gpt-4o", "tokens_in": 120, "tokens_out": 40, "cost": 0.01}},
    {"kind": "error", "text": "Traceback: ZeroDivisionError"},
    {"kind": "observation", "text": "Files: train.csv test.csv"},
]


@pytest.fixture
def run(db):
    return make_run(task_name="spaceship-titanic")


def get_page(client, run: Run):
    return client.get(reverse("run-detail", args=[run.pk]))


def test_header_shows_run_facts(client, catalogue):
    run = make_run(
        competition=catalogue.get(slug="spaceship-titanic"), task_name="spaceship-titanic", seed=3,
        score=0.79123, silver_medal=True, verification=Run.Verification.VERIFIED, duration_s=3600,
        tokens_in=1000, tokens_out=200, cost_usd=1.5, submission_exists=True, valid_submission=True,
        origin=Run.Origin.JOB,
    )
    html = get_page(client, run).content.decode()
    assert reverse("competition-detail", args=["spaceship-titanic"]) in html
    for text in ("AIDE 0.1", "gpt-4o", "1x A10 24GB", "0.79123", 'class="medal silver"', "valid submission",
                 "Verified (graded here)", "1 h", "1000 in / 200 out", "$1.50", "Run on a Medalboard runner"):
        assert text in html, text


def test_header_shows_grading_error_and_invalid_submission(client, run, catalogue):
    run.grading_error, run.submission_exists = "submission.csv has 3 columns, expected 2", True
    run.status, run.competition = Run.Status.GRADED, catalogue.get(slug="spaceship-titanic")
    run.save()
    html = get_page(client, run).content.decode()
    assert '<span class="state state-graded">invalid submission</span>' in html and "expected 2" in html
    assert 'class="medal none"' not in html  # no medal where no valid score exists
    assert "Self-reported" in html


def test_one_card_per_kind(client, run):
    add_steps(run, KIND_SPECS)
    html = get_page(client, run).content.decode()
    assert html.count('<article class="step kind-') == len(KIND_SPECS)
    assert '<pre class="code" data-lang="python" data-field="content">' in html
    assert '<span class="add">+import pandas as pd</span>' in html and '<span class="hunk">' in html
    assert "$ python train.py" in html and 'class="stderr"' in html and 'class="exit failed">1<' in html
    assert "accuracy" in html and "higher is better" in html
    assert "120 in / 40 out tokens" in html
    assert "ZeroDivisionError" in html and "Try a gradient boosted model." in html


def test_every_card_has_a_permalink(client, run):
    add_messages(run, 5)
    html = get_page(client, run).content.decode()
    url = reverse("run-detail", args=[run.pk])
    for i in range(5):
        assert f'id="step-{i}"' in html and f'href="{url}#step-{i}"' in html


def test_first_view_renders_only_the_first_window(client, run):
    add_messages(run, PAGE_SIZE + 50)
    html = get_page(client, run).content.decode()
    assert f'id="step-{PAGE_SIZE - 1}"' in html and f'id="step-{PAGE_SIZE}"' not in html
    assert 'id="load-next">' in html  # not hidden: there is more


def test_window_around_a_permalinked_step(client, run):
    add_messages(run, 3 * PAGE_SIZE)
    target = 3 * PAGE_SIZE - 50
    response = client.get(reverse("run-steps-window", args=[run.pk]), {"around": target})
    html = response.content.decode()
    assert response["X-Window-Has-Prev"] == "1" and response["X-Window-Has-Next"] == "0"
    assert f'id="step-{target}"' in html and f'id="step-{target - PAGE_SIZE // 10}"' in html
    assert f'id="step-{target - PAGE_SIZE // 10 - 1}"' not in html


def test_windows_before_and_after_a_step(client, run):
    add_messages(run, 3 * PAGE_SIZE)
    url = reverse("run-steps-window", args=[run.pk])
    after = client.get(url, {"after": 99})
    assert after.content.decode().count("<article") == PAGE_SIZE and 'id="step-100"' in after.content.decode()
    assert after["X-Window-Has-Next"] == "1" and after["X-Window-Has-Prev"] == "1"
    before = client.get(url, {"before": 50})
    assert before.content.decode().count("<article") == 50 and before["X-Window-Has-Prev"] == "0"
    assert client.get(url, {"after": "x"}).status_code == 404


def test_window_filters_by_kind(client, run):
    add_steps(run, KIND_SPECS * 3)
    response = client.get(reverse("run-steps-window", args=[run.pk]), {"type": "code,score"})
    html = response.content.decode()
    assert html.count('<article class="step kind-code"') == 3 and html.count('<article class="step kind-score"') == 3
    assert "kind-plan" not in html


def test_long_text_is_truncated_with_show_all(client, run):
    add_steps(run, [{"kind": "observation", "text": "x" * (TEXT_LIMIT * 3)}])
    html = get_page(client, run).content.decode()
    assert "x" * TEXT_LIMIT in html and "x" * (TEXT_LIMIT + 1) not in html
    assert 'class="show-all" data-field="text"' in html


@pytest.mark.parametrize(("persona", "status"), [("alice", 200), ("staff", 200), ("bob", 404), (None, 404)])
def test_private_run_is_visible_to_owner_and_staff_only(client, alice, bob, staff, persona, status):
    run = make_run(owner=alice, is_private=True)
    add_messages(run, 2)
    if persona:
        client.force_login({"alice": alice, "bob": bob, "staff": staff}[persona])
    assert get_page(client, run).status_code == status
    assert client.get(reverse("run-steps-window", args=[run.pk])).status_code == status


def test_unknown_run_is_404(client, db):
    assert client.get(reverse("run-detail", args=[999999])).status_code == 404


def _measure(client, n: int) -> tuple[int, int]:
    run = make_run()
    add_messages(run, n)
    with CaptureQueriesContext(connection) as queries:
        response = get_page(client, run)
    return len(response.content), len(queries)


def test_html_size_and_queries_do_not_grow_with_length(client, db):
    assert PAGE_SIZE <= 100  # so a 100-step run already fills the first window
    small_bytes, small_queries = _measure(client, 100)
    large_bytes, large_queries = _measure(client, 10_000)
    assert large_queries == small_queries
    assert abs(large_bytes - small_bytes) < 300  # step counts' digits and the load-more button differ


def test_query_count_is_pinned(client, run, django_assert_num_queries):
    add_steps(run, KIND_SPECS * 40)
    # run + kind counts + one window of steps + graded snapshots + files + the rule checks' findings +
    # closest matches by code
    with django_assert_num_queries(7):
        get_page(client, run)


@pytest.mark.parametrize("duration, shown", [(2.932382345199585, "· 3 s"), (754.2, "· 12 min 34 s"),
                                             ("soon", "· –")])
def test_a_command_card_writes_its_duration_for_people(client, run, duration, shown):
    add_steps(run, [{"kind": "command", "data": {"command": "python train.py", "exit_code": 0, "duration": duration}}])
    html = get_page(client, run).content.decode()
    assert f"exit code <span class=\"exit\">0</span> {shown}</p>" in html
    assert "2.932382345199585" not in html
