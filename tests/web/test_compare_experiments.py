"""Two experiments paired by competition: rates by hand, p-values against scipy, privacy, the page."""

import pytest
from scipy import stats as scipy_stats

from leaderboard.analysis import paired, stats
from leaderboard.models import Run
from tests.web.test_leaderboard import experiment


def _run(e, competition, seed, medal, beats=None, **fields):
    return Run(experiment=e, competition=competition, seed=seed, status=Run.Status.GRADED,
               valid_submission=True, any_medal=medal, gold_medal=medal, beats_human_pct=beats, **fields)


@pytest.fixture
def pair(catalogue):
    lite = list(stats.resolve_split("lite").competitions.order_by("slug"))
    a, b = experiment("aide"), experiment("mlab")
    # A: medals in 1 of 2 seeds on lite[0], none elsewhere. B: 2 of 2 on lite[0] and lite[1], none on lite[2].
    medals_a = {0: [True, False], 1: [False, False], 2: [False, False], 3: [True, True]}
    medals_b = {0: [True, True], 1: [True, True], 2: [False, False], 4: [True, False]}
    beats = {True: 95.0, False: 40.0}
    Run.objects.bulk_create(
        [_run(a, lite[c], s, m, beats[m] - c) for c, seeds in medals_a.items() for s, m in enumerate(seeds)]
        + [_run(b, lite[c], s, m, beats[m] + c) for c, seeds in medals_b.items() for s, m in enumerate(seeds)]
    )
    return a, b, lite


def test_rates_by_hand_and_pvalues_from_scipy(pair):
    a, b, lite = pair
    runs = list(Run.objects.order_by("id"))
    comparison = paired.compare([r for r in runs if r.experiment_id == a.pk],
                                [r for r in runs if r.experiment_id == b.pk], {c.pk for c in lite})
    assert [c for c, _, _ in comparison.rows] == [lite[0].pk, lite[1].pk, lite[2].pk]
    assert comparison.only_a == [lite[3].pk] and comparison.only_b == [lite[4].pk]
    rates_a = [side.medal_rate for _, side, _ in comparison.rows]
    rates_b = [side.medal_rate for _, _, side in comparison.rows]
    assert rates_a == [50.0, 0.0, 0.0] and rates_b == [100.0, 100.0, 0.0]
    medal = comparison.medal
    assert (medal.n, medal.wins, medal.ties, medal.losses) == (3, 2, 1, 0)
    assert medal.mean_diff == pytest.approx(50.0)
    assert medal.sem_diff == pytest.approx(scipy_stats.sem([50.0, 100.0, 0.0]))
    assert medal.t_pvalue == pytest.approx(scipy_stats.ttest_rel(rates_b, rates_a).pvalue)
    assert medal.wilcoxon_pvalue == pytest.approx(scipy_stats.wilcoxon(rates_b, rates_a).pvalue)
    # beats humans: A on lite[0] = mean(95, 40) = 67.5; B = 95 both seeds = 95.0
    assert comparison.rows[0][1].beats_humans == pytest.approx(67.5)
    assert comparison.rows[0][2].beats_humans == pytest.approx(95.0)


def test_no_pairs_means_no_statistics():
    test = paired.paired_test([], [])
    assert (test.n, test.mean_diff, test.t_pvalue, test.wilcoxon_pvalue) == (0, None, None, None)
    same = paired.paired_test([10.0, 20.0], [10.0, 20.0])
    assert same.ties == 2 and same.t_pvalue is None and same.wilcoxon_pvalue is None


def test_page_shows_the_pairs_and_hides_private_runs(client, pair, alice):
    a, b, lite = pair
    html = client.get(f"/compare/experiments/?a={a.pk}&b={b.pk}&split=lite").content.decode()
    assert "3 competitions both attempted" in html and lite[0].slug in html
    assert f"A: {lite[3].slug}" in html and f"B: {lite[4].slug}" in html
    Run.objects.filter(experiment=b).update(is_private=True, owner=alice)
    # all of b's runs are private now: to others b does not exist (tests/web/test_experiment_visibility.py)
    assert client.get(f"/compare/experiments/?a={a.pk}&b={b.pk}&split=lite").status_code == 404
    client.force_login(alice)
    html = client.get(f"/compare/experiments/?a={a.pk}&b={b.pk}&split=lite").content.decode()
    assert "3 competitions both attempted" in html
    client.logout()
    assert client.get(f"/compare/experiments/?a={a.pk}&b=999999").status_code == 404
    assert client.get("/compare/experiments/?a=x&b=y").status_code == 404


def test_experiment_page_offers_the_comparison(client, pair):
    a, b, _ = pair
    html = client.get(f"/experiments/{a.pk}/").content.decode()
    assert 'id="compare-form"' in html and f'<option value="{b.pk}">' in html


def test_experiments_with_only_private_runs_are_not_offered(client, pair, alice):
    a, b, _ = pair
    Run.objects.filter(experiment=b).update(is_private=True, owner=alice)
    assert f'<option value="{b.pk}">' not in client.get(f"/experiments/{a.pk}/").content.decode()
    client.force_login(alice)
    assert f'<option value="{b.pk}">' in client.get(f"/experiments/{a.pk}/").content.decode()
