"""Fingerprints in, matches out: storing a fingerprint with its postings, finding the stored
fingerprints that share its hashes, and keeping the closest pairs and the flags.

Similarity is containment: shared hashes / the smaller fingerprint's size (at least MIN_HASHES).
Jaccard (shared / union) would call a copied solution inside a larger run dissimilar, since the
run's other code swells the union; containment says how much of the smaller code is in the larger,
which is what copying looks like. The floor keeps a few lines from scoring 1.0 against any big run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import Count, Q

from leaderboard.models import Run
from leaderboard.trust.models import Finding
from leaderboard.trust.similarity import counts, extraction, regions, tokens, winnowing
from leaderboard.trust.similarity.models import CodeFingerprint, CodeMatch, CodePosting, ReferenceCode
from leaderboard.trust.similarity.regions import Comparison

CHECK_NAME = "code-similarity"
MIN_HASHES = 20  # the least denominator: a file of a few lines is not "all copied" for one shared stretch


@dataclass(frozen=True)
class Candidate:
    fingerprint: int
    run: int | None
    reference: int | None
    shared: int
    similarity: float


def similarity(shared: int, size_a: int, size_b: int) -> float:
    return shared / max(min(size_a, size_b), MIN_HASHES) if shared else 0.0


def hashes_of(texts: Iterable[str]) -> np.ndarray:
    """The distinct kept hashes of these texts, sorted, as int64 (each text fingerprinted alone, so no
    k-gram spans two files)."""
    found: set[int] = set()
    for text in texts:
        found.update(mark.hash for mark in winnowing.fingerprint([t.symbol for t in tokens.normalised(text)]))
    return np.array(sorted(found), dtype=np.int64)


def store(*, competition_id: int, hashes: np.ndarray, run: Run | None = None,
          reference: ReferenceCode | None = None, sources: Sequence[extraction.Source] = ()) -> CodeFingerprint:
    """Replace the run's (or reference's) fingerprint, postings and counts with these."""
    owner = {"run": run} if run is not None else {"reference": reference}
    CodeFingerprint.objects.filter(**owner).delete()  # and its counts (similarity.counts._uncount)
    fp = CodeFingerprint.objects.create(
        **owner, competition_id=competition_id, size=len(hashes), hashes=hashes.astype("<i8").tobytes(),
        code_bytes=sum(len(s.text.encode("utf-8", "replace")) for s in sources),
        sources=[{"label": s.label, "step": s.step, "artifact": s.artifact} for s in sources],
    )
    CodePosting.objects.bulk_create(
        (CodePosting(competition_id=competition_id, hash=int(h), fingerprint=fp, is_reference=reference is not None)
         for h in hashes), batch_size=2000)
    if run is not None:
        counts.add(competition_id, hashes.tolist())
    return fp


def candidates(fp: CodeFingerprint, hashes: np.ndarray) -> list[Candidate]:
    """Every other stored fingerprint of the competition sharing a hash with this one, with the
    similarity. Between runs, hashes more than SIMILARITY_COMMON_RUNS runs hold do not count and
    their postings are not read, so the cost is bounded by the fingerprint's size times that
    number, however many runs are stored; with reference code every shared hash counts."""
    values = hashes.tolist()
    if fp.reference_id is not None:  # a maintainer's file: every run sharing any of it
        shared = _count(fp, values, is_reference=False)
    else:
        common = counts.common(fp.competition_id, values)
        shared = _count(fp, [h for h in values if h not in common])
        shared.update(_count(fp, sorted(common), is_reference=True))
    others = CodeFingerprint.objects.filter(pk__in=list(shared)).values_list("pk", "run_id", "reference_id", "size")
    return [Candidate(pk, run_id, ref_id, shared[pk], similarity(shared[pk], fp.size, size))
            for pk, run_id, ref_id, size in others]


def _count(fp: CodeFingerprint, values: list[int], is_reference: bool | None = None) -> Counter[int]:
    """Postings of these hashes per fingerprint (other than fp), in batches; only references' or
    only runs' postings when `is_reference` says."""
    shared: Counter[int] = Counter()
    for i in range(0, len(values), counts.BATCH):
        rows = CodePosting.objects.filter(competition_id=fp.competition_id, hash__in=values[i:i + counts.BATCH])
        if is_reference is not None:
            rows = rows.filter(is_reference=is_reference)
        rows = rows.exclude(fingerprint_id=fp.pk).values("fingerprint_id").annotate(n=Count("id")).order_by()
        shared.update({row["fingerprint_id"]: row["n"] for row in rows})
    return shared


def closest(found: Iterable[Candidate]) -> list[Candidate]:
    """The pairs a run keeps: at least SIMILARITY_MIN_SHOWN, the SIMILARITY_TOP_MATCHES best of the
    runs (ties by run id) and every reference above the floor."""
    kept = sorted((c for c in found if c.similarity >= settings.SIMILARITY_MIN_SHOWN),
                  key=lambda c: (-c.similarity, c.run or 0, c.reference or 0))
    runs = [c for c in kept if c.run is not None][: settings.SIMILARITY_TOP_MATCHES]
    return runs + [c for c in kept if c.reference is not None]


