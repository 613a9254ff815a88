from pathlib import Path

from django.apps import AppConfig


class LeaderboardConfig(AppConfig):
    name = "leaderboard"
    verbose_name = "Leaderboard"

    def ready(self) -> None:
        from leaderboard.analysis import page_cache
        from leaderboard.trust.similarity import counts  # noqa: F401 - connects its post_delete receiver

        page_cache.connect()
        _make_folders()


def _make_folders() -> None:
    """The folders the site writes to before anything else would create them: the spool of large
    uploads, and the embedded broker's (kombu expects its folders to exist)."""
    from django.conf import settings

    folders = [settings.FILE_UPLOAD_TEMP_DIR]
    if settings.CELERY_BROKER_URL.startswith("filesystem"):
        folders += [value for key, value in settings.CELERY_BROKER_TRANSPORT_OPTIONS.items()
                    if key.endswith("_folder") or key.startswith("data_folder")]
    for folder in folders:
        Path(folder).mkdir(parents=True, exist_ok=True)
