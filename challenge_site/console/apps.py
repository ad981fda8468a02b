from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    name = "challenge_site.console"
    label = "console"
    verbose_name = "Organisers' console"
