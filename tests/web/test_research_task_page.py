"""The research task page (starter, baseline, runs by improvement) and the API's research fields,
checked against improvements computed here from the scores."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from leaderboard.models import Competition, Run
from tests.competitions.research_fixture import build_task
from tests.web.test_leaderboard import experiment

BASELINE = 0.5


@pytest.fixture
def research_task(db, tmp_path, settings):
    settings.RESEARCH_DIR = tmp_path / "stored"
    build_task(tmp_path / "tasks", "tiny-accuracy")
    build_task(tmp_path / "tasks", "tiny-error", lower_is_better=True)
    call_command("import_research_tasks", str(tmp_path / "tasks"), "--lower-is-better", "tiny-error",
                 "--baseline-score", f"tiny-accuracy={BASELINE}", "--baseline-score", "tiny-error=0.4",
                 stdout=io.StringIO())
    return Competition.objects.get(slug="tiny-accuracy"), Competition.objects.get(slug="tiny-error")


def graded(exp, competition, score, seed=0, **fields) -> Run:
    return Run.objects.create(experiment=exp, competition=competition, score=score, seed=seed,
                              status=Run.Status.GRADED, valid_submission=score is not None, **fields)


def test_the_page_ranks_runs_by_improvement_and_shows_the_starter(client, research_task):
    accuracy, _ = research_task
    exp = experiment("ResearchAgent", "gemini-pro")
    small = graded(exp, accuracy, 0.52, seed=0)       # +4%
    big = graded(exp, accuracy, 0.8, seed=1, tokens_in=1000, tokens_out=200, usage_metered=True)  # +60%
    none = graded(exp, accuracy, None, seed=2, failure_classes=["no_final_answer"])
    page = client.get("/competitions/tiny-accuracy/").content.decode()
    assert 'id="baseline-score">0.5<' in page and "Given at import".lower() in page
    table = page.split('id="research-runs-table"')[1]
    order = [table.index(f"run {r.pk}<") for r in (big, small, none)]
    assert order == sorted(order)  # best improvement first, no score last
    assert "+60.0%" in table and "+4.0%" in table and "1.2 k" in table
    by_run = {r.pk: table.split(f"run {r.pk}<")[1].split("</tr>")[0] for r in (big, small)}
    assert "1.2 k <span" in by_run[big.pk] and ">metered</span>" in by_run[big.pk]
    assert "badge usage" not in by_run[small.pk]  # no figure, nothing to qualify
    assert "Never submitted a final answer" in table
    assert "majority class of train.csv" in page  # the starter's code
    rows = {row.split("</code>")[0]: row for row in page.split('id="starter-files"')[1].split("<tr><td><code>")[1:]}
    assert "read-only" in rows["train.csv"] and "read-only" in rows["test.csv"] and "read-only" not in rows["train.py"]
    assert "answer.csv" not in page and "eval.py</code> scores" in page  # the scripts are never listed


def test_the_api_gives_the_baseline_and_each_runs_improvement_and_success(client, research_task):
    accuracy, error = research_task
    exp = experiment("ResearchAgent", "gemini-pro")
    runs = {graded(exp, accuracy, 0.56).pk: ((0.56 - BASELINE) / BASELINE, True),
            graded(exp, accuracy, 0.54, seed=1).pk: ((0.54 - BASELINE) / BASELINE, False),
            graded(exp, error, 0.30).pk: ((0.4 - 0.30) / 0.4, True),    # lower is better: 25% less error
            graded(exp, error, 0.38, seed=1).pk: ((0.4 - 0.38) / 0.4, False),
            graded(exp, error, 0.5, seed=2).pk: ((0.4 - 0.5) / 0.4, False)}
    detail = client.get("/api/competitions/tiny-accuracy/").json()
    assert detail["baseline_score"] == BASELINE and detail["kind"] == "research"
    assert detail["research"]["entry_script"] == "train.py"
    assert detail["research"]["read_only_files"] == ["test.csv", "train.csv"]
    assert "scripts" not in str(detail["research"]) and "answer" not in str(detail)
    for row in client.get("/api/runs/").json()["results"]:
        if row["id"] in runs:
            gain, success = runs[row["id"]]
            assert row["improvement_over_baseline"] == pytest.approx(gain) and row["success"] is success
    other = client.get("/api/competitions/spaceship-titanic/").json()
    assert other["research"] is None and other["baseline_score"] is None


def test_the_run_page_shows_the_improvement_and_draws_the_baseline_on_the_score_curve(client, research_task):
    from leaderboard.models import Snapshot
    from leaderboard.runs.snapshots import refresh_timeline

    _, error = research_task  # lower is better, baseline 0.4
    exp = experiment("ResearchAgent", "gemini-pro")
    run = graded(exp, error, 0.3, failure_classes=["no_final_answer"])
    for seconds, score in ((10.0, 0.38), (20.0, 0.3)):
        Snapshot.objects.create(run=run, elapsed_seconds=seconds, status=Snapshot.Status.GRADED, score=score,
                                valid_submission=True)
    refresh_timeline(run.pk)
    response = client.get(f"/runs/{run.pk}/")
    page = response.content.decode()
    outcome = page.split('id="research-outcome"')[1].split("</div>")[0]
    assert "+25.0%" in outcome and "success" in outcome and "Never submitted a final answer" in outcome
    left_out = graded(exp, error, 0.3, seed=1, failure_classes=["llm_connection"])
    outcome = client.get(f"/runs/{left_out.pk}/").content.decode().split('id="research-outcome"')[1].split("</div>")[0]
    assert "left out of the statistics" in outcome and "LLM connection errors" in outcome
    figure = response.context["snapshots_figure"]
    lines = {round(shape["y0"], 9) for shape in figure["layout"]["shapes"]}
    assert {0.4, round(0.4 - 0.1 * 0.4, 9)} <= lines  # the baseline and the score a success needs
    assert list(figure["data"][0]["y"]) == [0.38, 0.3]
    assert "scored by the task's own eval.py" in page and "medal thresholds" not in page  # not a Kaggle caption


def test_the_research_sections_show_mean_and_sem_over_seeds_per_task_and_overall(client, research_task, catalogue):
    accuracy, error = research_task
    exp = experiment("ResearchAgent", "gemini-pro")
    graded(exp, accuracy, 0.6, seed=0, duration_s=30.0, tokens_in=1500, tokens_out=500)  # +20%: success
    graded(exp, accuracy, 0.5, seed=1, duration_s=90.0, tokens_in=500, tokens_out=500)   # 0%
    # per seed: success 100% and 0% -> 50 ± 50; improvement 20% and 0% -> 10 ± 10; time 1 min; tokens 1.5 k
    for page in (client.get("/").content.decode(), client.get(f"/experiments/{exp.pk}/").content.decode()):
        overall = page.split('id="research-overall"')[1].split("</table>")[0]
        assert "50.0% ± 50.0" in overall and "10.0% ± 10.0" in overall and "1 min" in overall and "1.5 k" in overall
        assert ">self-reported</span>" in overall.split("1.5 k", 1)[1]
        per_task = page.split('id="research-per-task"')[1].split("</table>")[0]
        assert "tiny-accuracy" in per_task and "50.0% ± 50.0" in per_task and "tiny-error" not in per_task
