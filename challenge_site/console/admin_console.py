"""The challenge's admin page as a console: its form (co-organisers added by exact user
name) and the links to everything that runs the challenge."""

import copy
import re

from django import forms
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone

from challenge_site.challenges import admin_ranking
from challenge_site.challenges.models import Challenge
from challenge_site.challenges.services import check_publication
from challenge_site.submissions.bulk import export_links


class ChallengeForm(forms.ModelForm):
    """The challenge, and co-organisers added by their exact user names: the choices of
    the organisers field list only the current ones (and the user), not every account of
    the site."""

    add_organisers = forms.CharField(
        required=False,
        label="Add organisers",
        help_text="Exact user names, separated by spaces or commas; each gets staff status "
        "to reach this console.",
    )

    class Meta:
        model = Challenge
        fields = [
            "slug",
            "title",
            "description",
            "rules",
            "organisers",
            "organiser_groups",
            "require_rules_acceptance",
            "require_approval",
            "start",
            "test_start",
            "deadline",
            "test_inputs_release",
            "test_targets_release",
            "val_daily_limit",
            "test_daily_limit",
            "test_total_limit",
            *admin_ranking.FIELDS,
        ]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name in admin_ranking.FIELDS:
            # A form posted without an option (a script, an older page) keeps its value.
            if self.is_bound and name not in self.data:
                self.fields[name].required = False

    def clean(self):
        cleaned = super().clean()
        admin_ranking.check_options(self, cleaned)
        self._check_publication(cleaned)
        return cleaned

    def _check_publication(self, cleaned) -> None:
        """Published results keep their deadline in the past (services.check_publication,
        at the moment of the request): withdraw them first to move it into the future."""
        if cleaned.get("deadline") is None:
            return
        challenge = copy.copy(self.instance)
        challenge.deadline = cleaned["deadline"]
        try:
            check_publication(challenge=challenge, now=timezone.now())
        except ValidationError as error:
            self.add_error(None, error)

    def clean_add_organisers(self):
        names = [name for name in re.split(r"[\s,]+", self.cleaned_data["add_organisers"]) if name]
        users = {
            user.get_username(): user
            for user in User.objects.filter(username__in=names, is_active=True)
        }
        unknown = [name for name in names if name not in users]
        if unknown:
            raise forms.ValidationError(f"No active account named {', '.join(unknown)}.")
        return list(users.values())


def console_links(challenge: Challenge, site: str) -> list[tuple[str, str]]:
    """(URL, label) of the pages that run ``challenge``: its entries, participants, news,
    statistics, exports and its page on the site."""

    def admin_list(model: str, query: str = "") -> str:
        return reverse(f"admin:{model}_changelist", current_app=site) + query

    mine = f"?challenge={challenge.pk}"
    return [
        (admin_list("submissions_submission", mine), "Submissions"),
        (admin_list("challenges_participant", mine), "Participants"),
        (admin_list("announcements_announcement", mine), "Announcements"),
        (
            reverse("admin:announcements_announcement_add", current_app=site) + mine,
            "Post news",
        ),
        (reverse("challenge_statistics", args=[challenge.slug]), "Statistics"),
        *((url, label) for label, url in export_links(challenge)),
        (reverse("challenge_detail", args=[challenge.slug]), "Its pages on the site"),
    ]
