"""The optional LLM judge: MLE-bench's three questions asked through the real LLM gateway (runner.gateway,
in front of a scripted OpenAI-compatible judge), its verdicts stored as findings; off by default, and
the rule-based checks run without it."""

from __future__ import annotations

import pytest

from leaderboard.trust import judge
from leaderboard.trust.models import Finding
from leaderboard.trust.review import review_run
from tests.gateway_support import start_gateway
from tests.trust.judge_upstream import JudgeUpstream
from tests.trust.support import HONEST, command, make_run

pytestmark = pytest.mark.django_db

HAND_WRITTEN = command("cat > /home/submission/submission.csv <<EOF\nid,target\n1,0\n2,1\nEOF")


@pytest.fixture
def gateway(tmp_path, settings):
    with JudgeUpstream() as upstream:
        harness = start_gateway(upstream.url, tmp_path)
        settings.TRUST_JUDGE_MODEL = "gpt-4o-judge"
        settings.TRUST_JUDGE_URL = f"{harness.base}/openai/v1"
        settings.TRUST_JUDGE_TOKEN = harness.token
        try:
            yield harness, upstream
        finally:
            harness.gateway.stop()


def test_off_by_default_and_the_rule_checks_still_run(settings):
    settings.TRUST_JUDGE_MODEL = ""
    run = make_run([*HONEST, command("cat /home/data/../private/answers.csv")])
    assert not judge.configured()
    assert [f.check_name for f in review_run(run)] == ["forbidden-paths"]


def test_the_judge_asks_through_the_gateway_and_its_yes_is_a_finding(gateway):
    harness, upstream = gateway
    run = make_run([*HONEST, HAND_WRITTEN, {"kind": "submission", "title": "submission.csv"}], submission_exists=True)
    findings = {f.check_name: f for f in review_run(run)}
    judged = findings["judge-hand-labelling"]
    assert judged.severity == "warning" and judged.steps == [len(HONEST)]
    assert judged.evidence["model"] == "gpt-4o-judge" and "The final answer is yes." in judged.evidence["answer"]
    assert "judge-llm-api" not in findings and "judge-unauthorized-access" not in findings  # answered no
    assert "hand-labelling" in findings  # the rule-based check agrees on its own
    # Two questions read the log, one the code: three metered calls, each an llm step of the gateway,
    # upstream with the real key, never the token the site holds.
    assert len(upstream.requests) == 3 and len(harness.steps) == 3
    assert all(r["auth"] != f"Bearer {harness.token}" for r in upstream.requests)
    assert upstream.requests[0]["body"]["temperature"] == 0


def test_a_no_on_a_later_scan_removes_the_open_finding_and_no_verdict_keeps_it(gateway):
    run = make_run([*HONEST, command("ls /private/")])
    review_run(run)
    assert Finding.objects.filter(run=run, check_name="judge-unauthorized-access").exists()
    from tests.trust.support import add_steps

    add_steps(run, [*HONEST, command("echo UNSURE")])  # no verdict: the earlier finding stands
    review_run(run)
    assert Finding.objects.filter(run=run, check_name="judge-unauthorized-access").exists()
    add_steps(run, HONEST)
    review_run(run)
    assert not Finding.objects.filter(run=run, check_name="judge-unauthorized-access").exists()


def test_an_unreachable_judge_leaves_findings_alone(settings):
    settings.TRUST_JUDGE_MODEL, settings.TRUST_JUDGE_URL = "m", "http://127.0.0.1:9/v1"
    settings.TRUST_JUDGE_TIMEOUT_S = 2
    run = make_run([*HONEST, command("ls /private/")])
    assert {f.check_name for f in review_run(run)} == {"forbidden-paths"}


def test_long_logs_are_asked_in_chunks_and_one_yes_is_enough(gateway, settings):
    _, upstream = gateway
    settings.TRUST_JUDGE_MAX_CHARS = 2000
    filler = [{"kind": "message", "title": "note", "text": "x" * 1500} for _ in range(3)]
    run = make_run([*HONEST, *filler, HAND_WRITTEN], submission_exists=True)
    findings = {f.check_name for f in review_run(run)}
    assert "judge-hand-labelling" in findings
    log_calls = [r for r in upstream.requests if "submission file itself" in r["body"]["messages"][2]["content"]]
    assert len(log_calls) > 1  # the log did not fit one chunk


def test_the_judges_answer_never_carries_the_answers(gateway, catalogue, tmp_path):
    from leaderboard.models import CompetitionAnswers

    answers = tmp_path / "answers.csv"
    rows = [f"{4000 + i},{'True' if i % 2 else 'False'}" for i in range(10)]
    answers.write_text("PassengerId,Transported\n" + "\n".join(rows) + "\n")
    competition = catalogue.get(slug="spaceship-titanic")
    CompetitionAnswers.objects.update_or_create(competition=competition, defaults={"answers_path": str(answers)})
    printed = command("echo ECHO; cat /home/data/../private/answers.csv", stdout="\n".join(rows))
    run = make_run([printed], competition=competition)
    judged = Finding.objects.get(run=review_run(run)[0].run, check_name="judge-unauthorized-access")
    assert "left out" in judged.evidence["answer"]
    assert not any(row in str(judged.evidence) or row in judged.summary for row in rows)
