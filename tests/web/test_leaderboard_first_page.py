"""A visitor's first page shows the board working: where no experiment has a complete seed on the default
(Lite) split, the board opens on the first split where one has (the demo content `make run` builds), says
so, and keeps MLE-bench's published Lite results below; a split the visitor names is always shown."""

from __future__ import annotations

import re

import pytest
from django.db.models import Count

from leaderboard.models import Agent, Experiment, LanguageModel, Run

pytestmark = pytest.mark.django_db



def test_a_fresh_site_opens_on_the_demo_board(demo_site, client):
    page = client.get("/").content.decode()
    assert 'id="opened-on"' in page and "so the board opens on <strong>Demo" in page
    assert '<option value="demo" selected>' in page
    assert re.search(r">\d+\.\d\d <span class=\"muted small\">± \d+\.\d\d<", page)  # an aggregate, not dashes
    assert 'href="?split=lite">Show the Lite (low) board' in page
    assert "Disarray" in page  # MLE-bench's published Lite results stay on the first page


def test_a_named_split_is_never_replaced(demo_site, client):
    page = client.get("/?split=lite").content.decode()
    assert 'id="opened-on"' not in page and '<option value="lite" selected>' in page


def test_the_default_split_opens_when_it_has_a_complete_seed(demo_site, client, catalogue):
    experiment = Experiment.objects.create(agent=Agent.objects.create(name="lite-complete"),
                                           model=LanguageModel.objects.create(name="m"))
    for competition in catalogue.filter(splits__slug="low"):
        Run.objects.create(experiment=experiment, competition=competition, status="graded", valid_submission=True)
    page = client.get("/").content.decode()
    assert 'id="opened-on"' not in page and "lite-complete" in page


def test_without_any_complete_seed_the_lite_empty_state_stays(client, catalogue):
    page = client.get("/").content.decode()
    assert 'id="opened-on"' not in page and '<option value="lite" selected>' in page


def test_an_invalid_upload_never_makes_its_board_the_first_page(demo_site, client, catalogue):
    """The README's curl example with a file that does not match: one graded, invalid run on a
    competition of a one-competition split; the first page stays on the demo board."""
    titanic = catalogue.get(slug="spaceship-titanic")
    assert titanic.splits.annotate(n=Count("competitions")).filter(n=1).exists()
    experiment = Experiment.objects.create(agent=Agent.objects.create(name="my-agent"),
                                           model=LanguageModel.objects.create(name="m"))
    run = Run.objects.create(experiment=experiment, competition=titanic, status="graded", submission_exists=True,
                             valid_submission=False, grading_error="invalid submission: missing column")
    page = client.get("/").content.decode()
    assert '<option value="demo" selected>' in page and "my-agent" not in page
    Run.objects.filter(pk=run.pk).update(valid_submission=True, score=0.0)  # a real (if poor) result may open
    page = client.get("/?again").content.decode()
    assert "my-agent" in page and '<option value="demo" selected>' not in page


def test_demo_runs_never_carry_a_verified_badge(demo_site, client):
    """Graded here, but against synthetic answers: 'verified' would claim Kaggle's test set."""
    board = client.get("/?split=demo").content.decode()
    runs = client.get("/runs/?split=demo").content.decode()
    for page in (board, runs):
        assert '<span class="badge demo"' in page
        assert '<span class="badge verified">verified</span>' not in page
