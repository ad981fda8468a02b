from django.apps import AppConfig


class MailingConfig(AppConfig):
    name = "challenge_site.mailing"
    label = "mailing"
    verbose_name = "Mailing"

    def ready(self):
        from . import tasks  # noqa: F401 - registers the Celery task
