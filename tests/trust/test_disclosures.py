"""Disclosures on the board: each disclosure filter keeps exactly the rows it should, the API and
CSV carry the fields ("not disclosed" where nobody said), uploads state them through every door,
and jobs record hardware and internet themselves."""

from __future__ import annotations

import csv
import io
import itertools

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from leaderboard.analysis import ranking, stats
from leaderboard.analysis.aggregates.models import LeaderboardVersion
from leaderboard.models import Agent, Experiment, LanguageModel, Run
from leaderboard.runs.artifacts import UploadError
from tests.analysis import test_leaderboard_aggregates as aggregates
from tests.api.test_runs import payload, token_client
from tests.runner.test_jobs_create import make, public_data, runner  # noqa: F401 - public_data is a fixture
from tests.runs.test_submission import submit
from tests.trust.test_competition_versions import graded

tiny = aggregates.tiny  # a fixture: a 3-competition split of Lite
API = "/api/leaderboard/?split=tiny"
# (agent, internet, test signal, known leakage): every value each filter tells apart
CONFIGURATIONS = [
    ("open-web", "yes", "no", False),
    ("offline", "no", "no", False),
    ("silent", "", "", False),
    ("peeked", "no", "yes", True),
    ("leaky-web", "yes", "", True),
]
FILTER_VALUES = {"internet": ["yes", "no", "unknown"], "test_signal": ["yes", "no", "unknown"],
                 "leakage": ["yes", "no"]}


@pytest.fixture(autouse=True)
def version_row(db):
    LeaderboardVersion.objects.get_or_create(pk=1)


@pytest.fixture
def board(tiny):
    """One experiment per configuration, each with one complete seed on the tiny split."""
    made = {}
    for name, internet, test_signal, leakage in CONFIGURATIONS:
        exp = Experiment.objects.create(
            agent=Agent.objects.create(name=name), model=LanguageModel.objects.get_or_create(name="gpt-4o")[0],
            internet=internet, test_signal=test_signal, known_leakage=leakage,
            leakage_note="saw the answers" if leakage else "", gpu_count=None)
        for competition in tiny.competitions.all():
            graded(exp, competition, 0, 1)
        made[name] = exp
    return made


def expected(query: dict[str, str]) -> set[str]:
    """The agents a filter keeps, from the configurations themselves."""
    stored = {"yes": "yes", "no": "no", "unknown": ""}
    keep = set()
    for name, internet, test_signal, leakage in CONFIGURATIONS:
        if "internet" in query and internet != stored[query["internet"]]:
            continue
        if "test_signal" in query and test_signal != stored[query["test_signal"]]:
            continue
        if "leakage" in query and leakage != (query["leakage"] == "yes"):
            continue
        keep.add(name)
    return keep


def queries():
    """Each filter on its own, and every combination of all three."""
    for name, values in FILTER_VALUES.items():
        yield from ({name: value} for value in values)
    for combo in itertools.product(*FILTER_VALUES.values()):
        yield dict(zip(FILTER_VALUES, combo, strict=True))


def test_each_disclosure_filter_includes_and_excludes_the_right_rows(client, board):
    assert {r["agent"] for r in client.get(API).json()["results"]} == set(board)
    for query in queries():
        url = API + "".join(f"&{k}={v}" for k, v in query.items())
        got = {r["agent"] for r in client.get(url).json()["results"]}
        assert got == expected(query), query
        filters = stats.LeaderboardFilters(**query)
        from_runs = ranking.leaderboard_from_runs(split_slug="tiny", user=AnonymousUser(), filters=filters)[1]
        assert {str(r.experiment.agent) for r in from_runs} == got, query
    assert expected({"internet": "no", "test_signal": "no", "leakage": "no"}) == {"offline"}


def test_the_page_filters_too_and_says_not_disclosed(client, board):
    page = client.get("/?split=tiny&internet=no&test_signal=no&leakage=no").content.decode()
    assert ">offline<" in page and ">silent<" not in page and ">peeked<" not in page
    assert "internet: no" in page and "test signal: no" in page
    everything = client.get("/?split=tiny").content.decode()
    assert "internet: not disclosed" in everything and "known leakage" in everything
    assert 'name="internet"' in everything  # the filter's control


def test_a_bad_filter_value_is_a_400(client, board):
    response = client.get(API + "&internet=maybe")
    assert response.status_code == 400 and "internet" in response.json()


def test_the_api_and_csv_rows_carry_the_disclosures(client, board):
    rows = {r["agent"]: r for r in client.get(API).json()["results"]}
    assert rows["peeked"]["internet"] == "no" and rows["peeked"]["test_signal"] == "yes"
    assert rows["peeked"]["known_leakage"] is True and rows["peeked"]["leakage_note"] == "saw the answers"
    assert rows["silent"]["internet"] == "not disclosed" and rows["silent"]["test_signal"] == "not disclosed"
    assert rows["silent"]["gpu_count"] is None and rows["silent"]["cpu_count"] is None
    assert rows["silent"]["disclosed_by"] == "not disclosed"
    found = {r["agent"]: r for r in csv.DictReader(io.StringIO(client.get(API + "&format=csv").content.decode()))}
    assert found["silent"]["internet"] == "not disclosed" and found["silent"]["gpu_count"] == ""
    assert found["leaky-web"]["known_leakage"] == "True" and found["open-web"]["internet"] == "yes"
    page_csv = client.get("/?split=tiny&format=csv&leakage=yes").content.decode()
    assert {r["agent"] for r in csv.DictReader(io.StringIO(page_csv))} == {"peeked", "leaky-web"}


