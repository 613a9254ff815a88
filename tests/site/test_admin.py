"""Every model has a Django admin whose list and add pages render for staff."""

import pytest
from django.apps import apps
from django.contrib import admin


@pytest.fixture
def superuser_client(client, django_user_model):
    user = django_user_model.objects.create_superuser("root", "root@example.org", "root-password-1")
    client.force_login(user)
    return client


def test_every_model_of_ours_is_registered():
    ours = [m for app in ("leaderboard", "runner") for m in apps.get_app_config(app).get_models()]
    assert ours
    missing = [m.__name__ for m in ours if m not in admin.site._registry]
    assert missing == []


# Derived data nobody adds by hand: its admin lists it, and refuses the add page.
READ_ONLY = {"seedaggregate", "leaderboardversion",  # the leaderboard aggregates and their version
             "competitionversion",  # made only by marking a competition's version as changed
             "codefingerprint", "codeposting", "codehashcount", "codematch",  # the code similarity index
             "steptext",  # the search index
             "runsummary"}  # a model's reply, kept as it came with its cost


@pytest.mark.parametrize("app_label", ["leaderboard", "runner"])
def test_admin_pages_render(superuser_client, catalogue, app_label):
    for model in apps.get_app_config(app_label).get_models():
        name = model._meta.model_name
        assert superuser_client.get(f"/admin/{app_label}/{name}/").status_code == 200, name
        add = superuser_client.get(f"/admin/{app_label}/{name}/add/").status_code
        assert add == (403 if name in READ_ONLY else 200), name
