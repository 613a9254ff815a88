"""What a reader sees in Chromium: honest run states, demo labels,
figures rounded once, empty tables that say why, and a run page with everything the API has."""

from __future__ import annotations

import pytest
from django.core.files.base import ContentFile

from leaderboard.models import Artifact, Run
from tests.web.test_leaderboard import experiment, make_runs
from tests.web.test_replay_page import make_run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def text(page, selector: str) -> str:
    return page.locator(selector).inner_text()


def test_item1_a_run_waiting_for_answers_is_not_an_invalid_submission(page, catalogue):
    run = make_run(competition=catalogue.get(slug="spaceship-titanic"), status=Run.Status.WAITING,
                   submission_exists=True, grading_error="waiting for answers: this site has no answers registered")
    page.goto(f"{page.base_url}/runs/{run.pk}/")
    assert text(page, "#run-state") == "waiting for answers"
    assert "invalid" not in text(page, ".run-header")
    page.goto(f"{page.base_url}/competitions/?q=spaceship")
    row = page.locator("tr", has=page.locator("a[href='/competitions/spaceship-titanic/']"))
    assert row.locator("td.grader").inner_text() == "yes"
    assert row.locator("td.answers").inner_text() == "no: runs wait"
    page.goto(f"{page.base_url}/competitions/spaceship-titanic/")
    assert "Grader: yes · Answers registered: no" in text(page, "#grading-state")


def test_item2_no_submission_is_said_not_graded_with_a_grey_none(page, catalogue):
    run = make_run(competition=catalogue.get(slug="spaceship-titanic"), status=Run.Status.GRADED)
    page.goto(f"{page.base_url}/runs/{run.pk}/")
    assert text(page, "#run-state") == "no submission"
    assert page.locator(".run-header .medal.none").count() == 0


def test_item3_demo_runs_are_labelled_and_real_imports_are_not(page, catalogue):
    demo = experiment("DEMO scikit-learn", "none")
    make_runs(22, [demo], is_demo=True)
    real = make_run(task_name="house-prices", status=Run.Status.GRADED, notes="DEMO: a real public trajectory")
    page.goto(f"{page.base_url}/runs/{Run.objects.filter(is_demo=True).first().pk}/")
    assert page.locator("#demo-label").is_visible()
    assert "synthetic answers" in text(page, ".run-header .badge.demo")  # never a verified badge
    page.goto(f"{page.base_url}/experiments/{real.experiment_id}/")
    assert page.locator("#demo-label").count() == 0


def test_item4_empty_tables_say_why_and_one_seed_says_no_error_bar(page, catalogue):
    partial = experiment("partial")
    make_runs(5, [partial])
    page.goto(f"{page.base_url}/experiments/{partial.pk}/")
    assert "No complete seed on Lite" in page.locator("td.why-empty").first.inner_text()
    single = experiment("single")
    make_runs(22, [single])
    page.goto(f"{page.base_url}/?split=lite")
    assert "1 seed: no error bar" in text(page, "#leaderboard tbody")


def test_item5_the_page_rounds_once_as_the_api_does(page, catalogue):
    make_runs(22, [experiment("once")], medal_every=1000)  # 1 of 22 = 4.5454...%
    page.goto(f"{page.base_url}/?split=lite")
    cell = page.locator("#leaderboard tbody tr td.num").nth(1).inner_text()
    assert cell.startswith("4.55")


def test_item9_the_run_page_shows_placing_downloads_and_notes(page, catalogue):
    titanic = catalogue.get(slug="spaceship-titanic")
    beats = 100 * (titanic.n_teams - 119) / titanic.n_teams  # 119 teams better, none tied
    run = make_run(competition=titanic, status=Run.Status.GRADED, verification=Run.Verification.VERIFIED,
                   submission_exists=True, valid_submission=True, score=0.8, human_rank=120, beats_human_pct=beats,
                   notes="<script>alert(1)</script> tried three models", grading_report={"score": 0.8})
    artifact = Artifact(run=run, kind=Artifact.Kind.SUBMISSION, name="submission.csv", size=14)
    artifact.file.save("submission.csv", ContentFile(b"id,target\n1,0\n"), save=True)
    page.goto(f"{page.base_url}/runs/{run.pk}/")
    assert text(page, "#human-placing").startswith("rank 120 of")
    assert "gold" in text(page, "#run-thresholds") and "median" in text(page, "#run-thresholds")
    assert "<script>alert(1)</script> tried three models" in text(page, "#run-notes")
    links = page.locator("#run-downloads a")
    assert links.count() == 2 and "grading report" in links.nth(1).inner_text()
    with page.expect_download() as download:
        links.nth(0).click()
    assert download.value.suggested_filename == "submission.csv"
    assert not page.js_errors
