"""network: attempts from the trajectory (commands, code, tool calls, errors that came back) and from
the sandbox's record; the checker on localhost and offline installs are not attempts."""

from __future__ import annotations

import pytest

from tests.trust.support import HONEST, check, code, command, make_run, plan

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("step", [
    command("pip install lightgbm", stderr="ERROR: Could not find a version ... Temporary failure in name resolution"),
    command("wget https://example.org/extra-data.zip"),
    command("curl -s https://huggingface.co/api/models"),
    code('import requests\nr = requests.get("https://example.org/labels.json")'),
    code('df = pd.read_csv("https://raw.githubusercontent.com/someone/solutions/main/train_extra.csv")'),
    {"kind": "action", "data": {"tool": "web_browser", "arguments": {"url": "https://www.google.com/search?q=x"}}},
], ids=["pip", "wget", "curl", "requests", "read-csv-url", "browser-tool"])
def test_network_attempts_are_warnings_naming_their_step(step):
    run = make_run([*HONEST[:3], step, *HONEST[3:]])
    hit = check(run, "network")
    assert hit is not None and hit.severity == "warning"
    assert hit.steps == [3]


def test_kaggle_is_a_violation_others_solutions_are_there():
    run = make_run([*HONEST, command("kaggle competitions download -c spaceship-titanic")])
    hit = check(run, "network")
    assert hit.severity == "violation" and hit.steps == [len(HONEST)]


def test_an_error_that_came_back_counts_even_when_the_call_is_hidden():
    run = make_run([*HONEST, command("python fetch_weights.py",
                                     stderr="urllib3.exceptions.NameResolutionError: Failed to resolve 'cdn'")])
    hit = check(run, "network")
    assert hit is not None and hit.steps == [len(HONEST)]


@pytest.mark.parametrize("step", [
    command("curl -X POST -F file=@submission.csv http://localhost:5000/validate"),
    command("pip install --no-index --find-links /opt/wheels lightgbm"),
    code('# see https://scikit-learn.org/stable/modules/ensemble.html\nmodel = RandomForestClassifier()'),
    code('URL_OF_DOCS = "https://pandas.pydata.org"  # for the report\nprint(URL_OF_DOCS)'),
    code('requests.post("http://127.0.0.1:5000/validate", files={"file": f})'),
    plan("If I had internet I would pip install catboost, but the sandbox is offline."),
], ids=["checker", "offline-pip", "url-in-comment", "url-named-not-read", "checker-from-code", "plan"])
def test_near_misses_are_not_findings(step):
    assert check(make_run([*HONEST, step]), "network") is None


def _job_run(catalogue, network: str | None, log_tail: str = ""):
    from leaderboard.models import Run
    from runner.models import AgentDefinition, Job, JobTask

    competition = catalogue.get(slug="spaceship-titanic")
    run = make_run(HONEST, origin=Run.Origin.JOB, competition=competition)
    Run.objects.filter(pk=run.pk).update(recipe={"sandbox": {"backend": "docker", "runtime": "runc"}})
    run.refresh_from_db()
    agent, _ = AgentDefinition.objects.get_or_create(name="trust-agent", defaults={"command": ["true"]})
    job = Job.objects.create(experiment=run.experiment, agent=agent, time_limit_s=60, network=network)
    JobTask.objects.create(job=job, competition=competition, queue="cpu", run=run, log_tail=log_tail)
    return run


def test_the_sandbox_record_of_a_job_run_counts(catalogue):
    run = _job_run(catalogue, None, log_tail="socket.gaierror: [Errno -3] Temporary failure in name resolution")
    hit = check(run, "network")
    assert hit is not None and hit.evidence["sandbox"] == {
        "job": True, "network": None, "backend": "docker", "output_errors": True}
    assert "the sandbox had no network" in hit.summary


def test_a_job_run_with_a_clean_record_and_trajectory_has_no_finding(catalogue):
    assert check(_job_run(catalogue, "egress-proxy", log_tail="fitted; wrote submission.csv"), "network") is None
