"""Where a run's closest matches show: `similar_runs` on GET /api/runs/<id>/, the run page, the
side-by-side page; a private run the reader cannot see is never named. And the two commands."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from leaderboard.models import Competition
from leaderboard.trust import similarity
from leaderboard.trust.models import Finding
from leaderboard.trust.similarity.models import CodeMatch, ReferenceCode
from tests.trust.similarity_support import COPY, INDEPENDENT, ORIGINAL, add_code, make_run


@pytest.fixture
def titanic(db):
    return Competition.objects.get(slug="spaceship-titanic")


@pytest.fixture
def pair(titanic, alice):
    """A public original and alice's private copy of it, indexed."""
    original = make_run(titanic, agent="first")
    copy = make_run(titanic, agent="second", owner=alice, is_private=True)
    add_code(original, "code/solution.py", ORIGINAL)
    add_code(copy, "code/main.py", COPY)
    similarity.index_run(original)
    similarity.index_run(copy)
    return original, copy


def detail(client, run_id: int) -> dict:
    response = client.get(f"/api/runs/{run_id}/")
    assert response.status_code == 200
    return response.json()


def test_the_api_names_the_closest_runs(pair, alice):
    original, copy = pair
    client = _as(alice)
    [match] = detail(client, copy.pk)["similar_runs"]
    assert match["run"] == original.pk and match["similarity"] > 0.9
    assert match["compare_url"] == f"/runs/{copy.pk}/similar/{original.pk}/"
    assert [m["run"] for m in detail(client, original.pk)["similar_runs"]] == [copy.pk]  # from both sides


def test_a_private_run_is_never_named_to_who_cannot_see_it(pair, bob):
    original, copy = pair
    for client in (APIClient(), _as(bob)):
        body = detail(client, original.pk)
        assert body["similar_runs"] == []
        page = client.get(f"/runs/{original.pk}/").content.decode()
        assert 'id="similar-code"' not in page
        assert client.get(f"/runs/{original.pk}/similar/{copy.pk}/").status_code == 404


def test_staff_see_every_match(pair, staff):
    original, copy = pair
    assert [m["run"] for m in detail(_as(staff), original.pk)["similar_runs"]] == [copy.pk]


def _as(user) -> APIClient:
    client = APIClient()
    client.force_login(user)  # a session: the API and the pages both read it
    return client


def test_the_run_detail_costs_one_query_for_its_matches(titanic, alice, django_assert_num_queries):
    """However many matches: the run, its findings, then one query for its pairs with both sides' runs."""
    runs = [make_run(titanic, agent=f"agent{i}") for i in range(6)]
    for run in runs:
        add_code(run, "code/a.py", ORIGINAL if run.pk % 2 else COPY)
        similarity.index_run(run)
    lonely = make_run(titanic)
    client = APIClient()
    client.force_authenticate(alice)  # no session to read: the queries counted are the view's own
    with django_assert_num_queries(3):  # the run, its findings, its matches
        body = detail(client, runs[0].pk)
    assert len(body["similar_runs"]) == 5
    with django_assert_num_queries(3):
        assert detail(client, lonely.pk)["similar_runs"] == []


def test_the_run_page_lists_matches_and_the_side_by_side_page_shows_the_regions(pair, alice):
    original, copy = pair
    client = _as(alice)
    page = client.get(f"/runs/{copy.pk}/").content.decode()
    assert 'id="similar-code"' in page and f"/runs/{copy.pk}/similar/{original.pk}/" in page
    diff = client.get(f"/runs/{copy.pk}/similar/{original.pk}/")
    assert diff.status_code == 200
    text = diff.content.decode()
    assert "similar-region" in text and "engineer(frame)" in text and "add_features(df)" in text
    assert "frame[money].fillna(0)" in text and "df[spend].fillna(0)" in text


def test_the_side_by_side_page_escapes_code(titanic, alice):
    a, b = make_run(titanic), make_run(titanic)
    hostile = ORIGINAL.replace('print("validation accuracy"', 'print("<script>alert(1)</script>"')
    add_code(a, "code/a.py", hostile)
    add_code(b, "code/b.py", hostile)
    text = _as(alice).get(f"/runs/{b.pk}/similar/{a.pk}/").content.decode()
    assert "<script>alert(1)</script>" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text


def test_independent_code_has_no_regions_worth_showing(titanic, alice):
    a, b = make_run(titanic), make_run(titanic)
    add_code(a, "code/a.py", ORIGINAL)
    add_code(b, "code/b.py", INDEPENDENT)
    page = _as(alice).get(f"/runs/{b.pk}/similar/{a.pk}/").content.decode()
    assert page.count("similar-region") <= 3


def test_reference_code_in_the_api_and_its_page(titanic, alice, tmp_path):
    run = make_run(titanic)
    add_code(run, "code/a.py", COPY)
    similarity.index_run(run)
    (tmp_path / "top.py").write_text(ORIGINAL)
    call_command("add_reference_code", "spaceship-titanic", str(tmp_path / "top.py"), "--label", "Kaggle top notebook")
    reference = ReferenceCode.objects.get()
    [match] = detail(_as(alice), run.pk)["similar_references"]
    assert match["reference"] == reference.pk and match["label"] == "Kaggle top notebook" and match["similarity"] > 0.9
    assert Finding.objects.get(run=run, check_name=similarity.CHECK_NAME).evidence["reference"] == reference.pk
    page = _as(alice).get(match["compare_url"])
    assert page.status_code == 200 and "similar-region" in page.content.decode()
    other = make_run(Competition.objects.exclude(pk=titanic.pk).first())
    assert _as(alice).get(f"/runs/{other.pk}/similar/reference/{reference.pk}/").status_code == 404


def test_add_reference_code_refuses_bad_input(titanic, tmp_path):
    from django.core.management.base import CommandError

    (tmp_path / "blob.py").write_bytes(b"\x00\x01")
    for args in (["nope", str(tmp_path / "blob.py")], ["spaceship-titanic", str(tmp_path / "missing.py")],
                 ["spaceship-titanic", str(tmp_path / "blob.py")]):
        with pytest.raises(CommandError):
            call_command("add_reference_code", *args, "--label", "x")


def test_index_code_indexes_every_run_oldest_first(titanic):
    original, copy = make_run(titanic), make_run(titanic)
    add_code(original, "code/a.py", ORIGINAL)
    add_code(copy, "code/b.py", COPY)
    call_command("index_code", "--competition", "spaceship-titanic")
    assert CodeMatch.objects.filter(run=copy, other=original).exists()
    assert Finding.objects.filter(run=copy, check_name=similarity.CHECK_NAME).exists()
    call_command("index_code")  # again: the same pairs, not twice
    assert CodeMatch.objects.count() == 1 and Finding.objects.filter(check_name=similarity.CHECK_NAME).count() == 1


def test_a_pair_kept_from_both_sides_shows_once(pair, alice):
    """Two runs indexed at the same moment can each keep the pair."""
    original, copy = pair
    kept = CodeMatch.objects.get(run=copy, other=original)
    CodeMatch.objects.create(run=original, other=copy, shared=kept.shared, similarity=kept.similarity)
    assert [m["run"] for m in detail(_as(alice), copy.pk)["similar_runs"]] == [original.pk]
