"""Every Celery task keeps the name it is registered under: queued messages and beat schedules
name tasks by these strings, so moving a module must not rename its task."""

from webapp.celery import app

EXPECTED = {
    "leaderboard.tasks.grade_run",
    "leaderboard.tasks.grade_snapshot",
    "leaderboard.intake.import_intake",
    "leaderboard.trust.review_run",
    "runner.tasks.sweep",
    "runner.research.compute_baseline",
    "runner.research.score_trace",
}


def test_every_task_keeps_its_registered_name():
    app.loader.import_default_modules()
    registered = {name for name in app.tasks if not name.startswith("celery.")}
    assert registered == EXPECTED


def test_each_name_runs_its_function():
    app.loader.import_default_modules()
    assert app.tasks["leaderboard.tasks.grade_run"].run.__name__ == "grade_run"
    assert app.tasks["leaderboard.tasks.grade_snapshot"].run.__name__ == "grade_snapshot"
    assert app.tasks["leaderboard.intake.import_intake"].run.__name__ == "import_intake"
    assert app.tasks["leaderboard.trust.review_run"].run.__name__ == "review_run_task"
    assert app.tasks["runner.tasks.sweep"].run.__name__ == "sweep"
    assert app.tasks["runner.research.compute_baseline"].run.__name__ == "compute_baseline"
    assert app.tasks["runner.research.score_trace"].run.__name__ == "score_trace"
