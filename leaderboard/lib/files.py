"""Writing generated files idempotently: the builders of smoke competitions and research tasks."""

from __future__ import annotations

from pathlib import Path


def write_if_changed(path: Path, text: str) -> bool:
    """Write only a changed file (through a temporary file and a rename), so a second build leaves files,
    and their modification times, as they were; whether it wrote."""
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8", newline="")
    temporary.replace(path)
    return True
