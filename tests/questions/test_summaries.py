"""The optional LLM summary of a selection of runs, through the real LLM gateway in front of the
scripted OpenAI-compatible upstream (a fixed reply with citations, fixed usage numbers): the prompt
holds each run's signature and last error steps, redacted; the reply is stored with its tokens and a
cost from the price table; only citations of steps it was shown become links; rate-limited; off, with
a message, when no model is configured."""

from __future__ import annotations

import pytest

from leaderboard.models import CompetitionAnswers, Run
from leaderboard.questions.models import RunSummary
from runner.models import LlmPrice
from tests.gateway_support import REAL_OPENAI_KEY, start_gateway
from tests.llm_upstream import OPENAI_USAGE, ScriptedUpstream
from tests.search.support import run_with

API = "/api/summaries/"
FAKE_KEY = "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX0123"
OOM = "Traceback (most recent call last):\n  File x\ntorch.cuda.OutOfMemoryError: CUDA out of memory. Tried 2 GiB"


@pytest.fixture
def model(db, tmp_path, settings):
    with ScriptedUpstream() as upstream:
        harness = start_gateway(upstream.url, tmp_path)
        settings.TRUST_JUDGE_MODEL = "gpt-4o-summary"
        settings.TRUST_JUDGE_URL = f"{harness.base}/openai/v1"
        settings.TRUST_JUDGE_TOKEN = harness.token
        LlmPrice.objects.create(pattern="gpt-4o*", input_usd_per_mtok="2.5", output_usd_per_mtok="10")
        try:
            yield upstream
        finally:
            harness.gateway.stop()


def failing(*steps, **fields):
    return run_with([("plan", "train a model"), *steps], status=Run.Status.GRADED, **fields)


