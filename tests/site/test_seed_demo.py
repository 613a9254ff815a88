"""seed_demo: real trajectories plus clearly labelled synthetic-answer runs; idempotent."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from leaderboard.models import CompetitionAnswers, Run


@pytest.fixture
def demo_dir(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    return tmp_path / "demo"


def seed(*args) -> str:
    out = StringIO()
    call_command("seed_demo", *args, stdout=out)
    return out.getvalue()


def test_seed_demo_creates_labelled_graded_runs_and_is_idempotent(catalogue, demo_dir, client):
    seed()
    demo = Run.objects.filter(experiment__agent__name__startswith="DEMO scikit-learn")
    assert demo.count() == 12  # 2 competitions x 2 models x 3 seeds
    assert all(r.status == Run.Status.GRADED and r.score is not None for r in demo)
    assert all("synthetic answers, not the real Kaggle test set" in r.notes for r in demo)
    assert demo.filter(any_medal=True).exists() or demo.filter(above_median=True).exists()
    # the synthetic answers are never registered as the competition's answers
    assert not CompetitionAnswers.objects.filter(competition__slug__startswith="tabular-playground").exclude(
        answers_path="").exists()
    trajectories = Run.objects.filter(notes__startswith="DEMO: a real public trajectory")
    assert trajectories.filter(trajectory_format="aide", n_steps__gt=0).exists()
    assert trajectories.filter(trajectory_format="mlagentbench").exists()
    before = Run.objects.count()
    seed()
    assert Run.objects.count() == before
    page = client.get("/?split=lite&pad=true").content.decode()
    assert "DEMO scikit-learn logistic regression" in page


def test_missing_trajectories_folder_is_skipped_with_a_message(catalogue, demo_dir, tmp_path):
    output = seed("--trajectories", str(tmp_path / "nowhere"))
    assert "skipping the demo trajectories" in output
    assert Run.objects.filter(experiment__agent__name__startswith="DEMO").count() == 12
