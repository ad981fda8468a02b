"""Teams: participants who submit to a challenge as one.

A team belongs to one challenge; a user is in at most one team per challenge
(``Membership.challenge`` is kept only for that constraint). Members join until the test
phase begins (challenge_site.teams.services); an entry made by a member carries its team
(``Submission.team``), and the team is then its participant: one name on the boards, one
set of limits, one set of final entries.
"""

import secrets

from django.conf import settings
from django.db import models
from django.db.models.functions import Lower

from challenge_site.challenges.models import Challenge


def new_invite_code() -> str:
    """128 random bits in hex: never starting with "-", which a command line would read
    as an option (`puc team … join CODE`)."""
    return secrets.token_hex(16)


class Team(models.Model):
    challenge = models.ForeignKey(Challenge, on_delete=models.CASCADE, related_name="teams")
    name = models.CharField(max_length=80)
    created = models.DateTimeField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Whoever holds the link may join (services.join_by_code); a member can replace it.
    invite_code = models.CharField(max_length=32, unique=True, default=new_invite_code)
    # "Zadrozny, B & Langford, J": the members as the result tables list them, kept by
    # services.refresh_label whenever a member joins, leaves or renames themself.
    members_label = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            # Names are unique in a challenge whatever their case (one name per row).
            models.UniqueConstraint(
                "challenge", Lower("name"), name="team_unique_name_per_challenge"
            ),
        ]

    def __str__(self):
        return self.name

    @property
    def label(self) -> str:
        return f"{self.name} ({self.members_label})" if self.members_label else self.name


class Membership(models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="team_memberships"
    )
    challenge = models.ForeignKey(Challenge, on_delete=models.CASCADE, related_name="+")
    joined = models.DateTimeField()

    class Meta:
        ordering = ["joined", "pk"]
        constraints = [
            # One team per user and challenge; also the index behind "the user's team in
            # this challenge" (WHERE challenge AND user).
            models.UniqueConstraint(
                fields=["challenge", "user"], name="membership_one_team_per_challenge"
            ),
        ]
        indexes = [
            # submissions.policy.owned_q: WHERE user (the teams a user is in, over every challenge).
            models.Index(fields=["user"], name="membership_user_idx"),
        ]

    def __str__(self):
        return f"{self.user} in {self.team}"


class Invitation(models.Model):
    """A member invited a user by name; the invitee accepts or declines on the team page."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="invitations")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="team_invitations"
    )
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created = models.DateTimeField()

    class Meta:
        ordering = ["-created", "-pk"]
        constraints = [
            models.UniqueConstraint(fields=["team", "user"], name="invitation_unique_team_user"),
        ]
        indexes = [
            # The invitee's pending invitations: WHERE user.
            models.Index(fields=["user"], name="invitation_user_idx"),
        ]

    def __str__(self):
        return f"{self.user} invited to {self.team}"
