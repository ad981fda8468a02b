from django.apps import AppConfig


class ChallengesConfig(AppConfig):
    name = "challenge_site.challenges"
    label = "challenges"
    verbose_name = "Challenges"
