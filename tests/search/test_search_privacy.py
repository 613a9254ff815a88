"""Search never shows a private run to anyone but its owner and staff, on the page, the API, or
through a filter or a cursor."""

from __future__ import annotations

from django.urls import reverse

from tests.search.support import all_hits, run_with


def test_private_runs_stay_private(db, client, alice, bob, staff):
    public = run_with([("error", "secret-sauce public")], owner=bob)
    private = run_with([("error", "secret-sauce hushhush")], owner=alice, private=True)
    assert all_hits(None, "secret-sauce") == [(public.pk, 0)]
    assert all_hits(bob, "secret-sauce") == [(public.pk, 0)]
    assert all_hits(alice, "secret-sauce") == [(private.pk, 0), (public.pk, 0)]
    assert all_hits(staff, "secret-sauce") == [(private.pk, 0), (public.pk, 0)]
    # filters and a cursor that points into the private run change nothing
    assert all_hits(bob, "hushhush", experiment=private.experiment_id) == []
    client.force_login(bob)
    for url in (reverse("search"), reverse("api-search")):
        body = client.get(url, {"q": "secret-sauce", "cursor": f"{private.pk + 1}.0"}).content.decode()
        assert "secret-sauce public" in body or "secret-sauce</mark> public" in body
        assert "hushhush" not in body
        assert f"/runs/{private.pk}/" not in body
