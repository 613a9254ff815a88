"""A run's trajectory file can be replaced while a page reads it (a runner's live file is swapped for
the imported one when the run ends): pages and the API read the new file instead of failing."""

from __future__ import annotations

from leaderboard.models import Agent, Experiment, LanguageModel, Run
from leaderboard.trajectories.importers.base import StepData
from leaderboard.trajectories.store import StoredTrajectory, write_steps


def steps(label: str, n: int = 3):
    return (StepData(index=i, kind="plan", title=f"{label} {i}", text=f"{label} step {i}") for i in range(n))


def test_pages_read_the_new_file_when_the_old_one_was_replaced(db, client, monkeypatch,
                                                                 django_capture_on_commit_callbacks):
    experiment = Experiment.objects.create(agent=Agent.objects.create(name="a"),
                                           model=LanguageModel.objects.create(name="m"))
    run = Run.objects.create(experiment=experiment, task_name="t", status=Run.Status.RUNNING)
    with django_capture_on_commit_callbacks(execute=True):
        write_steps(run, steps("live"))
    stale = StoredTrajectory.of(run)
    with django_capture_on_commit_callbacks(execute=True):  # the old file is deleted on commit
        write_steps(run, steps("final"))

    original_of = StoredTrajectory.of.__func__
    for url in (f"/runs/{run.pk}/steps/?after=0", f"/api/runs/{run.pk}/steps/", f"/runs/{run.pk}/"):
        calls = []

        def of(cls, r, calls=calls):
            calls.append(r.pk)
            return stale if len(calls) == 1 else original_of(cls, r)

        monkeypatch.setattr(StoredTrajectory, "of", classmethod(of))
        response = client.get(url)
        assert response.status_code == 200, url
        body = response.content.decode()
        assert "final step 1" in body and "live step" not in body, url
        assert len(calls) == 2  # the stale index failed, a fresh one was read
