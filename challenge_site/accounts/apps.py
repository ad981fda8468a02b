from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "challenge_site.accounts"
    label = "accounts"
    verbose_name = "Accounts"
