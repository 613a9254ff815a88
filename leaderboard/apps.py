from django.apps import AppConfig


class LeaderboardConfig(AppConfig):
    name = "leaderboard"
    verbose_name = "Leaderboard"

    def ready(self) -> None:
        from leaderboard.analysis import page_cache

        page_cache.connect()
