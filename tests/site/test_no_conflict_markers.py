"""No file the project tracks holds a merge's conflict markers: a merge that left them shipped them
on every research table once, and the page tests passed (they looked for the cells, not the markers)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Built from pieces so this file does not hold what it looks for.
MARKER = re.compile(rb"^(" + b"<" * 7 + rb"|" + b">" * 7 + rb")( |$)|^" + b"=" * 7 + rb"$", re.M)
SKIP_DIRS = {".git", ".venv", "var", "node_modules", "__pycache__"}


def _tracked_files() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
        return [ROOT / p.decode() for p in out.split(b"\0") if p]
    except (OSError, subprocess.CalledProcessError):  # not a git checkout (an archive): walk the tree
        return [p for p in ROOT.rglob("*") if p.is_file() and not SKIP_DIRS & set(p.relative_to(ROOT).parts)]


def conflicted(paths) -> list[str]:
    found = []
    for path in paths:
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if b"\0" in data[:8192]:  # binary
            continue
        for m in MARKER.finditer(data):
            line = data.count(b"\n", 0, m.start()) + 1
            found.append(f"{path.relative_to(ROOT)}:{line}")
    return found


def test_no_tracked_file_holds_conflict_markers():
    assert conflicted(_tracked_files()) == []


def test_the_check_finds_markers(tmp_path, monkeypatch):
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    bad = tmp_path / "page.html"
    bad.write_bytes(b"<td>\n" + b"<" * 7 + b" HEAD\na\n" + b"=" * 7 + b"\nb\n" + b">" * 7 + b" new21\n</td>\n")
    good = tmp_path / "notes.md"
    good.write_bytes(b"Title\n=====\n<<< not a marker\n")
    assert conflicted([bad, good]) == ["page.html:2", "page.html:4", "page.html:6"]
