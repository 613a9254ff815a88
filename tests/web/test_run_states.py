"""What a run page, the API and the exports say about a run: its state in words, the demo flag,
human placing and thresholds, downloads and notes; figures rounded once."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.files.base import ContentFile

from leaderboard.models import Artifact, Run
from tests.web.test_leaderboard import experiment, make_runs
from tests.web.test_replay_page import make_run


@pytest.fixture
def titanic(catalogue):
    return catalogue.get(slug="spaceship-titanic")


def test_a_run_without_a_submission_says_so_not_graded_none(client, titanic):
    run = make_run(competition=titanic, status=Run.Status.GRADED, submission_exists=False)
    assert run.state == "no submission" and run.medal_label == "–"
    html = client.get(f"/runs/{run.pk}/").content.decode()
    assert '<dd id="run-state" class="state-graded">no submission</dd>' in html
    assert 'class="medal none"' not in html
    assert client.get(f"/api/runs/{run.pk}/").json()["state"] == "no submission"


@pytest.mark.parametrize(("fields", "state"), [
    ({"status": Run.Status.WAITING}, "waiting for answers"),
    ({"status": Run.Status.FAILED}, "failed"),
    ({"status": Run.Status.GRADED, "submission_exists": True}, "invalid submission"),
    ({"status": Run.Status.GRADED, "submission_exists": True, "valid_submission": True, "score": 0.8,
      "verification": Run.Verification.VERIFIED}, "graded"),
    ({"status": Run.Status.GRADED, "submission_exists": True, "valid_submission": True, "score": 0.8},
     "self-reported score"),  # a log's own claim of a valid file is still a claim
])
def test_every_state_has_its_words(titanic, fields, state):
    assert make_run(competition=titanic, **fields).state == state


def test_demo_runs_are_flagged_on_the_page_in_the_api_and_the_exports(client, catalogue):
    demo_experiment = experiment("DEMO scikit-learn baseline", "none")
    make_runs(22, [demo_experiment], is_demo=True)
    real = experiment("AIDE (DEMO import)")  # a real trajectory: no synthetic answers behind it
    make_runs(22, [real])
    demo_run = Run.objects.filter(is_demo=True).first()
    html = client.get(f"/runs/{demo_run.pk}/").content.decode()
    assert 'id="demo-label"' in html and "demo: graded against synthetic answers" in html
    assert "Verified (graded here)" not in html
    api = client.get(f"/api/runs/{demo_run.pk}/").json()
    assert api["demo"] is True and api["verification"] == "verified"
    rows = {r["agent"]: r for r in client.get("/api/leaderboard/?split=lite").json()["results"]}
    assert rows["DEMO scikit-learn baseline"]["demo"] is True and rows["AIDE (DEMO import)"]["demo"] is False
    exported = list(csv.DictReader(io.StringIO(client.get("/?split=lite&format=csv").content.decode())))
    assert {r["agent"]: r["demo"] for r in exported} == {"DEMO scikit-learn baseline": "True",
                                                         "AIDE (DEMO import)": "False"}
    assert 'id="demo-label"' in client.get(f"/experiments/{demo_experiment.pk}/").content.decode()
    assert 'id="demo-label"' not in client.get(f"/experiments/{real.pk}/").content.decode()


def test_the_page_shows_the_figure_the_api_gives_rounded_once(client, catalogue):
    """1 medal in 22 competitions = 4.5454...%: 4.55 in the API and on the page, never 4.6."""
    e = experiment("once")
    runs = make_runs(22, [e], medal_every=1000)  # run 0 has the only medal
    assert sum(r.any_medal for r in runs) == 1
    row = client.get("/api/leaderboard/?split=lite").json()["results"][0]
    assert row["any_medal_pct"] == round(100 / 22, 2) == 4.55
    html = client.get("/?split=lite").content.decode()
    assert ">4.55 <span" in html and ">4.6" not in html
    assert "1 seed: no error bar" in html


def test_an_experiment_without_a_complete_seed_says_why(client, catalogue):
    e = experiment("partial")
    make_runs(5, [e])
    html = client.get(f"/experiments/{e.pk}/").content.decode()
    assert "No complete seed on" in html and "the most any seed has: 5" in html


def test_the_run_page_has_placing_thresholds_downloads_and_notes(client, titanic):
    beats = 100 * (titanic.n_teams - 119) / titanic.n_teams  # 119 teams better, none tied
    run = make_run(competition=titanic, status=Run.Status.GRADED, verification=Run.Verification.VERIFIED,
                   submission_exists=True, valid_submission=True, score=0.8, human_rank=120, beats_human_pct=beats,
                   notes="Tried <b>three</b> feature sets.", grading_report={"score": 0.8, "valid_submission": True})
    artifact = Artifact(run=run, kind=Artifact.Kind.SUBMISSION, name="submission/submission.csv", size=12)
    artifact.file.save("submission.csv", ContentFile(b"id,target\n1,0\n"), save=True)
    html = client.get(f"/runs/{run.pk}/").content.decode()
    thresholds = titanic.thresholds()
    assert f"rank 120 of {titanic.n_teams}" in html and f"beats {beats:.2f}% of teams" in html
    assert 'id="run-thresholds"' in html and f"{thresholds.gold:g}"[:6] in html
    assert "Tried &lt;b&gt;three&lt;/b&gt; feature sets." in html  # the uploader's notes, escaped
    download = client.get(f"/runs/{run.pk}/files/{artifact.pk}/")
    assert b"".join(download.streaming_content) == b"id,target\n1,0\n"
    assert download["Content-Disposition"].startswith('attachment; filename="submission.csv"')
    report = client.get(f"/runs/{run.pk}/grading-report.json")
    assert json.loads(report.content) == {"score": 0.8, "valid_submission": True}


def test_downloads_of_a_private_run_are_hidden_from_others(client, titanic, alice, bob):
    run = make_run(competition=titanic, owner=alice, is_private=True, grading_report={"score": 1})
    artifact = Artifact(run=run, kind=Artifact.Kind.LOG, name="log.txt")
    artifact.file.save("log.txt", ContentFile(b"secret"), save=True)
    client.force_login(bob)
    assert client.get(f"/runs/{run.pk}/files/{artifact.pk}/").status_code == 404
    assert client.get(f"/runs/{run.pk}/grading-report.json").status_code == 404
    client.force_login(alice)
    assert client.get(f"/runs/{run.pk}/files/{artifact.pk}/").status_code == 200


@pytest.mark.parametrize(("rank", "beats", "words"), [
    (3, 100 * 22 / 24, "rank 3 of 24"),
    (1, 66.67, "tied for rank 1 with 8 of 24 teams"),  # 8 teams share the top score: rank 1, beats 16 of 24
    (25, 0.0, "below all 24 teams"),  # never "rank 25 of 24"
    (24, 0.0, "tied for rank 24 with 1 of 24 teams"),
])
def test_placing_words_say_ties_and_last_place(rank, beats, words):
    from leaderboard.competitions.medals import describe_placing, place

    assert describe_placing(rank, beats, 24) == words
    scores = [0.9] * 8 + [0.01 * k for k in range(16)]  # the placing the grader would store for 0.9
    top = place(0.9, scores, lower_is_better=False)
    assert describe_placing(top.rank, top.beats_pct, 24) == "tied for rank 1 with 8 of 24 teams"


def test_a_run_below_every_team_says_so_on_its_page_and_in_the_runs_list(client, titanic):
    n = titanic.n_teams
    run = make_run(competition=titanic, status=Run.Status.GRADED, verification=Run.Verification.VERIFIED,
                   submission_exists=True, valid_submission=True, score=0.01, human_rank=n + 1, beats_human_pct=0.0)
    html = client.get(f"/runs/{run.pk}/").content.decode()
    assert f"below all {n} teams" in html and f"rank {n + 1} of {n}" not in html
    assert f"below all {n} teams" in client.get("/runs/").content.decode()


def test_a_self_reported_score_is_never_called_invalid_or_shown_as_verified(client, titanic):
    """An imported Inspect log with score 1 and no file: it is a claim, said as one everywhere."""
    run = make_run(competition=titanic, status=Run.Status.GRADED, verification=Run.Verification.SELF_REPORTED,
                   score=1.0, submission_exists=False, valid_submission=False)
    assert run.state == "self-reported score"
    html = client.get(f"/runs/{run.pk}/").content.decode()
    assert '<dd id="run-state" class="state-graded">self-reported score</dd>' in html
    assert "invalid submission" not in html
    outcome = html.split('id="run-medal">')[1].split("</dd>")[0]
    assert 'class="badge self-reported"' in outcome
    assert client.get(f"/api/runs/{run.pk}/").json()["state"] == "self-reported score"
    listed = client.get("/runs/").content.decode().split(f'href="/runs/{run.pk}/"')[1].split("</tr>")[0]
    assert "self-reported" in listed
