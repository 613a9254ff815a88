"""The query language and its exact meaning (docs/search.md):

    cuda memory          both words, as whole words, any case
    tok*                 a word that starts with "tok"
    "out of memory"      this exact text, any case (a phrase, or anything pasted: "KeyError: 'id'")
    train.csv  'id'      a bare term with punctuation is exact text too

Every term must match. `Query.spans(text)` is the check every candidate row passes, and gives the
places to highlight; the engines only narrow the rows it is applied to."""

from __future__ import annotations

import re
from dataclasses import dataclass

from leaderboard.search.text import WORD, WORD_CHARS, fold, words

MAX_QUERY = 500
MAX_TERMS = 12
TERM = re.compile(r'"([^"]*)"?|(\S+)')


class QueryError(ValueError):
    """A query the search cannot run, with a message for the person who typed it."""


@dataclass(frozen=True)
class Term:
    kind: str  # "word", "prefix" or "exact"
    value: str  # folded

    def spans(self, folded: str, tokens: list[tuple[int, int, str]]) -> list[tuple[int, int]]:
        if self.kind == "word":
            return [(a, b) for a, b, w in tokens if w == self.value]
        if self.kind == "prefix":
            return [(a, b) for a, b, w in tokens if w.startswith(self.value)]
        found, at = [], folded.find(self.value)
        while at >= 0:
            found.append((at, at + len(self.value)))
            at = folded.find(self.value, at + len(self.value))
        return found


@dataclass(frozen=True)
class Query:
    terms: tuple[Term, ...]

    def spans(self, text: str) -> list[tuple[int, int]] | None:
        """The sorted places where the terms match in `text`, or None unless every term matches."""
        folded = fold(text)
        if any(t.value not in folded for t in self.terms):  # every kind of term is a substring first
            return None
        tokens = list(words(folded)) if any(t.kind != "exact" for t in self.terms) else []
        found = []
        for term in self.terms:
            spans = term.spans(folded, tokens)
            if not spans:
                return None
            found += spans
        return sorted(found)


def parse(raw: str) -> Query:
    if len(raw) > MAX_QUERY:
        raise QueryError(f"the query is {len(raw)} characters; at most {MAX_QUERY}")
    terms = []
    for quoted, bare in TERM.findall(raw):
        term = _term(quoted, exact=True) if quoted or bare == "" else _term(bare, exact=False)
        if term is not None and term not in terms:
            terms.append(term)
    if not terms:
        raise QueryError("type a word, a prefix (tok*) or \"exact text\" to search for")
    if len(terms) > MAX_TERMS:
        raise QueryError(f"the query has {len(terms)} terms; at most {MAX_TERMS}")
    return Query(tuple(terms))


def _term(raw: str, exact: bool) -> Term | None:
    value = fold(raw)
    if not value.strip():
        return None
    if exact:
        return Term("exact", value)
    if value.endswith("*") and _is_word(value[:-1]):
        return Term("prefix", value[:-1])
    return Term("word", value) if _is_word(value) else Term("exact", value)


def _is_word(value: str) -> bool:
    return 0 < len(value) <= WORD_CHARS and WORD.fullmatch(value) is not None
