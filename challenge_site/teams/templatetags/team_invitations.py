"""An invitee's pending invitations, shown where they look (the challenge's page, the
profile), not only on the team page they have no reason to open."""

from django import template
from django.utils import timezone

from challenge_site.teams.models import Invitation

register = template.Library()


def open_invitations(*, user, challenge=None, now=None):
    """The invitations ``user`` can still answer: teams form until the test phase begins,
    so one in a challenge past that is no longer a question (the team page says why)."""
    if not user.is_authenticated:
        return []
    now = now or timezone.now()
    invitations = Invitation.objects.filter(user=user, team__challenge__test_start__gt=now)
    if challenge is not None:
        invitations = invitations.filter(team__challenge=challenge)
    return list(invitations.select_related("team__challenge", "invited_by").order_by("-created"))


@register.simple_tag(takes_context=True)
def pending_invitations(context, challenge=None):
    """``{% pending_invitations challenge as invitations %}`` (or without ``challenge``:
    every challenge's), for the request's user; one query, none when logged out."""
    return open_invitations(user=context["request"].user, challenge=challenge)
