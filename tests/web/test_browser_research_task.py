"""The research task page in a real browser: the baseline, the runs ranked by improvement with their
chart drawn, and the starter."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from leaderboard.models import Competition, Run
from tests.competitions.research_fixture import build_task
from tests.web.test_leaderboard import experiment

pytestmark = pytest.mark.browser


def test_the_research_task_page_shows_baseline_runs_by_improvement_and_starter(page, tmp_path, settings):
    settings.RESEARCH_DIR = tmp_path / "stored"
    build_task(tmp_path / "tasks", "tiny-accuracy")
    call_command("import_research_tasks", str(tmp_path / "tasks"), "--baseline-score", "0.5", stdout=io.StringIO())
    task = Competition.objects.get(slug="tiny-accuracy")
    exp = experiment("ResearchAgent", "gemini-pro")
    for seed, score in enumerate((0.52, 0.9, 0.6)):
        Run.objects.create(experiment=exp, competition=task, seed=seed, score=score, status=Run.Status.GRADED,
                           valid_submission=True, duration_s=60.0 * (seed + 1))
    page.goto(f"{page.base_url}/competitions/tiny-accuracy/")
    assert page.inner_text("#baseline-score") == "0.5"
    chart = page.locator("#research-improvement-chart")
    chart.locator("svg.main-svg").first.wait_for(timeout=15000)
    assert chart.get_attribute("data-drawn") == "true"
    assert chart.locator(".trace.bars path, .bars path").count() == 3
    assert "success: 10% better" in chart.inner_text()
    improvements = page.locator("#research-runs-table td.improvement").all_inner_texts()
    assert improvements == ["+80.0%", "+20.0%", "+4.0%"]  # ranked by improvement over the 0.5 baseline
    assert page.locator("#research-runs-table .tag.success").count() == 2
    assert "majority class" in page.inner_text("#starter-code")
    assert "read-only" in page.locator("#starter-files tr", has_text="train.csv").inner_text()
    assert page.js_errors == []
