"""GET/POST /api/v1/challenges/<slug>/team/: the caller's team, and the same actions as
the team page (create, join by code, invite, answer an invitation, new link, leave)."""

from django.urls import reverse
from django.utils import timezone
from rest_framework import status
from rest_framework.decorators import api_view, permission_classes
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from challenge_site.access import get_visible_or_404
from challenge_site.challenges.models import Challenge
from challenge_site.challenges.policy import visible_challenges

from . import services
from .models import Invitation


def _text(request, name: str) -> str:
    value = request.data.get(name, "")
    return value.strip() if isinstance(value, str) else ""


def invitation_id(value) -> int:
    """An invitation's id as sent (a number or its digits); 0, which is none, otherwise."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value if 0 < value < 2**63 else 0
    text = str(value).strip()
    return int(text) if text.isascii() and text.isdigit() and len(text) < 19 else 0


def state(request, challenge: Challenge, *, now) -> dict:
    team = services.team_of(user=request.user, challenge=challenge)
    invitations = Invitation.objects.filter(
        user=request.user, team__challenge=challenge
    ).select_related("team")
    body = {
        "challenge": challenge.slug,
        "max_team_size": challenge.max_team_size,
        "forming": services.forming_refusal(challenge, now=now) is None,
        "refusal": services.forming_refusal(challenge, now=now),
        "team": None,
        "invitations": [
            {"id": i.pk, "team": i.team.name, "members": i.team.members_label} for i in invitations
        ],
    }
    if team is not None:
        members = team.memberships.select_related("user__profile")
        body["team"] = {
            "name": team.name,
            "label": team.label,
            "members": [
                {"username": m.user.get_username(), "name": services.member_name(m.user)}
                for m in members
            ],
            "invite_code": team.invite_code,
            "invite_url": request.build_absolute_uri(
                reverse("team_join", args=[challenge.slug, team.invite_code])
            ),
        }
    return body


def _act(request, challenge: Challenge, *, now) -> None:
    action = _text(request, "action")
    user = request.user
    if action == "create":
        services.create(challenge=challenge, user=user, name=_text(request, "name"), now=now)
    elif action == "join":
        services.join_by_code(challenge=challenge, code=_text(request, "code"), user=user, now=now)
    elif action in ("invite", "new_link", "leave"):
        team = services.team_of(user=user, challenge=challenge)
        if team is None:
            raise services.TeamError("You are in no team of this challenge.")
        if action == "invite":
            services.invite(team=team, by=user, username=_text(request, "username"), now=now)
        elif action == "new_link":
            services.new_link(team=team, by=user, now=now)
        else:
            services.leave(team=team, user=user, now=now)
    elif action in ("accept", "decline"):
        invitation = Invitation.objects.filter(
            pk=invitation_id(request.data.get("invitation", "")),
            user=user,
            team__challenge=challenge,
        ).first()
        if invitation is None:
            raise services.TeamError("That invitation is no longer open.")
        services.respond(invitation=invitation, user=user, accept=action == "accept", now=now)
    else:
        raise services.TeamError(
            "action must be one of create, join, invite, accept, decline, new_link, leave"
        )


@api_view(["GET", "POST"])
@permission_classes([IsAuthenticated])
def api_team(request, slug):
    """GET: {"team": {name, label, members, invite_url} or null, "invitations", …};
    POST {"action": …}: the state after the action, or 400 {"detail": why not}."""
    now = timezone.now()
    challenge = get_visible_or_404(visible_challenges, user=request.user, now=now, slug=slug)
    if request.method == "POST":
        if not hasattr(request.data, "get"):
            return Response(
                {"detail": 'expected an object: {"action": …}'}, status=status.HTTP_400_BAD_REQUEST
            )
        try:
            _act(request, challenge, now=now)
        except services.TeamError as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
    return Response(state(request, challenge, now=now))
