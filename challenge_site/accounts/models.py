from django.conf import settings
from django.db import models


class Profile(models.Model):
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="profile"
    )
    display_name = models.CharField(
        max_length=100, blank=True, help_text="Shown in result tables; your user name if empty."
    )
    affiliation = models.CharField(max_length=200, blank=True)
    # E-mail notifications (challenge_site.notifications): off until the participant asks.
    email_on_scoring_finished = models.BooleanField(
        "E-mail me when a submission of mine has finished scoring",
        default=False,
        help_text="Scored, invalid or failed: one e-mail per submission and outcome, telling "
        "what the submission's page shows you (hidden test scores stay hidden).",
    )
    email_on_results_published = models.BooleanField(
        "E-mail me when a challenge I submitted to publishes its results",
        default=False,
        help_text="One e-mail per challenge, with links to its results and leaderboards.",
    )

    def __str__(self):
        return self.display_name or self.user.get_username()
