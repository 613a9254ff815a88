"""Experiments belong to an owner; nobody joins another owner's results by using their names.
Staff transfer and merge."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from leaderboard.models import Experiment, Run, Team
from leaderboard.runs.artifacts import UploadError
from leaderboard.runs.experiments import ExperimentSpec, get_or_create_experiment
from tests.api.test_runs import payload, token_client
from tests.runs.test_submission import submission, submit


@pytest.fixture
def lab(alice):
    team = Team.objects.create(name="lab")
    team.members.add(alice)
    return team


def test_the_same_names_from_another_user_make_another_experiment(alice, bob, catalogue):
    mine = submit(alice, seed=0)
    theirs = submit(bob, seed=0)
    assert mine.experiment_id != theirs.experiment_id
    assert mine.experiment.owner == alice and theirs.experiment.owner == bob
    assert Run.objects.filter(experiment=mine.experiment).get() == mine  # bob's run did not replace alice's


def test_a_team_member_uploads_into_the_teams_experiment(alice, bob, lab, catalogue):
    team_run = submit(alice, team=lab, seed=1)
    assert team_run.experiment.team == lab and team_run.experiment.owner is None
    assert team_run.experiment.owner_label == "team lab"
    assert submit(alice, seed=1, submission=submission(30)).experiment_id != team_run.experiment_id
    with pytest.raises(UploadError, match="members of the team"):
        submit(bob, team=lab, seed=1)


def test_the_api_takes_a_team_by_name_and_refuses_a_stranger(alice, bob, lab, catalogue):
    response = token_client(alice).post("/api/runs/", payload(team="lab"), format="multipart")
    assert response.status_code == 201 and response.json()["experiment"]["owner"] == "team lab"
    response = token_client(bob).post("/api/runs/", payload(team="lab"), format="multipart")
    assert response.status_code == 400 and "members" in response.json()["detail"]


def test_catalogue_data_has_no_owner(db, catalogue):
    experiment = get_or_create_experiment(ExperimentSpec("MLE-bench AIDE", "o1"))
    assert experiment.owner is None and experiment.team is None and experiment.owner_label == ""
    assert get_or_create_experiment(ExperimentSpec("MLE-bench AIDE", "o1")) == experiment


def test_every_leaderboard_row_says_whose_it_is(client, alice, bob, lab, catalogue):
    submit(alice, self_reported_score=0.8, submission=None)
    submit(bob, self_reported_score=0.7, submission=None)
    submit(alice, team=lab, self_reported_score=0.6, submission=None)
    rows = client.get("/api/leaderboard/?split=dev").json()["results"]
    assert sorted(r["owner"] for r in rows) == ["alice", "bob", "team lab"]
    page = client.get("/?split=dev").content.decode()
    assert page.count('class="small owner"') == 3 and "team lab" in page


def test_staff_transfer_an_experiment_and_it_merges_with_the_new_owners_twin(alice, bob, catalogue):
    mine, theirs = submit(alice, seed=0), submit(bob, seed=1)
    call_command("experiments", "transfer", str(mine.experiment_id), "--to", "user:bob", stdout=io.StringIO())
    mine.refresh_from_db()
    assert mine.experiment_id == theirs.experiment_id  # bob already had this configuration: one experiment
    assert not Experiment.objects.filter(owner=alice).exists()


def test_staff_merge_experiments(alice, catalogue):
    a = submit(alice, seed=0)
    b = submit(alice, seed=0, agent_name="aide-v2")
    call_command("experiments", "merge", str(b.experiment_id), "--into", str(a.experiment_id), stdout=io.StringIO())
    assert set(Run.objects.values_list("experiment_id", flat=True)) == {a.experiment_id}
    assert not Experiment.objects.filter(pk=b.experiment_id).exists()


def test_the_admin_merges_and_transfers(client, admin_user, alice, bob, catalogue):
    a, b = submit(alice, seed=0), submit(bob, seed=0)
    client.force_login(admin_user)
    response = client.post("/admin/leaderboard/experiment/", {
        "action": "merge_into_oldest", "_selected_action": [a.experiment_id, b.experiment_id]})
    assert response.status_code == 302
    assert Experiment.objects.count() == 1 and Run.objects.filter(experiment_id=a.experiment_id).count() == 2
    experiment = Experiment.objects.get()
    response = client.post(f"/admin/leaderboard/experiment/{experiment.pk}/change/", {
        "agent": experiment.agent_id, "model": experiment.model_id, "hardware": experiment.hardware,
        "gpu_type": "", "gpu_count": 0, "cpu_count": "", "memory_gb": "", "time_limit_hours": "",
        "settings": "{}", "name": "", "owner": bob.pk, "team": ""})
    assert response.status_code == 302, response.content[:2000]
    experiment.refresh_from_db()
    assert experiment.owner == bob and experiment.owner_key == f"user:{bob.pk}"


def test_hardware_groups_never_join_two_owners(alice, bob, catalogue):
    from leaderboard.analysis import scaling

    same = dict(agent_name="aide", model_name="gpt-4o", time_limit_hours=24.0)
    mine = get_or_create_experiment(ExperimentSpec(hardware="1x A100", **same), owner=alice)
    mine_too = get_or_create_experiment(ExperimentSpec(hardware="2x A100", **same), owner=alice)
    theirs = get_or_create_experiment(ExperimentSpec(hardware="1x H100", **same), owner=bob)
    groups = sorted(sorted(e.pk for e in group) for group in scaling.hardware_groups([mine, mine_too, theirs]))
    assert groups == sorted([sorted([mine.pk, mine_too.pk]), [theirs.pk]])
