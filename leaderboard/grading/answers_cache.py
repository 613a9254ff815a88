"""A small per-process cache of parsed answers files.

A grading worker grades many runs of the same competition, and the answers never change between
them, so it parses each answers file once, indexes it by id once (the index keeps its hash table),
and only reads the submission after that. Entries are keyed by the file's path, size and
modification time, so an edited or replaced answers file is read again. The cache lives in the
worker's memory only; nothing is written anywhere. MEDALBOARD_ANSWERS_CACHE_SIZE (default 4) is the
number of answers files kept; 0 turns the cache off.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

import pandas as pd

_entries: OrderedDict[tuple, pd.DataFrame] = OrderedDict()
_lock = threading.Lock()


def capacity() -> int:
    try:
        return max(0, int(os.environ.get("MEDALBOARD_ANSWERS_CACHE_SIZE", "4")))
    except ValueError:
        return 4


def load(path: Path, variant: tuple, read: Callable[[], pd.DataFrame]) -> pd.DataFrame:
    """The answers frame for `path` read as `variant` describes (id column, targets, ...)."""
    size = capacity()
    if size == 0:
        return read()
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns, variant)
    with _lock:
        if key in _entries:
            _entries.move_to_end(key)
            return _entries[key]
    frame = read()
    with _lock:
        _entries[key] = frame
        while len(_entries) > size:
            _entries.popitem(last=False)
    return frame


def clear() -> None:
    with _lock:
        _entries.clear()
