"""Helpers for the search tests (no tests here): runs with steps, and a brute-force scan of the
stored steps that shares nothing with the engines but the definition of a step's text."""

from __future__ import annotations

import random
import re

from leaderboard.models import Agent, Experiment, LanguageModel, Run
from leaderboard.search.text import WORD_CHARS, step_text
from leaderboard.trajectories.importers.base import StepData
from leaderboard.trajectories.store import StoredTrajectory, write_steps


def make_run(*, owner=None, private=False, agent="agent-a", model="model-a", competition=None, **fields) -> Run:
    agent_row, _ = Agent.objects.get_or_create(name=agent, version="1")
    model_row, _ = LanguageModel.objects.get_or_create(name=model)
    experiment, _ = Experiment.objects.get_or_create(agent=agent_row, model=model_row, name=f"{agent} x {model}")
    return Run.objects.create(experiment=experiment, owner=owner, is_private=private, competition=competition,
                              **fields)


def steps_of(texts: list[tuple[str, str]]) -> list[StepData]:
    """(kind, text) pairs -> steps; a code step keeps its text as data.content as well."""
    steps = []
    for i, (kind, text) in enumerate(texts):
        data = {"file": "main.py", "content": text} if kind == "code" else {}
        steps.append(StepData(index=i, kind=kind, title=f"step {i}", text="" if kind == "code" else text, data=data))
    return steps


def run_with(texts: list[tuple[str, str]], **kwargs) -> Run:
    run = make_run(**kwargs)
    write_steps(run, steps_of(texts))
    return run


VOCABULARY = ["error", "errors", "KeyError", "memory", "CUDA", "out", "of", "train", "train.csv", "/kaggle/input",
              "loss", "0.4312", "epoch", "Épée", "naïve", "tokenizer", "token", "'id'", "<script>", "a&b", "x_y",
              "lr=1e-3", "accuracy", "model", "fit()", "ValueError:", "not", "found"]


def generated_texts(seed: int, n: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    kinds = ["plan", "code", "observation", "error", "command"]
    return [(rng.choice(kinds), " ".join(rng.choice(VOCABULARY) for _ in range(rng.randint(0, 14)))) for _ in range(n)]


WORD = re.compile(r"[^\W_]+")


def scan_matches(text: str, terms: list[tuple[str, str]]) -> bool:
    """The query's meaning, written out plainly: words and prefixes against the lower-cased words of
    the text, exact terms as substrings of the lower-cased text."""
    low = text.lower()
    tokens = {w for w in WORD.findall(low) if len(w) <= WORD_CHARS}
    for kind, value in terms:
        value = value.lower()
        if kind == "word" and value not in tokens:
            return False
        if kind == "prefix" and not any(t.startswith(value) for t in tokens):
            return False
        if kind == "exact" and value not in low:
            return False
    return True


def brute_force(runs, terms: list[tuple[str, str]], kind: str = "") -> list[tuple[int, int]]:
    """(run id, step index) of every stored step that matches, newest run first, steps in order."""
    found = []
    for run in sorted(runs, key=lambda r: -r.pk):
        for step in StoredTrajectory.of(run).steps():
            if (not kind or step.kind == kind) and scan_matches(step_text(step.title, step.text, step.data), terms):
                found.append((run.pk, step.index))
    return found


def all_hits(user, query: str, **filters) -> list[tuple[int, int]]:
    """Every hit of a search, following its cursor to the end."""
    from leaderboard.search.service import Filters, search

    found, cursor = [], ""
    while True:
        page = search(user=user, query=query, filters=Filters(**filters), cursor=cursor, size=7)
        found += [(g.run.pk, h.index) for g in page.groups for h in g.hits]
        if page.next_cursor is None:
            return found
        cursor = page.next_cursor
