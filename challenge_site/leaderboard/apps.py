from django.apps import AppConfig


class LeaderboardConfig(AppConfig):
    name = "challenge_site.leaderboard"
    label = "leaderboard"
    verbose_name = "Leaderboards"

    def ready(self):
        from . import tasks  # noqa: F401 - registers the Celery tasks
