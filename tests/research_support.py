"""Research tasks in tests: a task's own eval.py loaded as a module."""

from __future__ import annotations

import importlib.util
from pathlib import Path


def load_eval(task_dir: Path):
    """A task's scripts/eval.py as a module of its own (each task's has its own settings)."""
    spec = importlib.util.spec_from_file_location(f"eval_{task_dir.name.replace('-', '_')}",
                                                  task_dir / "scripts" / "eval.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
