"""How many runs of a competition hold each hash (CodeHashCount), kept as run fingerprints come
and go (a fingerprint leaving takes its counts with it: the post_delete receiver below, connected when the
app is ready), and which of a fingerprint's hashes are common enough to be boilerplate.

Each change is two statements per batch of hashes (insert the missing rows with 0, then add or
subtract 1 in one UPDATE), so concurrent indexing of two runs never loses a count."""

from __future__ import annotations

from collections.abc import Sequence

from django.conf import settings
from django.db.models import F
from django.db.models.signals import post_delete
from django.dispatch import receiver

from leaderboard.trust.similarity.models import CodeFingerprint, CodeHashCount

BATCH = 900  # hashes per statement: SQLite binds at most 32,766 parameters, Django batches fewer


def _batches(hashes: Sequence[int]):
    values = [int(h) for h in hashes]
    for i in range(0, len(values), BATCH):
        yield values[i:i + BATCH]


def add(competition_id: int, hashes: Sequence[int]) -> None:
    for batch in _batches(hashes):
        CodeHashCount.objects.bulk_create((CodeHashCount(competition_id=competition_id, hash=h) for h in batch),
                                          ignore_conflicts=True)
        CodeHashCount.objects.filter(competition_id=competition_id, hash__in=batch).update(runs=F("runs") + 1)


def remove(competition_id: int, hashes: Sequence[int]) -> None:
    for batch in _batches(hashes):
        rows = CodeHashCount.objects.filter(competition_id=competition_id, hash__in=batch)
        rows.update(runs=F("runs") - 1)
        rows.filter(runs__lte=0).delete()


def common(competition_id: int, hashes: Sequence[int]) -> set[int]:
    """The hashes more than SIMILARITY_COMMON_RUNS runs of the competition hold."""
    found: set[int] = set()
    for batch in _batches(hashes):
        found.update(CodeHashCount.objects.filter(competition_id=competition_id, hash__in=batch,
                                                  runs__gt=settings.SIMILARITY_COMMON_RUNS)
                     .values_list("hash", flat=True))
    return found


@receiver(post_delete, sender=CodeFingerprint)
def _uncount(sender, instance: CodeFingerprint, **kwargs) -> None:
    """A run's fingerprint leaves the counts with it, however it goes (indexed again, the run deleted)."""
    if instance.run_id is not None and instance.size:
        remove(instance.competition_id, instance.hash_array().tolist())
