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
from challenge_site.challenges.models import Challenge, format_utc
from challenge_site.challenges.policy import in_console
from challenge_site.challenges.publication import described, exposure
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
    confirm_new_organisers = forms.BooleanField(
        required=False,
        label="Confirm the new organisers",
        help_text="Asked when an account named above has no staff status yet: it gets "
        "access to the admin and to this challenge's hidden scores and files.",
    )
    confirm_publication_time = forms.BooleanField(
        required=False,
        label="Confirm the automatic publication",
        help_text="Asked when the time of the automatic publication is set or moved, after "
        "listing what becomes public then.",
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
            "publish_results_at",
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
        self._check_new_organisers(cleaned)
        self._check_publication_time(cleaned)
        return cleaned

    def _check_publication_time(self, cleaned) -> None:
        """An automatic publication is set only once the organiser has seen what it makes
        public, as "Publish results…" shows it before a manual one."""
        at = cleaned.get("publish_results_at")
        if at is None or "publish_results_at" not in self.changed_data:
            return
        if cleaned.get("confirm_publication_time"):
            return
        challenge = copy.copy(self.instance)
        for name in ("deadline", "test_targets_release"):
            if cleaned.get(name) is not None:
                setattr(challenge, name, cleaned[name])
        if challenge.pk is None:  # nothing to count before the challenge is saved
            text = f"On {format_utc(at)} the results become public for everyone."
        else:
            text = described(exposure(challenge, now=timezone.now()), at=at)
        self.add_error(
            "confirm_publication_time",
            f"{text} Tick “Confirm the automatic publication” and save again.",
        )

    def _check_new_organisers(self, cleaned) -> None:
        """Staff status is given only after the organiser has seen whom it goes to."""
        newcomers = [user for user in cleaned.get("add_organisers") or [] if not in_console(user)]
        if newcomers and not cleaned.get("confirm_new_organisers"):
            listed = "; ".join(_described(user) for user in newcomers)
            self.add_error(
                "confirm_new_organisers",
                f"These accounts get staff status and see this challenge's hidden scores and "
                f"files: {listed}. Tick “Confirm the new organisers” and save again.",
            )

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


def _described(user: User) -> str:
    """The user name with its display name, e-mail and joining date: enough to tell a
    look-alike account from the colleague meant."""
    profile = getattr(user, "profile", None)
    details = [getattr(profile, "display_name", "") or user.get_full_name(), user.email]
    details.append(f"joined {user.date_joined:%-d %b %Y}")
    return f"{user.get_username()} ({', '.join(d for d in details if d)})"


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
