"""The saved-question pages: save one from the form (prefilled from a search), edit and delete only
your own; the experiment comparison shows one column per picked question with each experiment's
count, linking to the matching runs, and never counts another user's private run."""

from __future__ import annotations

from leaderboard.analysis import stats
from leaderboard.models import Run
from leaderboard.questions.models import SavedQuestion
from tests.search.support import run_with


def test_save_edit_delete_from_the_pages(db, client, alice, bob):
    client.force_login(alice)
    prefilled = client.get("/questions/", {"q": '"test_labels"', "kind": "code"}).content.decode()
    assert 'value="&quot;test_labels&quot;"' in prefilled and '<option value="code" selected>' in prefilled
    saved = client.post(
        "/questions/",
        {
            "name": "reads labels",
            "question_kind": "search",
            "query": "test_labels",
            "f_kind": "code",
            "is_public": "on",
        },
    )
    assert saved.status_code == 302
    question = SavedQuestion.objects.get(name="reads labels")
    assert question.owner == alice and question.filters == {"kind": "code"} and question.is_public
    refused = client.post("/questions/", {"name": "oom", "question_kind": "failure", "signature": ""})
    assert refused.status_code == 400 and "signature" in refused.content.decode()
    client.force_login(bob)
    assert "reads labels" in client.get("/questions/").content.decode()
    assert client.get(f"/questions/{question.pk}/edit/").status_code == 404
    assert client.post(f"/questions/{question.pk}/delete/").status_code == 404
    client.force_login(alice)
    edited = client.post(
        f"/questions/{question.pk}/edit/", {"name": "oom", "question_kind": "failure", "signature": "out of memory"}
    )
    assert edited.status_code == 302
    question.refresh_from_db()
    assert (question.kind, question.signature, question.query, question.is_public) == (
        "failure",
        "out of memory",
        "",
        False,
    )
    assert client.post(f"/questions/{question.pk}/delete/").status_code == 302
    assert not SavedQuestion.objects.exists()


def test_the_comparison_counts_per_experiment_and_links_to_the_runs(db, client, catalogue, alice, bob):
    lite = list(stats.resolve_split("lite").competitions.order_by("slug"))
    graded = {"status": Run.Status.GRADED}
    oom = ("error", "torch.cuda.OutOfMemoryError: CUDA out of memory")
    valid = {"score": 0.5, "submission_exists": True, "valid_submission": True}
    a = [run_with([("plan", "x"), oom], agent="a", competition=lite[i], **graded) for i in range(2)]
    a.append(run_with([("plan", "x"), oom], agent="a", competition=lite[2], **graded, **valid))  # got past it
    a.append(run_with([("plan", "fine")], agent="a", competition=lite[3], **graded, **valid))
    b = [run_with([oom], agent="b", competition=lite[0], **graded)]
    hidden = run_with([oom], agent="b", competition=lite[1], owner=alice, private=True, **graded)
    elsewhere = run_with([oom], agent="b", competition=None, **graded)  # not on the split
    search = SavedQuestion.objects.create(
        owner=alice, name="cuda oom", kind="search", query='"CUDA out of memory"', is_public=True
    )
    failure = SavedQuestion.objects.create(
        owner=alice, name="oom signature", kind="failure", signature="out of memory", is_public=True
    )
    mine = SavedQuestion.objects.create(owner=alice, name="alice only", kind="search", query="fine")
    ea, eb = a[0].experiment_id, b[0].experiment_id
    url = (
        f"/compare/experiments/?a={ea}&b={eb}&split=lite&question={search.pk}&question={failure.pk}&question={mine.pk}"
    )
    client.force_login(bob)
    page = client.get(url).content.decode()
    table = page[page.index('id="question-counts"') :]
    table = table[: table.index("</table>")]
    assert "alice only" not in page  # another user's private question is neither offered nor counted
    runs_url = f"/questions/{search.pk}/runs/?experiment={eb}&amp;split=low"
    assert f'<a href="{runs_url}">1</a>' in table  # bob sees b's public run, not alice's private one
    assert f'<a href="/questions/{search.pk}/runs/?experiment={ea}&amp;split=low">3</a>' in table
    assert (
        f'<a href="/questions/{failure.pk}/runs/?experiment={ea}&amp;split=low">2</a>' in table
    )  # one got past its OOM
    listing = client.get(f"/questions/{search.pk}/runs/", {"experiment": eb, "split": "low"}).content.decode()
    assert f'href="/runs/{b[0].pk}/#step-0"' in listing
    assert f"/runs/{hidden.pk}/" not in listing and f"/runs/{elsewhere.pk}/" not in listing
    client.force_login(alice)
    table = client.get(url).content.decode()
    assert f'<a href="/questions/{search.pk}/runs/?experiment={eb}&amp;split=low">2</a>' in table
    assert f'<a href="/questions/{mine.pk}/runs/?experiment={ea}&amp;split=low">1</a>' in table


def test_the_comparisons_queries_do_not_grow_with_its_runs(db, client, catalogue, alice):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    lite = list(stats.resolve_split("lite").competitions.order_by("slug"))
    oom = ("error", "torch.cuda.OutOfMemoryError: CUDA out of memory")
    questions = [
        SavedQuestion.objects.create(owner=alice, name="s", kind="search", query="memory"),
        SavedQuestion.objects.create(owner=alice, name="f", kind="failure", signature="out of memory"),
    ]
    client.force_login(alice)
    counted = []
    for n in (2, 6):
        for i in range(n):
            for agent in ("a", "b"):
                run_with([oom], agent=agent, competition=lite[i], status=Run.Status.GRADED)
        ea, eb = (Run.objects.filter(experiment__agent__name=a).first().experiment_id for a in ("a", "b"))
        picked = "".join(f"&question={q.pk}" for q in questions)
        with CaptureQueriesContext(connection) as queries:
            page = client.get(f"/compare/experiments/?a={ea}&b={eb}&split=lite{picked}").content.decode()
        assert f'?experiment={ea}&amp;split=low">{Run.objects.filter(experiment_id=ea).count()}</a>' in page
        counted.append(len(queries))
    assert counted[0] == counted[1]
