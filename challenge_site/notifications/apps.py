from django.apps import AppConfig


class NotificationsConfig(AppConfig):
    name = "challenge_site.notifications"
    label = "notifications"
    verbose_name = "Notifications"

    def ready(self):
        from django.db.models.signals import post_save

        from challenge_site.challenges.models import ChallengeEvent
        from challenge_site.mailing import services as outbox
        from challenge_site.submissions import signals

        from . import results, scoring, tasks  # noqa: F401 - registers the Celery tasks

        # The results e-mail goes out through the shared outbox, which sends it by this kind.
        outbox.register(results.EMAIL)
        # Every publication (the admin's action, import_challenge, code calling
        # publish_results) is recorded as a ChallengeEvent by challenges.services: the one
        # place to start from.
        post_save.connect(
            results.on_challenge_event,
            sender=ChallengeEvent,
            dispatch_uid="notifications.results_published",
        )
        signals.scoring_finished.connect(
            scoring.on_scoring_finished, dispatch_uid="notifications.scoring_finished"
        )
