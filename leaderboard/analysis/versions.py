"""Which runs of one seed count together, when a competition's version changed.

Every run records the version of its competition it was graded on (Run.competition_version). Results
of different versions of a competition are never averaged together: a seed's runs on a split form
one state per *version signature*, the versions its counted runs were graded on (only those other
than 1 are named, so a site without version changes has the one signature "" and nothing else).

The runs come oldest first; each updates the latest run of its competition, as always (the latest
run of a competition counts). When a run changes the signature (a run of a new version arrives), the
state is copied before it changes, so the state of the old signature stays as it last was: a rerun
on version 2 starts a row of its own and leaves the version-1 row exactly as it was. Each signature
keeps its last state, which is a state the seed really passed through (never a mixture made up of
versions that were never counted together).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, TypeVar


class Versioned(Protocol):
    competition_id: int
    competition_version: int


R = TypeVar("R", bound=Versioned)


def signature(versions: dict[int, int]) -> str:
    """"<competition id>:<version>,..." of the competitions counted on a version other than 1."""
    return ",".join(f"{c}:{v}" for c, v in sorted(versions.items()) if v != 1)


def parse(text: str) -> dict[int, int]:
    """signature's inverse: competition id -> version (1 for every competition not named)."""
    pairs = (part.split(":") for part in text.split(",") if part)
    return {int(c): int(v) for c, v in pairs}


class SeedStates:
    """The states of one seed on one split: feed its runs oldest first with `add`."""

    __slots__ = ("current", "versions", "key", "states", "firsts")

    def __init__(self) -> None:
        self.current: dict[int, Versioned] = {}
        self.versions: dict[int, int] = {}  # competition -> version of its latest run, where not 1
        self.key = ""  # signature(self.versions), kept: most runs change no version
        self.states: dict[str, dict[int, Versioned]] = {}  # signature -> competition -> latest run
        self.firsts: dict[str, Versioned] = {}  # signature -> the run that first gave it

    def add(self, run: Versioned) -> None:
        if self.versions or run.competition_version != 1 or not self.states:
            return self._add(run)
        self.current[run.competition_id] = run  # the common case: all on version 1, states[""] is current
        return None

    def _add(self, run: Versioned) -> None:
        version = run.competition_version
        if self.versions.get(run.competition_id, 1) != version:
            # A new signature: the old one's state must stay as it was, so change a copy.
            self.current = dict(self.current)
            self.versions = {**self.versions, run.competition_id: version}
            if version == 1:
                del self.versions[run.competition_id]
            self.key = signature(self.versions)
        self.current[run.competition_id] = run
        self.states[self.key] = self.current
        if self.key not in self.firsts:
            self.firsts[self.key] = run


def by_signature(runs: Iterable[R]) -> dict[str, dict[int, R]]:
    """signature -> competition id -> the run counted, for one seed's runs (oldest first)."""
    states = SeedStates()
    for run in runs:
        states.add(run)
    return states.states  # type: ignore[return-value]


def label(text: str, slugs: dict[int, str], current: dict[int, int] | None = None) -> str:
    """The versions a row used, in words: "spaceship-titanic v2"; also, from `current` (competition id ->
    its version now), "v1" for the competitions changed since whose version-1 results the row holds."""
    named = parse(text)
    for competition_id, now in (current or {}).items():
        if now != 1:
            named.setdefault(competition_id, 1)
    return ", ".join(f"{slugs.get(c, c)} v{v}" for c, v in sorted(named.items(), key=lambda cv: str(slugs.get(cv[0]))))
