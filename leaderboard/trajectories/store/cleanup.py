"""A trajectory's file and its search index go with its row, once the deletion commits (a rollback keeps
both). Connected in LeaderboardConfig.ready."""

from __future__ import annotations

from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models.signals import post_delete

from leaderboard.models import Trajectory
from leaderboard.trajectories.store.writing import delete_file


def connect() -> None:
    post_delete.connect(_delete_trajectory_file, sender=Trajectory, dispatch_uid="trajectory-file")


def _delete_trajectory_file(sender, instance: Trajectory, **kwargs) -> None:
    name = instance.file
    if name:
        transaction.on_commit(lambda: delete_file(default_storage, name))
