"""A module fixture's result made once per test session, though pytest-xdist may run the module's tests
on several workers: the first worker that asks builds it in a folder every worker shares (the parent of
their base temporary folders, as pytest-xdist's documentation suggests for session data), under a lock,
and leaves it pickled there; a worker asking later waits for the lock and reads it back. Without xdist
it is built in the session's own temporary folder. Only for results the tests read and never change."""

from __future__ import annotations

import fcntl
import os
import pickle
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def once_per_session(tmp_path_factory, name: str, build: Callable[[Path], T]) -> T:
    """`build(folder)`'s result; `folder` is the shared folder for its files, named `name`."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder, result_file = shared / name, shared / f"{name}.pickle"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if result_file.exists():
            return pickle.loads(result_file.read_bytes())
        shutil.rmtree(folder, ignore_errors=True)  # what an earlier, failed build left
        folder.mkdir()
        result = build(folder)  # a failure leaves no result: the next worker to ask builds it again
        partial = shared / f"{name}.pickle.partial"
        partial.write_bytes(pickle.dumps(result))
        partial.replace(result_file)
        return result
