"""`create_runner NAME --token-file PATH` (what `make run` gives its loopback runner): the token goes
into a file only its user can read, never to the output, and each call rotates it."""

from __future__ import annotations

import io
import os

from django.core.management import call_command

from runner.api_v1 import tokens


def test_the_token_goes_into_a_0600_file_and_a_new_one_replaces_it(db, tmp_path):
    path = tmp_path / "var" / "loopback-runner.token"
    path.parent.mkdir()
    path.write_text("an older file, readable by all\n")
    os.chmod(path, 0o644)
    out = io.StringIO()
    call_command("create_runner", "loopback", "--token-file", str(path), stdout=out, stderr=out)
    first = path.read_text().strip()
    assert path.stat().st_mode & 0o777 == 0o600
    assert tokens.runner_for(first).name == "loopback"
    assert first not in out.getvalue() and str(path) in out.getvalue()
    call_command("create_runner", "loopback", "--token-file", str(path), stdout=out, stderr=out)
    second = path.read_text().strip()
    assert second != first and tokens.runner_for(first) is None and tokens.runner_for(second).name == "loopback"
    assert sorted(p.name for p in path.parent.iterdir()) == ["loopback-runner.token"]  # no partial file left
