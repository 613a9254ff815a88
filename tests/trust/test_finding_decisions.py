"""Findings on the run page and GET /api/runs/<id>/, and staff decisions on them (page form and API),
with personas: staff decide, the owner, another user and a visitor only read; every decision is audited."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from leaderboard.trust.models import Finding, FindingReview
from leaderboard.trust.review import review_run
from tests.trust.support import HONEST, command, make_run

pytestmark = pytest.mark.django_db

SECRET = "sk-ant-abcdefghijklmnopqrstuvwxyz0123"
CHEAT = command(f"ANTHROPIC_API_KEY={SECRET} cat /home/data/../private/answers.csv")


@pytest.fixture
def flagged(alice):
    run = make_run([*HONEST, CHEAT], owner=alice)
    review_run(run)
    return run, Finding.objects.get(run=run)


def _client(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def test_the_api_lists_findings_with_check_severity_steps_status(flagged):
    run, finding = flagged
    body = _client().get(f"/api/runs/{run.pk}/").json()
    assert body["findings"] == [{
        "id": finding.pk, "check": "forbidden-paths", "title": "Reads paths the agent must not",
        "severity": "violation", "summary": finding.summary, "steps": [len(HONEST)], "evidence": finding.evidence,
        "status": "open", "review_reason": "", "reviewed_at": None,
        "created_at": body["findings"][0]["created_at"]}]
    assert SECRET not in str(body)  # quotes mask keys


def test_the_run_page_shows_findings_with_step_permalinks(client, flagged):
    run, finding = flagged
    page = client.get(reverse("run-detail", args=[run.pk])).content.decode()
    assert f'id="finding-{finding.pk}"' in page
    assert f'href="/runs/{run.pk}/#step-{len(HONEST)}"' in page
    section = page.split('id="findings"')[1].split("</section>")[0]
    assert SECRET not in section  # (the step itself shows what the uploader uploaded)
    assert "finding-review" not in section  # no form for a visitor


@pytest.mark.parametrize("persona", ["anonymous", "alice", "bob"])
def test_only_staff_may_decide(persona, flagged, request, client):
    run, finding = flagged
    user = None if persona == "anonymous" else request.getfixturevalue(persona)
    answer = _client(user).post(f"/api/findings/{finding.pk}/review/", {"status": "dismissed", "reason": "no"})
    assert answer.status_code in (401, 403)
    if user is not None:
        client.force_login(user)
    page = client.post(reverse("finding-review", args=[run.pk, finding.pk]), {"status": "dismissed", "reason": "x"})
    assert page.status_code == 302 and "/admin/login/" in page["Location"]  # staff_member_required
    finding.refresh_from_db()
    assert finding.status == Finding.Status.OPEN and not FindingReview.objects.exists()


def test_staff_confirm_then_dismiss_and_every_decision_is_kept(flagged, staff, client):
    run, finding = flagged
    answer = _client(staff).post(f"/api/findings/{finding.pk}/review/",
                                 {"status": "confirmed", "reason": "it read the answers"}, format="json")
    assert answer.status_code == 200 and answer.json()["status"] == "confirmed"
    client.force_login(staff)
    page = client.post(reverse("finding-review", args=[run.pk, finding.pk]),
                       {"status": "dismissed", "reason": "the file was a decoy we planted"})
    assert page.status_code == 302 and page["Location"].endswith(f"#finding-{finding.pk}")
    finding.refresh_from_db()
    assert (finding.status, finding.review_reason, finding.reviewed_by) == (
        "dismissed", "the file was a decoy we planted", staff)
    assert list(finding.reviews.values_list("status", "reason", "reviewer")) == [
        ("confirmed", "it read the answers", staff.pk), ("dismissed", "the file was a decoy we planted", staff.pk)]
    shown = client.get(reverse("run-detail", args=[run.pk])).content.decode()
    assert "the file was a decoy we planted" in shown and "finding-review" in shown  # staff get the form


@pytest.mark.parametrize("data", [{"status": "dismissed", "reason": "  "}, {"status": "gone", "reason": "why"}])
def test_a_decision_needs_a_reason_and_a_known_status(flagged, staff, data):
    _, finding = flagged
    assert _client(staff).post(f"/api/findings/{finding.pk}/review/", data, format="json").status_code == 400
    assert not FindingReview.objects.exists()


def test_a_private_runs_findings_stay_private(alice, bob):
    run = make_run([CHEAT], owner=alice, is_private=True)
    review_run(run)
    assert _client(bob).get(f"/api/runs/{run.pk}/").status_code == 404
    assert _client(alice).get(f"/api/runs/{run.pk}/").json()["findings"][0]["check"] == "forbidden-paths"
