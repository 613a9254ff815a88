"""Generated steps whose text is drawn from the real public trajectories (../shared/data/trajectories),
for the search and ingest benchmarks: each generated step takes a real step as its pattern (kind,
title, the shape of its data) and fills each of its strings with as many lines, taken from a random
place in all the real steps' lines, as the real string had. So the steps have the real trajectories'
mix of kinds, sizes (about 1 KB a step), words, code, paths and tracebacks, without repeating one
run over and over. Not real results: a benchmark's load.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterator
from pathlib import Path

from leaderboard.trajectories.importers.base import StepData

TRAJECTORIES = Path(__file__).resolve().parents[3] / "shared" / "data" / "trajectories"
FILES = [
    "aide/translucent-spaniel_journal.json",
    "mlagentbench/gemini-pro_cifar10_0_trace.json",
    "openhands/basic_gui_mode.json",
    "swe-agent/6e44b9__sweagenttestrepo-1c2844.traj",
    "inspect/log_read_sample.json",
    "inspect/2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval",
]
SHORT = 80  # strings up to this long (names, paths, numbers as text) are kept as the real step had them


@functools.cache
def real_steps() -> tuple[list[StepData], list[str]]:
    """The real steps, and every line of their strings (the pool generated strings are taken from)."""
    from leaderboard.trajectories.importers import read_trajectories

    steps: list[StepData] = []
    for name in FILES:
        for parsed in read_trajectories(TRAJECTORIES / name):
            steps += list(parsed.steps)
    lines = [line for s in steps for text in _long_strings(s) for line in text.split("\n")]
    if not steps or not lines:
        raise RuntimeError(f"no real trajectories under {TRAJECTORIES}")
    return steps, lines


def _long_strings(step: StepData) -> list[str]:
    found = [step.text] if len(step.text) > SHORT else []

    def walk(value) -> None:
        if isinstance(value, str):
            if len(value) > SHORT:
                found.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(step.data)
    return found


class Generator:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.patterns, self.lines = real_steps()

    def _string(self, like: str) -> str:
        if len(like) <= SHORT:
            return like
        n = like.count("\n") + 1
        at = self.rng.randrange(max(1, len(self.lines) - n))
        return "\n".join(self.lines[at : at + n])

    def _data(self, value):
        if isinstance(value, str):
            return self._string(value)
        if isinstance(value, dict):
            return {k: self._data(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._data(v) for v in value]
        return value

    def steps(self, n: int, needles: dict[int, str] | None = None) -> Iterator[StepData]:
        """n steps; `needles` maps a step index to a line added to that step's text (the rare terms a
        benchmark looks for, so it knows how many there are)."""
        for i in range(n):
            like = self.rng.choice(self.patterns)
            text = self._string(like.text)
            if needles and i in needles:
                text = f"{text}\n{needles[i]}" if text else needles[i]
            yield StepData(index=i, kind=like.kind, title=like.title, text=text, data=self._data(like.data))