@transaction.atomic
def index_run(run: Run) -> list[Candidate]:
    """Fingerprint the run's code, store it, compare it with the competition's other runs and its
    reference code, keep the closest pairs and flag those above SIMILARITY_THRESHOLD. Idempotent:
    indexing again replaces the run's fingerprint and every pair it is in. A run outside the catalogue
    has no competition to compare within and is not indexed."""
    affected = set(CodeMatch.objects.filter(Q(run=run) | Q(other=run)).values_list("run_id", "other_id"))
    CodeMatch.objects.filter(Q(run=run) | Q(other=run)).delete()
    others = {i for pair in affected for i in pair if i and i != run.pk}
    if run.competition_id is None:
        CodeFingerprint.objects.filter(run=run).delete()
        _refresh_flags(run, others)
        return []
    sources = extraction.code_of(run)
    hashes = hashes_of(s.text for s in sources)
    fp = store(competition_id=run.competition_id, hashes=hashes, run=run, sources=sources)
    kept = closest(candidates(fp, hashes))
    CodeMatch.objects.bulk_create(
        CodeMatch(run=run, other_id=c.run, reference_id=c.reference, shared=c.shared, similarity=c.similarity)
        for c in kept)
    _refresh_flags(run, others | {c.run for c in kept if c.run})
    return kept


@transaction.atomic
def index_reference(reference: ReferenceCode) -> list[Candidate]:
    """Fingerprint a reference file and pair it with every run of its competition that shares code."""
    hashes = hashes_of([reference.code])
    CodeMatch.objects.filter(reference=reference).delete()
    fp = store(competition_id=reference.competition_id, hashes=hashes, reference=reference,
               sources=[extraction.Source(reference.name, reference.code)])
    found = [c for c in candidates(fp, hashes) if c.run is not None and c.similarity >= settings.SIMILARITY_MIN_SHOWN]
    CodeMatch.objects.bulk_create(
        CodeMatch(run_id=c.run, reference=reference, shared=c.shared, similarity=c.similarity) for c in found)
    for run in Run.objects.filter(pk__in={c.run for c in found}).only("pk", "created_at"):
        flag(run)
    return found


# --- flags ---------------------------------------------------------------------------------------


def _refresh_flags(run: Run, paired: set[int]) -> None:
    """The flags a change of the run's pairs can change: its own, and those of the paired runs newer
    than it (a run's flag comes from its pairs with older runs only)."""
    flag(run)
    newer = Q(created_at__gt=run.created_at) | Q(created_at=run.created_at, pk__gt=run.pk)
    for other in Run.objects.filter(newer, pk__in=paired).only("pk", "created_at"):
        flag(other)


def flag(run: Run) -> Finding | None:
    """The run's code-similarity finding, from its pairs above the threshold where it is the newer
    run (the later one copied, if anyone did) or the other side is reference code. A run of the same
    experiment (another seed of one agent, model and configuration) is shown as similar, never flagged:
    one agent writing alike code twice is not copying. A finding staff reviewed keeps its decision; an
    open one whose pairs went away goes too."""
    above = [m for m in _pairs_of(run)
             if m["similarity"] >= settings.SIMILARITY_THRESHOLD and m["newer"] and not m["same_experiment"]]
    if not above:
        Finding.objects.filter(run=run, check_name=CHECK_NAME, status=Finding.Status.OPEN).delete()
        return None
    top = above[0]
    what = f"run {top['run']}" if top["run"] is not None else f"reference code “{top['reference_label']}”"
    summary = f"{top['similarity']:.0%} of the smaller code base matches {what}"
    evidence = {"run": top["run"], "reference": top["reference"], "similarity": round(top["similarity"], 4),
                "matches": [{k: m[k] for k in ("run", "reference", "similarity", "shared")} for m in above]}
    finding, _ = Finding.objects.update_or_create(
        run=run, check_name=CHECK_NAME,
        defaults={"severity": Finding.Severity.WARNING, "summary": summary, "evidence": evidence,
                  "steps": matching_steps(run, top)})
    return finding


def _pairs_of(run: Run) -> list[dict]:
    rows = (CodeMatch.objects.filter(Q(run=run) | Q(other=run))
            .select_related("run", "other", "reference").order_by("-similarity", "pk"))
    pairs = []
    for m in rows:
        other = m.other if m.run_id == run.pk else m.run
        pairs.append({
            "run": other.pk if other is not None else None, "reference": m.reference_id,
            "reference_label": m.reference.label if m.reference is not None else "",
            "similarity": m.similarity, "shared": m.shared,
            "newer": other is None or (run.created_at, run.pk) > (other.created_at, other.pk),
            "same_experiment": other is not None and run.experiment_id is not None
            and other.experiment_id == run.experiment_id,
        })
    return pairs


def side_by_side(run: Run, *, other: Run | None = None, reference: ReferenceCode | None = None) -> Comparison:
    """The matching regions of the run's code and the other run's (or the reference file's), and
    their similarity as the index computes it: between runs, boilerplate hashes do not count."""
    left = extraction.code_of(run)
    right = extraction.code_of(other) if other is not None else [extraction.Source(reference.name, reference.code)]
    ignore = set()
    if other is not None and run.competition_id is not None:
        ignore = counts.common(run.competition_id, np.union1d(hashes_of(s.text for s in left),
                                                              hashes_of(s.text for s in right)).tolist())
    found = regions.compare(left, right, ignore)
    found.similarity = similarity(found.shared, *found.sizes)
    return found


def matching_steps(run: Run, pair: dict) -> list[int]:
    """Indexes of the run's code steps that hold a hash of the matched code, for the finding's links."""
    other = CodeFingerprint.objects.filter(
        **({"run_id": pair["run"]} if pair["run"] is not None else {"reference_id": pair["reference"]})).first()
    if other is None:
        return []
    theirs = set(other.hash_array().tolist())
    if pair["run"] is not None:
        theirs -= counts.common(run.competition_id, sorted(theirs))
    return sorted({s.step for s in extraction.code_of(run) if s.step is not None
                   and theirs.intersection(hashes_of([s.text]).tolist())})
