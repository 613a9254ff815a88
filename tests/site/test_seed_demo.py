"""seed_demo: real public trajectories, and the built-in baseline agent run on synthetic demo tasks,
its runs graded against synthetic answers and labelled so; idempotent, and quick the second time."""

from __future__ import annotations

from io import StringIO

from django.core.management import call_command

from leaderboard.management.commands.seed_demo import AGENT_NAME, SEEDS
from leaderboard.models import CompetitionAnswers, Run


def seed(*args) -> str:
    out = StringIO()
    call_command("seed_demo", *args, stdout=out)
    return out.getvalue()


def test_seed_demo_creates_labelled_graded_runs_and_is_idempotent(demo_site, demo_agent_runs, client):
    demo = Run.objects.filter(experiment__agent__name=AGENT_NAME)
    assert demo.count() == 2 * 2 * len(SEEDS)  # 2 competitions x 2 hardware x the seeds
    assert set(demo.values_list("is_demo", "status")) == {(True, Run.Status.GRADED)}
    assert all(r.score is not None and "synthetic answers, not the real Kaggle test set" in r.notes for r in demo)
    assert demo.filter(any_medal=True).exists() or demo.filter(above_median=True).exists()
    # the synthetic answers are never registered as the competition's answers
    assert not CompetitionAnswers.objects.filter(competition__slug__startswith="tabular-playground").exclude(
        answers_path="").exists()
    trajectories = Run.objects.filter(notes__startswith="DEMO: a real public trajectory")
    assert trajectories.filter(trajectory_format="aide", n_steps__gt=0).exists()
    assert trajectories.filter(trajectory_format="mlagentbench").exists()
    before = sorted(demo.values_list("pk", flat=True))
    again = seed("--agent-runs", str(demo_agent_runs))
    assert "baseline agent on" not in again  # the kept folders are imported; the agent does not run again
    assert sorted(demo.values_list("pk", flat=True)) == before


def test_missing_trajectories_folder_is_skipped_with_a_message(catalogue, settings, tmp_path, demo_agent_runs):
    settings.VAR_DIR = tmp_path
    output = seed("--trajectories", str(tmp_path / "nowhere"), "--agent-runs", str(demo_agent_runs))
    assert "skipping the demo trajectories" in output
    assert Run.objects.filter(experiment__agent__name__startswith="DEMO").count() == 2 * 2 * len(SEEDS)


def test_the_demo_of_an_earlier_version_is_replaced(catalogue, settings, tmp_path, demo_agent_runs):
    """A var/ seeded by an earlier seed_demo keeps no stale demo rows beside the new ones."""
    from tests.trust.support import make_run

    stale = make_run(is_demo=True)
    stale.experiment.agent.name = "DEMO scikit-learn random forest"
    stale.experiment.agent.save()
    settings.VAR_DIR = tmp_path
    seed("--agent-runs", str(demo_agent_runs))
    assert not Run.objects.filter(pk=stale.pk).exists()
