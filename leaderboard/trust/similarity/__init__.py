"""Code similarity between runs: fingerprints of each run's code, stored with an inverted index, and
the pairs they find.

    index_run(run)                       # fingerprint, compare within the competition, keep pairs, flag
    add_reference(competition=..., label=..., name=..., code=...)   # a maintainer's reference file
    matches_for(run, user)               # closest runs (visible to user) and reference files
    side_by_side(run, other=run_b)       # matching regions and their similarity (the diff page)
    code_of(run)                         # the run's code texts, bounded

tokens.py normalises code (identifiers, literals, comments), winnowing.py fingerprints it,
extraction.py reads a run's code under a byte budget, index.py stores and compares, counts.py keeps
how many runs hold each hash (boilerplate is what too many hold), regions.py maps shared hashes back
to lines, reading.py serves a run's matches, models.py holds fingerprints, postings, counts, pairs and
reference code.
"""

from __future__ import annotations

from django.db import transaction

from leaderboard.trust.similarity.extraction import Source, code_of, notebook_code
from leaderboard.trust.similarity.index import CHECK_NAME, Candidate, index_reference, index_run, side_by_side
from leaderboard.trust.similarity.reading import Match, matches_for
from leaderboard.trust.similarity.regions import Comparison, compare

__all__ = ["CHECK_NAME", "Candidate", "Comparison", "Match", "Source", "add_reference", "code_of", "compare",
           "index_reference", "index_run", "matches_for", "notebook_code", "side_by_side"]


def add_reference(*, competition, label: str, name: str, code: str, added_by=None):
    """Register a reference file for a competition and compare it with the runs there."""
    from leaderboard.trust.similarity.models import ReferenceCode

    with transaction.atomic():
        reference = ReferenceCode.objects.create(competition=competition, label=label, name=name, code=code,
                                                 added_by=added_by)
        index_reference(reference)
    return reference
