"""A competition's public data (what a sandbox mounts: ROOT/<id>/prepared/public/), listed on its page
and downloadable file by file.

Only files inside the registered public folder are served, after resolving links, so `..`, a symlink
that leads out, or a public folder that (by a bad import) holds a registered answers file never
serve a private answer: those paths are refused as if absent."""

from __future__ import annotations

from pathlib import Path

from django.core.exceptions import ObjectDoesNotExist
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from leaderboard.models import Competition

MAX_ENTRIES = 200  # a folder of 50,000 images is listed by its first entries and a count


def public_root(competition: Competition) -> Path | None:
    root = Path(competition.public_data_dir) if competition.public_data_dir else None
    return root.resolve() if root is not None and root.is_dir() else None


def _private_paths(competition: Competition) -> set[Path]:
    try:
        answers = competition.answers
    except ObjectDoesNotExist:
        return set()
    paths = (answers.answers_path, answers.gold_submission_path)
    return {Path(p).resolve() for p in paths if p}


def resolve(competition: Competition, relative: str) -> Path | None:
    """The file or folder `relative` names inside the public folder, or None: outside it, missing, or
    one of the competition's private answers."""
    root = public_root(competition)
    if root is None or "\x00" in relative:
        return None
    try:
        target = (root / relative).resolve()
        if not target.is_relative_to(root) or not target.exists() or target in _private_paths(competition):
            return None
    except (OSError, RuntimeError, ValueError):  # a name too long for the file system, a link loop: no such file
        return None
    return target


def entries(competition: Competition, folder: Path) -> dict:
    """A folder's entries (folders first, then files, by name), at most MAX_ENTRIES of them."""
    root, private = public_root(competition), _private_paths(competition)
    children = sorted(folder.iterdir(), key=lambda p: (not p.is_dir(), p.name.lower()))
    children = [p for p in children if _inside(p, root, private)]
    shown = [{"name": p.name, "path": p.relative_to(root).as_posix(), "is_dir": p.is_dir(),
              "size": None if p.is_dir() else p.stat().st_size} for p in children[:MAX_ENTRIES]]
    return {"entries": shown, "n_entries": len(children), "truncated": len(children) > MAX_ENTRIES}


def _inside(path: Path, root: Path, private: set[Path]) -> bool:
    """Whether an entry of a public folder is shown: it stays inside the root and is no private answer
    (an entry whose link cannot be resolved, a loop, is not)."""
    try:
        target = path.resolve()
    except (OSError, RuntimeError):
        return False
    return target.is_relative_to(root) and target not in private


def listing(competition: Competition) -> dict | None:
    """The public folder's top level for the competition page; None when no public data is here."""
    root = public_root(competition)
    return entries(competition, root) if root is not None else None


def public_file(request: HttpRequest, slug: str, path: str = "") -> HttpResponse:
    competition = get_object_or_404(Competition, slug=slug)
    target = resolve(competition, path)
    if target is None:
        raise Http404("no such public data file")
    if target.is_dir():
        return render(request, "leaderboard/public_data.html", {
            "competition": competition, "folder": path.strip("/"), **entries(competition, target)})
    return FileResponse(target.open("rb"), as_attachment=True, filename=target.name,
                        content_type="application/octet-stream")
