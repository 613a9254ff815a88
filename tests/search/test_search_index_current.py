"""The search index follows every change of the stored steps and runs: an import, a re-import, a
live run's new steps, an edit that makes a run private, a deletion; `index_search` builds it for
runs stored before it existed."""

from __future__ import annotations

from django.core.management import call_command

from leaderboard.models import Run
from leaderboard.runs.submission import delete_run, update_run
from leaderboard.search.models import StepText
from leaderboard.trajectories.importers import read_trajectories, save_steps
from leaderboard.trajectories.store import LiveTrajectory, write_steps
from tests.conftest import TRAJECTORIES_DIR
from tests.search.support import all_hits, make_run, run_with, steps_of


def test_import_then_reimport(db):
    run = make_run()
    for parsed in read_trajectories(TRAJECTORIES_DIR / "aide" / "translucent-spaniel_journal.json"):
        save_steps(run, parsed)
    run.refresh_from_db()
    assert StepText.objects.filter(run=run).count() == run.n_steps > 0
    before = all_hits(None, "import")
    assert before
    write_steps(run, steps_of([("plan", "a zebra crossing")]))
    assert all_hits(None, "import") == []
    assert all_hits(None, "zebra") == [(run.pk, 0)]
    assert StepText.objects.filter(run=run).count() == 1


def test_live_steps_are_searchable_as_they_arrive(db, settings, tmp_path):
    run = make_run(status=Run.Status.RUNNING)
    live = LiveTrajectory(run)
    try:
        live.append(steps_of([("plan", "first idea"), ("error", "CUDA out of memory")]))
        assert all_hits(None, '"out of memory"') == [(run.pk, 1)]
        live.append(steps_of([("plan", "x"), ("plan", "x"), ("error", "another out of memory")])[1:])
        assert all_hits(None, '"out of memory"') == [(run.pk, 1), (run.pk, 3)]  # stored at 2 and 3
    finally:
        live.close()


def test_edit_to_private_and_delete(db, alice, bob):
    run = run_with([("error", "ValueError: zanzibar")], owner=alice)
    assert all_hits(bob, "zanzibar") == [(run.pk, 0)]
    update_run(run=run, user=alice, notes="", is_private=True)
    assert all_hits(bob, "zanzibar") == []
    assert all_hits(None, "zanzibar") == []
    assert all_hits(alice, "zanzibar") == [(run.pk, 0)]
    delete_run(run=run, user=alice)
    assert all_hits(alice, "zanzibar") == []
    assert not StepText.objects.exists()


def test_runs_stored_before_search_are_indexed_by_the_command(db):
    run = run_with([("plan", "quokka one"), ("code", "quokka = 2")])
    StepText.objects.all().delete()  # as a site that stored runs before search existed
    assert all_hits(None, "quokka") == []
    call_command("index_search", stdout=open("/dev/null", "w"))  # noqa: SIM115
    assert all_hits(None, "quokka") == [(run.pk, 0), (run.pk, 1)]
    call_command("index_search", "--all", stdout=open("/dev/null", "w"))  # noqa: SIM115
    assert StepText.objects.count() == 2
