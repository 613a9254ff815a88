"""/api/questions/: save, list, edit and delete questions with personas (owner, another user, a
visitor); a search question is checked as the search checks it; /runs/ lists what one matches."""

from __future__ import annotations

from leaderboard.models import Run
from leaderboard.questions.models import SavedQuestion
from tests.search.support import run_with

API = "/api/questions/"


def test_save_list_edit_delete(db, client, alice, bob):
    client.force_login(alice)
    made = client.post(
        API,
        {
            "name": "reads test labels",
            "kind": "search",
            "query": '"test_labels"',
            "filters": {"kind": "code", "medal": "any"},
            "is_public": True,
        },
        content_type="application/json",
    )
    assert made.status_code == 201, made.content
    body = made.json()
    assert body["owner"] == "alice" and body["filters"] == {"kind": "code", "medal": "any"} and body["signature"] == ""
    private = client.post(
        API, {"name": "mine", "kind": "failure", "signature": "out of memory"}, content_type="application/json"
    ).json()
    assert [q["name"] for q in client.get(API).json()["results"]] == ["reads test labels", "mine"]
    client.force_login(bob)
    assert [q["name"] for q in client.get(API).json()["results"]] == ["reads test labels"]  # not alice's private one
    assert client.get(f"{API}{private['id']}/").status_code == 404
    assert client.patch(f"{API}{body['id']}/", {"name": "x"}, content_type="application/json").status_code == 403
    assert client.delete(f"{API}{body['id']}/").status_code == 403
    client.logout()
    assert client.post(
        API, {"name": "n", "kind": "failure", "signature": "timeout"}, content_type="application/json"
    ).status_code in (401, 403)
    assert [q["name"] for q in client.get(API).json()["results"]] == ["reads test labels"]
    client.force_login(alice)
    edited = client.patch(
        f"{API}{private['id']}/", {"kind": "search", "query": "cuda"}, content_type="application/json"
    )
    assert edited.status_code == 200 and edited.json()["signature"] == "" and edited.json()["query"] == "cuda"
    assert client.delete(f"{API}{body['id']}/").status_code == 204
    assert list(SavedQuestion.objects.values_list("name", flat=True)) == ["mine"]


def test_bad_questions_are_refused_with_the_reason(db, client, alice):
    client.force_login(alice)
    SavedQuestion.objects.create(owner=alice, name="taken", kind="failure", signature="timeout")
    cases = [
        ({"name": "taken", "kind": "failure", "signature": "x"}, "name"),
        ({"name": "a", "kind": "search", "query": ""}, "query"),
        ({"name": "a", "kind": "search", "query": " ".join(f"w{i}" for i in range(13))}, "query"),
        ({"name": "a", "kind": "search", "query": "x", "filters": {"medal": "platinum"}}, "filters"),
        ({"name": "a", "kind": "search", "query": "x", "filters": {"owner": "bob"}}, "filters"),
        ({"name": "a", "kind": "failure", "signature": "  "}, "signature"),
        ({"name": "a", "kind": "poll"}, "kind"),
    ]
    for data, field in cases:
        response = client.post(API, data, content_type="application/json")
        assert response.status_code == 400 and field in response.json(), (data, response.content)


def test_runs_lists_the_matches_the_caller_may_see(db, client, alice, bob):
    graded = {"status": Run.Status.GRADED}
    public = run_with([("plan", "p"), ("error", "CUDA out of memory")], owner=bob, **graded)
    hidden = run_with([("error", "CUDA out of memory")], owner=alice, private=True, **graded)
    question = SavedQuestion.objects.create(
        owner=alice, name="oom", kind="search", query='"out of memory"', is_public=True
    )
    url = f"{API}{question.pk}/runs/"
    client.force_login(bob)
    body = client.get(url, {"experiment": public.experiment_id}).json()
    assert body["count"] == 1 and body["runs"] == [{"run": public.pk, "url": f"/runs/{public.pk}/#step-1"}]
    client.force_login(alice)
    assert client.get(url, {"experiment": public.experiment_id}).json()["count"] == 2
    assert hidden.experiment_id == public.experiment_id
    assert client.get(url).status_code == 400 and client.get(url, {"experiment": 1, "split": "nope"}).status_code == 400