def test_an_api_upload_states_disclosures_and_the_rest_is_not_disclosed(alice, catalogue):
    client = token_client(alice)
    stated = client.post("/api/runs/", payload(
        internet="no", test_signal="no", source_url="https://github.com/example/agent", cpu_count=8,
        report_url="https://arxiv.org/abs/2410.07095", known_leakage="true", leakage_note="train overlaps test"),
        format="multipart")
    assert stated.status_code == 201, stated.content
    disclosed = stated.json()["experiment"]["disclosures"]
    assert disclosed == {
        "gpu_count": None, "gpu_type": "", "cpu_count": 8, "memory_gb": None, "internet": "no", "test_signal": "no",
        "disclosed_by": "stated by the uploader", "source_url": "https://github.com/example/agent",
        "report_url": "https://arxiv.org/abs/2410.07095", "known_leakage": True, "leakage_note": "train overlaps test",
    }
    silent = client.post("/api/runs/", payload(seed=5), format="multipart").json()
    assert silent["experiment"]["id"] != stated.json()["experiment"]["id"]  # internet stated or not: two configurations
    assert silent["experiment"]["disclosures"]["internet"] == "not disclosed"
    assert silent["experiment"]["disclosures"]["gpu_count"] is None
    assert client.get(f"/api/runs/{silent['id']}/").json()["experiment"] == silent["experiment"]


@pytest.mark.parametrize("field, value", [("source_url", "javascript:alert(1)"), ("report_url", "data:text/html,x"),
                                          ("internet", "maybe")])
def test_bad_disclosures_are_refused_with_a_reason(alice, catalogue, field, value):
    response = token_client(alice).post("/api/runs/", payload(**{field: value}), format="multipart")
    assert response.status_code == 400 and field in response.content.decode()
    assert not Run.objects.exists()
    with pytest.raises(UploadError, match=field):
        submit(alice, disclosures={field: value})


def test_the_upload_form_takes_disclosures(client, alice, catalogue):
    from tests.runs.test_submission import submission

    client.force_login(alice)
    response = client.post("/runs/upload/", {
        "competition": "spaceship-titanic", "agent": "formed", "model": "gpt-4o", "seed": 0,
        "submission": SimpleUploadedFile("submission.csv", submission().read()),
        "internet": "yes", "test_signal": "", "gpu_count": "", "cpu_count": "4", "memory_gb": "16",
        "source_url": "https://example.org/code",
    })
    assert response.status_code == 302, response.content.decode()[:2000]
    experiment = Experiment.objects.get(agent__name="formed")
    assert (experiment.internet, experiment.test_signal, experiment.gpu_count, experiment.cpu_count,
            experiment.memory_gb, experiment.source_url) == ("yes", "", None, 4, 16.0, "https://example.org/code")
    page = client.get(f"/experiments/{experiment.pk}/").content.decode()
    assert "https://example.org/code" in page and "not disclosed" in page


def test_the_cli_states_disclosures(alice, catalogue, tmp_path):
    from tests.runs.test_import_run_command import run_folder

    path = run_folder(tmp_path, "spaceship-titanic")
    call_command("import_run", str(path), "--agent", "cli-agent", "--model", "gpt-4o", "--competition",
                 "spaceship-titanic", "--owner", "alice", "--internet", "no", "--test-signal", "no",
                 "--cpus", "36", "--memory-gb", "440", "--gpus", "1", "--gpu-type", "A10",
                 "--known-leakage", "public LB labels", stdout=io.StringIO())
    experiment = Experiment.objects.get(agent__name="cli-agent")
    assert experiment.disclosures() | {"source_url": "", "report_url": ""} == {
        "gpu_count": 1, "gpu_type": "A10", "cpu_count": 36, "memory_gb": 440.0, "internet": "no", "test_signal": "no",
        "disclosed_by": "stated by the uploader", "source_url": "", "report_url": "", "known_leakage": True,
        "leakage_note": "public LB labels",
    }


def test_jobs_record_hardware_and_internet_themselves(alice, catalogue, public_data,  # noqa: F811
                                                      django_capture_on_commit_callbacks):
    runner("egress-runner", networks=["llm-egress"], cpu_count=8, memory_gb=32)
    with django_capture_on_commit_callbacks(execute=False):
        offline = make(alice, cpus=2, memory_gb=3)
        online = make(alice, cpus=2, memory_gb=3, network="llm-egress")
    assert offline.experiment_id != online.experiment_id
    for job, internet in ((offline, "no"), (online, "yes")):
        e = Experiment.objects.get(pk=job.experiment_id)
        assert (e.internet, e.test_signal, e.disclosed_by) == (internet, "no", "runner")
        assert (e.gpu_count, e.cpu_count, e.memory_gb, e.time_limit_hours) == (0, 2, 3.0, 5 / 60)
    run = graded(Experiment.objects.get(pk=online.experiment_id), catalogue.get(slug="spaceship-titanic"), 0, 1)
    Run.objects.filter(pk=run.pk).update(origin=Run.Origin.JOB)
    body = token_client(alice).get(f"/api/runs/{run.pk}/").json()["experiment"]["disclosures"]
    assert body["internet"] == "yes" and body["disclosed_by"] == "recorded by a Medalboard runner"
