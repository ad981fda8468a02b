from django.apps import AppConfig


class AnnouncementsConfig(AppConfig):
    name = "challenge_site.announcements"
    label = "announcements"
    verbose_name = "Announcements"

    def ready(self):
        from . import tasks  # noqa: F401 - registers the Celery task
