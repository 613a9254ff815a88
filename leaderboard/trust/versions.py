"""A competition's versions: a maintainer marks what runs are graded on as changed (a leaky split
fixed, answers corrected), with a note saying what changed.

Runs keep the version they were graded on (Run.competition_version, set when a score is stored), so
results of the old version stay on the board as they were, in rows of their own
(leaderboard.analysis.versions), and runs graded from now on count on the new version. Saving the
competition raises the leaderboard's cache version (leaderboard.analysis.page_cache), so no page
goes on showing the old labels.
"""

from __future__ import annotations

from django.db import transaction

from leaderboard.models import Competition, CompetitionVersion

MAX_NOTE = 10_000


class VersionError(ValueError):
    """The version cannot be changed as asked; the message says why."""


@transaction.atomic
def bump_version(*, competition: Competition, note: str, user=None) -> CompetitionVersion:
    """Raise the competition's version by one, recording why and by whom; returns the new version's row."""
    note = (note or "").strip()
    if not note:
        raise VersionError("say what changed: a version change needs a note")
    if len(note) > MAX_NOTE:
        raise VersionError(f"the note is longer than {MAX_NOTE} characters")
    locked = Competition.objects.select_for_update().get(pk=competition.pk)  # two bumps never share a number
    locked.version += 1
    locked.save(update_fields=["version"])
    competition.version = locked.version
    return CompetitionVersion.objects.create(competition=locked, version=locked.version, note=note,
                                             created_by=user if getattr(user, "is_authenticated", False) else None)


def history(competition: Competition) -> list[CompetitionVersion]:
    """The competition's versions after the first, newest first."""
    return list(competition.versions.select_related("created_by").order_by("-version"))
