"""The reproductions section of an experiment's page: the Reproduce button (for staff and the
owner, on experiments run by jobs), and each reproduction side by side with the original."""

from __future__ import annotations

from leaderboard.models import Competition, Experiment, Run
from leaderboard.trust import reproductions


def context(experiment: Experiment, runs: list[Run], user) -> dict:
    """What experiment.html's reproductions section reads; `runs` are the experiment's visible runs."""
    found = reproductions.reproductions_of(experiment, user)
    ids = {row.competition_id for _, assessment in found for row in assessment.rows}
    competitions = Competition.objects.in_bulk(ids)
    return {
        "reproducible": reproductions.can_be_reproduced(runs),
        "may_reproduce": reproductions.may_reproduce(user, experiment),
        "reproduces": reproductions.visible_original(experiment, user),
        "reproductions": [(reproduction, assessment, [(competitions[row.competition_id], row)
                                                      for row in assessment.rows])
                          for reproduction, assessment in found],
    }
