from django.apps import AppConfig


class AnnouncementsConfig(AppConfig):
    name = "challenge_site.announcements"
    label = "announcements"
    verbose_name = "Announcements"

    def ready(self):
        from challenge_site.mailing import services as outbox

        from . import services

        # The e-mail goes out through the shared outbox, which sends it by this kind.
        outbox.register(services.EMAIL)
