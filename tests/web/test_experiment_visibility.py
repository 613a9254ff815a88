"""Every page and API that names an experiment applies the visibility rules: an experiment whose runs
are all private to someone else does not exist for you, by name or by id."""

from __future__ import annotations

import pytest

from leaderboard.models import Experiment
from tests.runs.test_submission import submit

SECRET = "secret-agent-x"


@pytest.fixture
def private(alice, catalogue):
    return submit(alice, agent_name=SECRET, is_private=True, self_reported_score=0.8, submission=None)


@pytest.fixture
def public(bob, catalogue):
    return submit(bob, self_reported_score=0.7, submission=None)


def test_compare_experiments_is_a_404_for_a_private_experiment(client, bob, private, public):
    client.force_login(bob)
    url = f"/compare/experiments/?a={private.experiment_id}&b={public.experiment_id}&split=dev"
    response = client.get(url)
    assert response.status_code == 404 and SECRET not in response.content.decode()
    missing = client.get(f"/compare/experiments/?a=999999&b={public.experiment_id}&split=dev")
    assert missing.status_code == 404 and missing.content == response.content  # nothing to tell them apart


def test_the_owner_and_staff_can_compare_it(client, alice, staff, private, public):
    url = f"/compare/experiments/?a={private.experiment_id}&b={public.experiment_id}&split=dev"
    for user in (alice, staff):
        client.force_login(user)
        response = client.get(url)
        assert response.status_code == 200 and SECRET in response.content.decode()


def test_no_page_or_api_names_it_to_others(client, bob, private, public):
    for user in (None, bob):
        if user:
            client.force_login(user)
        for url in ("/", "/?split=dev", "/api/leaderboard/?split=dev", "/api/runs/",
                    f"/api/runs/?experiment={private.experiment_id}", f"/experiments/{public.experiment_id}/",
                    f"/experiments/{private.experiment_id}/", "/?split=dev&format=csv"):
            response = client.get(url)
            assert SECRET not in response.content.decode(), url
    assert client.get(f"/experiments/{private.experiment_id}/").status_code == 404


def test_visible_to(alice, bob, staff, private, public):
    assert set(Experiment.objects.visible_to(bob)) == {public.experiment}
    assert set(Experiment.objects.visible_to(alice)) == {public.experiment, private.experiment}
    assert set(Experiment.objects.visible_to(staff)) == {public.experiment, private.experiment}
