"""GET/POST /api/v1/challenges/<slug>/team/: the caller's team, and the same actions as
the team page (create, join by code, invite, answer an invitation, new link, leave)."""

from django.urls import reverse
from django.utils import timezone
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import api_view, permission_classes
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from challenge_site.access import get_visible_or_404
from challenge_site.api_schema import errors
from challenge_site.challenges.models import Challenge
from challenge_site.challenges.policy import visible_challenges

from . import services
from .models import Invitation

ACTIONS = ("create", "join", "invite", "accept", "decline", "new_link", "leave")


class TeamActionSerializer(serializers.Serializer):
    """POST's body (the OpenAPI description only: _act reads it)."""

    action = serializers.ChoiceField(choices=ACTIONS)
    name = serializers.CharField(required=False, help_text="create: the team's name")
    code = serializers.CharField(required=False, help_text="join: the invitation code")
    username = serializers.CharField(required=False, help_text="invite: whom")
    invitation = serializers.IntegerField(required=False, help_text="accept, decline: its id")


class _Member(serializers.Serializer):
    username = serializers.CharField()
    name = serializers.CharField()


class _Team(serializers.Serializer):
    name = serializers.CharField()
    label = serializers.CharField()
    members = _Member(many=True)
    invite_code = serializers.CharField()
    invite_url = serializers.URLField()


class _Invitation(serializers.Serializer):
    id = serializers.IntegerField()
    team = serializers.CharField()
    members = serializers.CharField()


class TeamStateSerializer(serializers.Serializer):
    challenge = serializers.SlugField()
    max_team_size = serializers.IntegerField()
    forming = serializers.BooleanField()
    refusal = serializers.CharField(allow_null=True, help_text="why teams cannot form now")
    team = _Team(allow_null=True)
    invitations = _Invitation(many=True)


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


@extend_schema(
    methods=["GET"],
    operation_id="team_retrieve",
    summary="Your team in a challenge",
    responses={200: TeamStateSerializer, **errors(401, 404, 429)},
)
@extend_schema(
    methods=["POST"],
    operation_id="team_act",
    summary="Create, join, invite, answer, new link, leave",
    request=TeamActionSerializer,
    responses={200: TeamStateSerializer, **errors(400, 401, 404, 429)},
    examples=[
        OpenApiExample("create", {"action": "create", "name": "Gaussians"}, request_only=True),
        OpenApiExample("join", {"action": "join", "code": "k3Jd9xQ"}, request_only=True),
        OpenApiExample(
            "refused",
            {"detail": "You are in no team of this challenge."},
            status_codes=["400"],
            response_only=True,
        ),
    ],
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
