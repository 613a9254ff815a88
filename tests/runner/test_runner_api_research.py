"""A research task through the runner API, request by request: the claim carries env/'s manifest and
what the agent's sandbox needs, and nothing of scripts/ (no path, no byte of eval.py or the answers);
the data endpoint refuses every file of scripts/ by its hash; the finish leaves the run pending with
the runner's report for the site's research grading side, which scores it with the task's eval.py."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from leaderboard.models import Run
from runner.api_v1 import research as research_api
from runner.backends.local import LocalBackend
from runner.jobs.services import create_job
from runner.research.traces import score_trace
from tests.job_support import needs_agent_tools
from tests.research_support import import_tiny_task
from tests.runner.test_runner_api import API, put, runner_client

pytestmark = needs_agent_tools
AGENT = Path(__file__).resolve().parents[1] / "job_agents" / "research_agent.py"
TASK = "tiny-accuracy"


@pytest.fixture
def research_claim(db, alice, tmp_path, fast_jobs, settings, django_capture_on_commit_callbacks):
    stored = import_tiny_task(tmp_path, settings)
    client = runner_client("remote-research")
    with django_capture_on_commit_callbacks(execute=False):  # nothing reaches a broker
        create_job(user=alice, agent="research-scripted", competitions=[TASK], time_limit_minutes=1)
    answer = client.post(API + "claim/", {"wait_s": 0}, format="json")
    assert answer.status_code == 200, answer.content
    return client, answer.json(), stored


def test_the_claim_of_a_research_task_holds_env_and_nothing_of_scripts(research_claim):
    client, claim, stored = research_claim
    env = {p.relative_to(stored / "env").as_posix() for p in (stored / "env").rglob("*") if p.is_file()}
    assert (
        {f["path"] for f in claim["data"]["files"]}
        == env
        == {
            "train.csv",
            "test.csv",
            "train.py",
            "data_description.txt",
        }
    )
    part = claim["research"]
    assert part["problem"].startswith("Improve the test accuracy") and part["environment"] == "none"
    assert set(part["read_only_files"]) == {"train.csv", "test.csv"}
    text = json.dumps(claim)
    assert "scripts" not in text and str(stored) not in text
    for path in (stored / "scripts").iterdir():
        if path.name in ("eval.py", "answer.csv"):  # research_problem.txt is the agent's, by design
            assert path.read_text().strip()[:60] not in text, path.name
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert client.get(f"{API}tasks/{claim['task']}/data/{digest}/").status_code == 404, path.name
    served = client.get(f"{API}tasks/{claim['task']}/data/{claim['data']['files'][0]['sha256']}/")
    assert served.status_code == 200


def test_the_finish_waits_for_the_research_grading_side_which_scores_it(
    research_claim, django_capture_on_commit_callbacks
):
    client, claim, _ = research_claim
    report = {
        "lease": claim["lease"],
        "status": "succeeded",
        "exit_code": 0,
        "files": [],
        "research": {
            "read_only_changes": ["train.csv: changed"],
            "elapsed_s": 3.5,
            "has_submission": True,
            "left_out": [
                ["model.bin", "1,000 bytes, over the 10-byte limit per file"],
                ["../../etc/passwd", "out of the workspace"],
                ["/etc/passwd", "absolute"],
                ["x"],
                [1, "not a path"],
            ],
        },
    }
    with django_capture_on_commit_callbacks(execute=False) as asked:
        assert client.post(f"{API}tasks/{claim['task']}/finish/", report, format="json").status_code == 200
    assert [c for c in asked if "await_scoring" in c.__qualname__]  # the research queue, once it commits
    run = Run.objects.get(pk=claim["run"])
    assert run.status == Run.Status.PENDING
    assert run.grading_report[research_api.EVIDENCE]["read_only_changes"] == ["train.csv: changed"]
    # the runner's word on what its eval's copy leaves out, only as paths inside the workspace
    assert run.grading_report[research_api.EVIDENCE]["left_out"] == [
        ["model.bin", "1,000 bytes, over the 10-byte limit per file"]
    ]

    assert score_trace(run.pk, backend=LocalBackend()) == Run.Status.GRADED
    run.refresh_from_db()
    # no workspace file was uploaded: the task's eval.py finds no submission.csv, and says so
    assert run.score is None and "eval.py: FileNotFoundError" in run.grading_error
    assert "model.bin: 1,000 bytes, over the 10-byte limit per file; left out of the copy its eval scored" in (
        run.import_warnings
    )
    assert run.findings.get().evidence == {"files": ["train.csv: changed"]}
    assert research_api.EVIDENCE not in run.grading_report


def test_a_remote_research_run_the_grading_side_could_not_score_is_asked_again_by_regrade(
    research_claim, django_capture_on_commit_callbacks, monkeypatch
):
    from leaderboard.runs import research_traces
    from leaderboard.runs.regrading import regrade

    client, claim, stored = research_claim
    report = {"lease": claim["lease"], "status": "succeeded", "exit_code": 0, "files": []}
    with django_capture_on_commit_callbacks(execute=False):
        assert client.post(f"{API}tasks/{claim['task']}/finish/", report, format="json").status_code == 200
    hidden = stored.parent / "elsewhere"
    (stored / "scripts").rename(hidden)  # a worker of the research queue where the scripts are not
    assert score_trace(claim["run"], backend=LocalBackend()) == Run.Status.FAILED
    assert "not on this runner" in Run.objects.get(pk=claim["run"]).grading_error
    hidden.rename(stored / "scripts")
    asked = []
    monkeypatch.setattr(research_traces, "ask_a_runner", lambda run_id: asked.append(run_id) or True)
    # grade_run hands it to the research queue again, never to a grader (a research task has none)
    assert regrade(run_ids=[claim["run"]]) == {claim["run"]: Run.Status.PENDING} and asked == [claim["run"]]
    assert score_trace(claim["run"], backend=LocalBackend()) == Run.Status.GRADED
    assert "eval.py: FileNotFoundError" in Run.objects.get(pk=claim["run"]).grading_error


def test_mlagentbench_failure_classes_come_from_the_output_the_runner_uploaded(research_claim):
    from runner.host.outputs import OUTPUT_ARTIFACT

    client, claim, _ = research_claim
    output = b"step 0: ran train.py\n" * 2000 + b"RuntimeError: CUDA out of memory. Tried to allocate 2 GiB\n"
    assert put(client, claim, "out-00000", output, 0, output, OUTPUT_ARTIFACT).json()["complete"]
    report = {"lease": claim["lease"], "status": "failed", "exit_code": 1, "files": ["out-00000"]}
    assert client.post(f"{API}tasks/{claim['task']}/finish/", report, format="json").status_code == 200
    assert score_trace(claim["run"], backend=LocalBackend()) == Run.Status.GRADED
    run = Run.objects.get(pk=claim["run"])
    assert run.failure_classes == ["error", "out_of_memory", "no_final_answer"] and not run.valid_submission
