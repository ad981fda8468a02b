from django.apps import AppConfig


class LeaderboardConfig(AppConfig):
    name = "challenge_site.leaderboard"
    label = "leaderboard"
    verbose_name = "Leaderboards"

    def ready(self):
        from django.db.models.signals import post_delete

        from challenge_site.challenges import signals as challenge_signals
        from challenge_site.challenges.models import Challenge
        from challenge_site.submissions import signals

        from . import receivers, tasks  # noqa: F401 - tasks: registers the Celery tasks
        from .models import BoardExport

        signals.listing_changed.connect(receivers.listing_changed, dispatch_uid="leaderboard.best")
        signals.boards_stale.connect(receivers.boards_stale, dispatch_uid="leaderboard.stale")
        signals.intervals_stale.connect(
            receivers.intervals_stale, dispatch_uid="leaderboard.intervals"
        )
        for signal in (
            challenge_signals.options_changed,
            challenge_signals.results_published_changed,
        ):
            signal.connect(
                receivers.shown_entries_changed, sender=Challenge, dispatch_uid="leaderboard.shown"
            )
        # Also on a dataset's deletion (cascades send post_delete per row): its files go.
        post_delete.connect(
            receivers.export_deleted, sender=BoardExport, dispatch_uid="leaderboard.export_file"
        )
