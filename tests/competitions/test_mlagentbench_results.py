"""MLAgentBench-style research tasks: success = more than 10% better than the baseline, hand-worked."""

from __future__ import annotations

import pytest

from leaderboard.analysis import research as stats
from leaderboard.models import Benchmark, Competition, Run
from tests.web.test_leaderboard import experiment


@pytest.fixture
def research(db):
    bench, _ = Benchmark.objects.get_or_create(slug="mlagentbench", defaults={"name": "MLAgentBench"})
    accuracy = Competition.objects.create(benchmark=bench, slug="cifar10-test", name="CIFAR-10",
                                          kind=Competition.Kind.RESEARCH, baseline_score=0.5, is_lower_better=False)
    loss = Competition.objects.create(benchmark=bench, slug="house-price-test", name="House prices",
                                      kind=Competition.Kind.RESEARCH, baseline_score=2.0, is_lower_better=True)
    return accuracy, loss


def graded(exp, competition, score, seed=0):
    return Run.objects.create(experiment=exp, competition=competition, score=score, seed=seed,
                              status=Run.Status.GRADED, valid_submission=score is not None)


def test_improvement_in_the_metric_direction():
    assert stats.improvement(0.55, 0.5, lower_is_better=False) == pytest.approx(0.10)
    assert stats.improvement(1.8, 2.0, lower_is_better=True) == pytest.approx(0.10)
    assert stats.improvement(2.2, 2.0, lower_is_better=True) == pytest.approx(-0.10)
    assert stats.improvement(None, 2.0, lower_is_better=True) is None


def test_success_rate_and_mean_improvement_hand_worked(research):
    accuracy, loss = research
    exp = experiment("ResearchAgent", "gemini-pro")
    graded(exp, accuracy, 0.56)          # +12%: success
    graded(exp, accuracy, 0.55, seed=1)  # +10%: exactly the bar is not more than it (MLAgentBench's ">")
    graded(exp, loss, 1.7)               # 2.0 -> 1.7 is 15% lower, lower is better: success
    graded(exp, loss, None, seed=1)      # no score: a failure, not part of the mean improvement
    [result] = stats.research_results(stats.research_runs(user=None))
    assert result.n_runs == 4 and result.n_success == 2
    assert result.success_rate == pytest.approx(50.0)
    assert result.mean_improvement_pct == pytest.approx((12 + 10 + 15) / 3)


def test_research_section_on_the_leaderboard_and_experiment_page(client, research, catalogue):
    accuracy, _ = research
    exp = experiment("ResearchAgent", "gemini-pro")
    graded(exp, accuracy, 0.6)
    page = client.get("/").content.decode()
    assert 'id="research-results"' in page and "100.0%" in page and "20.0%" in page
    page = client.get(f"/experiments/{exp.pk}/").content.decode()
    assert "Success rate" in page and "100.0%" in page


def test_the_research_section_marks_self_reported_runs_and_follows_verified(client, research, catalogue):
    """An imported trace with a typed --score is self-reported: marked, listed after the verified ones,
    and left out with ?verified=true (it showed as 100 % success among verified ones)."""
    accuracy, _ = research
    job = experiment("ResearchAgent", "gpt-4")
    graded(job, accuracy, 0.52)  # +4 %: no success, but scored here
    Run.objects.filter(experiment=job).update(verification=Run.Verification.VERIFIED)
    typed = experiment("Imported", "claude")
    graded(typed, accuracy, 0.5717)
    Run.objects.filter(experiment=typed).update(verification=Run.Verification.SELF_REPORTED)
    page = client.get("/").content.decode()
    section = page[page.index('id="research-overall"'):page.index('id="research-per-task"')]
    assert section.index("ResearchAgent") < section.index("Self-reported results") < section.index("Imported")
    assert 'badge verified">verified' in section and 'badge self_reported">self-reported' in section
    verified = client.get("/?verified=true").content.decode()
    section = verified[verified.index('id="research-overall"'):verified.index('id="research-per-task"')]
    assert "ResearchAgent" in section and "Imported" not in section


def test_a_research_only_site_answers_on_the_front_page(client, research, settings):
    """No MLE-bench catalogue imported, only research tasks: / and ?split=research show them (it was a 404)."""
    from leaderboard.models import Split

    Split.objects.filter(benchmark__slug="mle-bench").delete()
    accuracy, _ = research
    graded(experiment("ResearchAgent", "gpt-4"), accuracy, 0.6)
    for url in ("/", "/?split=research", "/?split=research&verified=true"):
        response = client.get(url)
        assert response.status_code == 200, url
        assert 'id="research-only"' in response.content.decode()
    assert 'id="research-results"' in client.get("/").content.decode()
    assert client.get("/?split=nonesuch").status_code == 404
