"""An uploaded run walked through every state: its progress page, its status endpoint, its page, the
API and the runs list say the same words (Run.state and Run.progress, derived in one place)."""

from __future__ import annotations

import html as html_lib
import re

import pytest

from leaderboard.models import Run
from tests.api.test_runs import token_client
from tests.runs.test_submission import submit

pytestmark = pytest.mark.django_db

# run fields -> (progress words, state words)
WALK = [
    ({"status": Run.Status.PENDING}, "queued for grading", "pending"),
    ({"status": Run.Status.PENDING, "grading_attempts": 1}, "retrying (attempt 2)", "pending"),
    ({"status": Run.Status.GRADING, "grading_attempts": 1}, "grading", "grading"),
    ({"status": Run.Status.WAITING, "submission_exists": True, "grading_error": "no answers registered yet"},
     "waiting for answers", "waiting for answers"),
    ({"status": Run.Status.FAILED, "grading_error": "the grader crashed"}, "failed: the grader crashed", "failed"),
    ({"status": Run.Status.GRADED, "submission_exists": True, "valid_submission": False,
      "verification": Run.Verification.VERIFIED, "grading_error": "missing column(s) 'Transported'"},
     "invalid submission", "invalid submission"),
    ({"status": Run.Status.GRADED, "submission_exists": False, "verification": Run.Verification.VERIFIED},
     "no submission", "no submission"),
    ({"status": Run.Status.GRADED, "submission_exists": True, "valid_submission": True, "score": 0.79,
      "verification": Run.Verification.VERIFIED}, "graded", "graded"),
    ({"status": Run.Status.GRADED, "score": 1.0, "verification": Run.Verification.SELF_REPORTED},
     "self-reported score", "self-reported score"),
]


@pytest.mark.parametrize(("fields", "progress", "state"), WALK)
def test_an_upload_says_the_same_state_everywhere(client, alice, catalogue, fields, progress, state):
    run = submit(alice)
    Run.objects.filter(pk=run.pk).update(**fields)
    client.force_login(alice)
    shown = re.search(r'<strong id="run-status" data-status="\w+">([^<]*)</strong>',
                      client.get(f"/runs/{run.pk}/progress/").content.decode()).group(1)
    assert html_lib.unescape(shown) == progress
    status = client.get(f"/runs/{run.pk}/status.json").json()
    assert (status["progress"], status["state"]) == (progress, state)
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert html_lib.unescape(re.search(r'<dd id="run-state" class="state-\w+">([^<]*)</dd>', page).group(1)) == state
    assert token_client(alice).get(f"/api/runs/{run.pk}/").json()["state"] == state
    row = html_lib.unescape(client.get("/runs/").content.decode().split(f'href="/runs/{run.pk}/"')[1].split("</tr>")[0])
    if fields.get("score") is None:  # the runs list says the state where there is no medal to show
        assert f'<span class="state state-{fields["status"]}">{state}</span>' in row
    else:  # a medal, marked as a claim where nobody graded a file
        assert 'class="medal' in row and ("self-reported</span>" in row) == (state == "self-reported score")
