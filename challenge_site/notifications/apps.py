from django.apps import AppConfig


class NotificationsConfig(AppConfig):
    name = "challenge_site.notifications"
    label = "notifications"
    verbose_name = "Notifications"

    def ready(self):
        from django.db.models.signals import post_save

        from challenge_site.challenges.models import ChallengeEvent

        from . import results, tasks  # noqa: F401 - registers the Celery tasks

        # Every publication, whoever makes it (admin action, import_challenge, code), is
        # recorded as a ChallengeEvent by Challenge.save: the one place to start from.
        post_save.connect(
            results.on_challenge_event,
            sender=ChallengeEvent,
            dispatch_uid="notifications.results_published",
        )
