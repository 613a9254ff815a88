"""A request killed mid-upload leaves files with no row and a scratch folder; the sweep deletes them
once they are older than the grace period, and never a file a row names."""

from __future__ import annotations

import os
import time

import pytest
from django.core.cache import cache
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from leaderboard.models import Artifact
from leaderboard.runs.orphans import stored_names, sweep_orphans, sweep_orphans_when_due
from tests.runs.test_submission import submit
from tests.trajectories.import_support import TRAJECTORIES_DIR

DAY = 24 * 3600


def _age(path, seconds: float) -> None:
    past = time.time() - seconds
    os.utime(path, (past, past))


@pytest.fixture
def kept_run(alice, catalogue, settings, tmp_path):
    from django.core.files import File

    settings.MEDIA_ROOT = tmp_path / "media"  # a storage of this test's own: no other test's leftovers
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path / "upload-tmp")
    (tmp_path / "upload-tmp").mkdir()
    with (TRAJECTORIES_DIR / "aide" / "translucent-spaniel_journal.json").open("rb") as journal:
        run = submit(alice, trajectory_files=[File(journal, name="journal.json")])
    for name in stored_names():
        if default_storage.exists(name):
            _age(default_storage.path(name), 2 * DAY)  # old, but named by rows: never deleted
    return run


def test_old_files_no_row_names_are_deleted_and_named_ones_kept(kept_run, tmp_path, settings):
    settings.ORPHAN_GRACE_S = DAY
    tmp_path = tmp_path / "scratch"
    tmp_path.mkdir()
    old = default_storage.save("runs/2026/01/killed-mid-upload.csv", ContentFile(b"a,b\n"))
    young = default_storage.save("trajectories/run-999999/steps.jsonl", ContentFile(b"{}\n"))
    _age(default_storage.path(old), 2 * DAY)
    scratch_old, scratch_young, other = (tmp_path / "medalboard-upload-abc", tmp_path / "medalboard-upload-new",
                                         tmp_path / "someone-elses")
    for folder in (scratch_old, scratch_young, other):
        (folder / "archive").mkdir(parents=True)
    _age(scratch_old, 2 * DAY)
    _age(other, 2 * DAY)

    counts = sweep_orphans(scratch=tmp_path)

    assert counts == {"orphan_files_deleted": 1, "scratch_folders_deleted": 1}
    assert not default_storage.exists(old) and default_storage.exists(young)
    assert not scratch_old.exists() and scratch_young.exists() and other.exists()
    named = [a.file.name for a in Artifact.objects.filter(run=kept_run)] + [kept_run.trajectory.file]
    assert named and all(default_storage.exists(name) for name in named)
    default_storage.delete(young)


def test_a_trajectorys_search_index_is_never_an_orphan(kept_run, tmp_path, settings):
    from leaderboard.trajectories.store.search_index import index_name

    settings.ORPHAN_GRACE_S = DAY
    index = index_name(kept_run.trajectory.file)
    _age(default_storage.path(index), 2 * DAY)
    sweep_orphans(scratch=tmp_path / "scratch")
    assert default_storage.exists(index)


def test_the_worker_sweep_runs_it_at_most_once_an_interval(db, settings, tmp_path, monkeypatch):
    cache.clear()
    calls = []
    monkeypatch.setattr("leaderboard.runs.orphans.sweep_orphans",
                        lambda: calls.append(1) or {"orphan_files_deleted": 9})
    from webapp.maintenance import sweep

    assert sweep()["orphan_files_deleted"] == 9
    assert sweep()["orphan_files_deleted"] == 0  # not due: zero, the same keys
    assert calls == [1]
    cache.clear()
    assert sweep_orphans_when_due() == {"orphan_files_deleted": 9} and calls == [1, 1]
    cache.clear()


def test_staged_uploads_of_a_killed_request_are_deleted_after_the_grace(kept_run, alice, tmp_path, settings):
    """The request stages files under intake/ before it creates the row naming them: killed in
    between, the files have no row. Old ones go; young ones and those of a waiting intake stay."""
    from leaderboard.models import RunIntake

    settings.ORPHAN_GRACE_S = DAY
    killed = default_storage.save("intake/0123abcd/0000", ContentFile(b"a,b\n"))
    uploading = default_storage.save("intake/4567ef01/0000", ContentFile(b"a,b\n"))
    waiting = default_storage.save("intake/89abcdef/0000", ContentFile(b"a,b\n"))
    RunIntake.objects.create(owner=alice, files=[{"kind": "submission", "name": "s.csv", "path": waiting}])
    for name in (killed, waiting):
        _age(default_storage.path(name), 2 * DAY)
    (tmp_path / "scratch").mkdir()

    assert sweep_orphans(scratch=tmp_path / "scratch")["orphan_files_deleted"] == 1
    assert not default_storage.exists(killed)
    assert default_storage.exists(uploading) and default_storage.exists(waiting)


def test_a_spooled_upload_of_a_killed_request_is_deleted_after_the_grace(kept_run, tmp_path, settings):
    """Django spools a large upload to FILE_UPLOAD_TEMP_DIR while it reads the request; killed, it stays."""
    settings.ORPHAN_GRACE_S = DAY
    spool = tmp_path / "upload-tmp"
    old, young = spool / "tmpabc123.upload.tar.gz", spool / "tmpdef456.upload.csv"
    for path in (old, young):
        path.write_bytes(b"half an upload")
    _age(old, 2 * DAY)
    (tmp_path / "scratch").mkdir()

    assert sweep_orphans(scratch=tmp_path / "scratch")["orphan_files_deleted"] == 1
    assert not old.exists() and young.exists()