def test_a_summary_through_the_gateway(model, client, alice, bob):
    first = failing(("error", f"loading with key {FAKE_KEY}\n{OOM}"))
    second = failing(("code", "x = 1"), ("error", OOM))
    hidden = failing(("error", OOM + " hushhush"), owner=alice, private=True)
    other = failing(("error", "KeyError: 'id'"))
    model.reply = (
        f"Both ran out of GPU memory [run {first.pk} step 1], see also [here](/runs/{second.pk}/#step-2). "
        f"Not shown: [run {second.pk} step 0], /runs/{hidden.pk}/#step-1, [run {other.pk} step 1] and "
        f"[a trap](https://evil.example/steal) <script>alert(1)</script>"
    )
    client.force_login(bob)
    response = client.post(API, {"signature": "out of memory"}, content_type="application/json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["runs"] == [first.pk, second.pk]  # not alice's private run, not the KeyError one
    assert body["steps"] == [[second.pk, 2], [first.pk, 1]]
    assert (body["tokens_in"], body["tokens_out"]) == OPENAI_USAGE and body["model"] == "gpt-4o-summary"
    assert body["cost_usd"] == pytest.approx((OPENAI_USAGE[0] * 2.5 + OPENAI_USAGE[1] * 10) / 1e6)
    html = body["reply_html"]
    assert f'<a class="permalink" href="/runs/{first.pk}/#step-1">[run {first.pk} step 1]</a>' in html
    assert f'<a class="permalink" href="/runs/{second.pk}/#step-2">here</a>' in html
    assert html.count("<a ") == 2  # the rest is plain text
    assert f"[run {second.pk} step 0]" in html and f"/runs/{hidden.pk}/#step-1" in html
    assert "evil.example" in html and 'href="https://evil' not in html and "<script>" not in html
    sent = model.requests[-1]["body"]["messages"][1]["content"]
    assert f"[run {first.pk} step 1]" in sent and "out of memory" in sent and "CUDA out of memory" in sent
    assert FAKE_KEY not in sent and "<redacted>" in sent
    assert "hushhush" not in sent and "KeyError" not in sent
    headers = {k.lower(): v for k, v in model.requests[-1]["headers"].items()}
    assert headers["authorization"] == f"Bearer {REAL_OPENAI_KEY}"  # the gateway's key upstream, not the site's token
    page = client.get(f"/questions/summaries/{body['id']}/").content.decode()
    assert f'href="/runs/{first.pk}/#step-1"' in page and "$0.000098" in page
    client.force_login(alice)
    assert client.get(f"/questions/summaries/{body['id']}/").status_code == 404  # someone else's summary
    assert client.get(f"{API}{body['id']}/").status_code == 404


def test_a_search_selection_is_capped_and_never_carries_the_answers(model, client, bob, settings, catalogue, tmp_path):
    answers = tmp_path / "answers.csv"
    rows = [f"{4000 + i},{'True' if i % 2 else 'False'}" for i in range(10)]
    answers.write_text("PassengerId,Transported\n" + "\n".join(rows) + "\n")
    titanic = catalogue.get(slug="spaceship-titanic")
    CompetitionAnswers.objects.update_or_create(competition=titanic, defaults={"answers_path": str(answers)})
    runs = [failing(("error", f"ValueError: bad rows\n{rows[i]}\nread {answers}")) for i in range(2)]
    runs.append(failing(("error", f"ValueError: bad rows\n{rows[3]}"), competition=titanic))
    settings.SUMMARY_MAX_RUNS = 2
    model.reply = f"It printed {rows[3]} from {answers}"
    client.force_login(bob)
    body = client.post(API, {"q": '"bad rows"', "kind": "error"}, content_type="application/json").json()
    assert body["runs"] == [runs[1].pk, runs[2].pk] and "(2 of 3 runs)" in body["selection"]
    sent = model.requests[-1]["body"]["messages"][1]["content"]
    assert rows[3] not in sent and "left out" in sent  # the titanic run's line quoting its answers
    assert rows[3] not in body["reply"] and str(answers) not in body["reply"]


def test_rate_limited_per_user(model, client, alice, bob, settings):
    failing(("error", OOM))
    settings.SUMMARY_PER_HOUR = 1
    client.force_login(bob)
    assert client.post(API, {"signature": "out of memory"}, content_type="application/json").status_code == 201
    refused = client.post(API, {"signature": "out of memory"}, content_type="application/json")
    assert refused.status_code == 429 and "1 summaries an hour" in refused.json()["detail"]
    client.force_login(alice)  # another user's allowance is their own
    assert client.post(API, {"signature": "out of memory"}, content_type="application/json").status_code == 201


def test_bad_selections(model, client, bob):
    client.force_login(bob)
    too_long = " ".join(f"w{i}" for i in range(13))
    for data in ({}, {"q": "x", "signature": "timeout"}, {"question": 999}, {"q": too_long}):
        assert client.post(API, data, content_type="application/json").status_code == 400, data
    empty = client.post(API, {"signature": "timeout"}, content_type="application/json")
    assert empty.status_code == 400 and "nothing to summarise" in empty.json()["detail"]
    client.logout()
    assert client.post(API, {"signature": "timeout"}, content_type="application/json").status_code in (401, 403)
    assert RunSummary.objects.count() == 0 and model.requests == []


def test_off_when_no_model_is_configured(db, client, bob, settings):
    settings.TRUST_JUDGE_MODEL, settings.TRUST_JUDGE_URL = "", ""
    failing(("error", OOM))
    client.force_login(bob)
    refused = client.post(API, {"signature": "out of memory"}, content_type="application/json")
    assert refused.status_code == 409 and "No model is configured" in refused.json()["detail"]
    page = client.get("/questions/summaries/").content.decode()
    assert 'id="summary-off"' in page and 'id="summary-form"' not in page
    assert 'id="summarise-search"' not in client.get("/search/", {"q": "memory"}).content.decode()
    assert client.post("/questions/summaries/", {"signature": "out of memory"}).status_code == 409
    assert RunSummary.objects.count() == 0


def test_the_page_asks_and_shows_the_reply(model, client, bob):
    run = failing(("error", OOM))
    model.reply = f"Out of memory [run {run.pk} step 1]."
    client.force_login(bob)
    search = client.get("/search/", {"q": "memory", "kind": "error"}).content.decode()
    assert 'href="/questions/summaries/?q=memory&amp;kind=error" id="summarise-search"' in search
    form = client.get("/questions/summaries/", {"q": "memory", "kind": "error"}).content.decode()
    assert 'name="q" value="memory"' in form and 'name="kind" value="error"' in form
    asked = client.post("/questions/summaries/", {"signature": "out of memory"})
    assert asked.status_code == 302
    page = client.get(asked["Location"]).content.decode()
    assert f'<a class="permalink" href="/runs/{run.pk}/#step-1">' in page and "11 tokens in, 7 out" in page
