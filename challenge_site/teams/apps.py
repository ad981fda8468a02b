from django.apps import AppConfig


class TeamsConfig(AppConfig):
    name = "challenge_site.teams"
    label = "teams"
    verbose_name = "Teams"

    def ready(self):
        from django.db.models.signals import post_save

        from challenge_site.accounts.models import Profile

        from . import services

        def follow_rename(sender, instance, **kwargs):
            # The result tables name a team's members: a renamed member's teams follow.
            services.refresh_labels_of(instance.user)

        post_save.connect(
            follow_rename, sender=Profile, weak=False, dispatch_uid="teams.follow_rename"
        )
