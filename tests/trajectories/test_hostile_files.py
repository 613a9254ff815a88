"""Small hostile files stay cheap: 100,000 nested brackets have no JSON shape
instead of costing minutes, real formats are still detected, and a huge tar member is refused from
its header."""

from __future__ import annotations

import pytest

from leaderboard.trajectories.importers import detect
from leaderboard.trajectories.importers.base import MAX_JSON_DEPTH, json_shape, nesting_depth
from tests.trajectories.import_support import TRAJECTORIES_DIR


@pytest.mark.parametrize("text", [b"[" * 100_000 + b"]" * 100_000, b'{"a":' * 50_000 + b"1" + b"}" * 50_000])
def test_deeply_nested_json_has_no_shape(tmp_path, text):
    assert json_shape(text[: 1 << 20]) is None
    path = tmp_path / "journal.json"
    path.write_bytes(text)
    assert detect(path) is None


@pytest.mark.parametrize(("text", "depth"), [
    (b"{}", 1), (b"[[1], [2, [3]]]", 3), (b'{"a": "[[[[[[", "b": ["]]]"]}', 2), (b'"\\"[[["', 0),
    (b'[{"x": "\\\\"}, [[]]]', 3), (b"[[[", 3),
])
def test_nesting_depth_ignores_brackets_in_strings(text, depth):
    assert nesting_depth(text) == depth


def test_real_trajectories_are_still_detected():
    assert detect(TRAJECTORIES_DIR / "aide" / "translucent-spaniel_journal.json") == "aide"
    assert detect(TRAJECTORIES_DIR / "openhands" / "basic_gui_mode.json") == "openhands"
    assert nesting_depth((TRAJECTORIES_DIR / "openhands" / "basic_gui_mode.json").read_bytes()) < MAX_JSON_DEPTH


def test_a_tar_member_too_large_is_refused_from_its_header(alice, catalogue, settings):
    """A 20 GB member in a small .tar.gz: refused from the size its header claims, before any of it
    is inflated (the archive below holds the header and a few bytes only)."""
    import gzip
    import io
    import tarfile

    from django.core.files.base import ContentFile

    from leaderboard.runs.artifacts import UploadError
    from tests.runs.test_submission import submit

    info = tarfile.TarInfo("run/logs/huge.log")
    info.size = 20 * 1024**3
    archive = gzip.compress(info.tobuf() + b"x" * 1024)
    with pytest.raises(UploadError, match="limit"):
        submit(alice, submission=ContentFile(archive, name="run.tar.gz"))
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tf:
        for n in range(5):
            member = tarfile.TarInfo(f"run/logs/{n}.log")
            member.size = 600
            tf.addfile(member, io.BytesIO(b"y" * 600))
    settings.MAX_UPLOAD_BYTES = 2000
    with pytest.raises(UploadError, match="limit"):
        submit(alice, submission=ContentFile(buffer.getvalue(), name="run.tar.gz"))
