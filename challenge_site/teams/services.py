"""Forming teams: create, invite, join (by invitation or link), leave.

Teams form until the test phase begins; from then on a team's members are fixed, so
final selections, the test limits and the final ranking have one participant each.
Joining moves the joiner's earlier entries in the challenge to the team, so it is refused
when the team and the joiner together would be over a submission limit.

What a join means for the entries is the submissions app's (teams.signals, answered by
submissions.team_entries): the joiner's quota rows are locked before the team's row, the
order ``submissions.services.submit`` uses, so a join and an upload never wait for each
other in a circle.
"""

from __future__ import annotations

import unicodedata
from datetime import datetime

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction

from challenge_site.challenges import policy
from challenge_site.challenges.clock import current_phase
from challenge_site.challenges.models import Challenge, Phase

from . import signals
from .models import Invitation, Membership, Team, new_invite_code

FORMING = (Phase.UPCOMING, Phase.VALIDATION)
NAME_MAX = Team._meta.get_field("name").max_length
# Invitations by name a team may have waiting at once (a link serves many more).
INVITATIONS_MAX = 20


class TeamError(Exception):
    """Why a team action was refused, in words for the participant."""


def team_of(*, user, challenge: Challenge) -> Team | None:
    if not user.is_authenticated:
        return None
    membership = (
        Membership.objects.filter(challenge=challenge, user=user).select_related("team").first()
    )
    return membership.team if membership else None


def forming_refusal(challenge: Challenge, *, now: datetime) -> str | None:
    """Why teams cannot form or change now (None: they can)."""
    if challenge.max_team_size <= 1:
        return "This challenge has no teams: everyone takes part alone."
    if current_phase(challenge, now=now) not in FORMING:
        return (
            f"Teams form until the test phase begins ({challenge.test_start:%d %b %Y %H:%M} "
            "UTC); they are fixed now."
        )
    return None


def _check_forming(challenge: Challenge, *, now: datetime) -> None:
    refusal = forming_refusal(challenge, now=now)
    if refusal:
        raise TeamError(refusal)


def _check_may_take_part(challenge: Challenge, *, user, who: str = "You") -> None:
    if not policy.may_take_part(challenge, user=user):
        raise TeamError(
            f"{who} must join the challenge first"
            + (" and accept its rules" if policy.participation_asks(challenge) else "")
            + "."
        )


def member_name(user) -> str:
    """A member as the result tables name people: display name, else user name."""
    profile = getattr(user, "profile", None)
    return (profile.display_name if profile else "") or user.get_username()


def refresh_label(team: Team) -> None:
    members = [
        member_name(m.user)
        for m in team.memberships.select_related("user__profile").order_by("joined", "pk")
    ]
    label = " & ".join(members)[:500]
    Team.objects.filter(pk=team.pk).exclude(members_label=label).update(members_label=label)
    team.members_label = label


def refresh_labels_of(user) -> None:
    """A member renamed themself: their teams' labels follow."""
    for team in Team.objects.filter(memberships__user=user):
        refresh_label(team)


def _lock_joiner(*, user, challenge: Challenge, team: Team | None) -> Team | None:
    """Take the joiner's user row (one always exists, datasets or not: two joins of one
    user wait for each other), then what the receivers of ``signals.joiner_locking`` lock
    (the joiner's quota rows), then the team's row (see above)."""
    get_user_model().objects.select_for_update(no_key=True).filter(pk=user.pk).first()
    signals.joiner_locking.send(sender=Team, user=user, challenge=challenge)
    if team is None:
        return None
    return Team.objects.select_for_update(no_key=True).filter(pk=team.pk).first()


def clean_name(name: str) -> str:
    """The name as stored: whitespace runs made one space; TeamError if empty, too long,
    or holding control or invisible characters (a name must read as what it is)."""
    name = " ".join(str(name).split())
    if not name:
        raise TeamError("Give the team a name.")
    if len(name) > NAME_MAX:
        raise TeamError(f"A team name has at most {NAME_MAX} characters (this one {len(name)}).")
    if any(unicodedata.category(c) in ("Cc", "Cf", "Co", "Cs", "Cn") for c in name):
        raise TeamError("A team name holds letters, digits, spaces and punctuation only.")
    return name


def create(*, challenge: Challenge, user, name: str, now: datetime) -> Team:
    name = clean_name(name)
    _check_forming(challenge, now=now)
    _check_may_take_part(challenge, user=user)
    with transaction.atomic():
        _lock_joiner(user=user, challenge=challenge, team=None)
        if Membership.objects.filter(challenge=challenge, user=user).exists():
            raise TeamError("You are in a team of this challenge already.")
        try:
            with transaction.atomic():
                team = Team.objects.create(
                    challenge=challenge, name=name, created=now, created_by=user
                )
        except IntegrityError:
            raise TeamError(f"A team of this challenge is called “{name}” already.") from None
        Membership.objects.create(team=team, user=user, challenge=challenge, joined=now)
        Invitation.objects.filter(team__challenge=challenge, user=user).delete()
        refresh_label(team)
        signals.joined.send(sender=Team, team=team, user=user, challenge=challenge)
    return team


def join(*, team: Team, user, now: datetime) -> Membership:
    """``user`` joins ``team`` (by invitation or link)."""
    challenge = team.challenge
    _check_forming(challenge, now=now)
    _check_may_take_part(challenge, user=user)
    with transaction.atomic():
        team = _lock_joiner(user=user, challenge=challenge, team=team)
        if team is None:
            raise TeamError("That team no longer exists.")
        current = Membership.objects.filter(challenge=challenge, user=user).first()
        if current is not None:
            raise TeamError(
                "You are in this team already."
                if current.team_id == team.pk
                else "You are in another team of this challenge: leave it first."
            )
        size = team.memberships.count()
        if size >= challenge.max_team_size:
            raise TeamError(
                f"“{team.name}” is full: teams of this challenge have at most "
                f"{challenge.max_team_size} members."
            )
        # Refused (TeamError) when the team and the joiner together are over a limit.
        signals.joining.send(sender=Team, team=team, user=user, challenge=challenge, now=now)
        membership = Membership.objects.create(
            team=team, user=user, challenge=challenge, joined=now
        )
        Invitation.objects.filter(team__challenge=challenge, user=user).delete()
        refresh_label(team)
        signals.joined.send(sender=Team, team=team, user=user, challenge=challenge)
    return membership


def join_by_code(*, challenge: Challenge, code: str, user, now: datetime) -> Membership:
    code = str(code).strip()
    valid = 0 < len(code) <= 32 and code.replace("-", "").replace("_", "").isalnum()
    team = Team.objects.filter(challenge=challenge, invite_code=code).first() if valid else None
    if team is None:
        raise TeamError("This invitation link is not valid (any more): ask for a new one.")
    return join(team=team, user=user, now=now)


def invite(*, team: Team, by, username: str, now: datetime) -> Invitation:
    challenge = team.challenge
    _check_forming(challenge, now=now)
    _check_member(team, user=by)
    username = str(username).strip()
    if not username or len(username) > 150 or "\x00" in username:
        raise TeamError("Give the user name of the person to invite.")
    invitee = get_user_model().objects.filter(username__iexact=username).first()
    if invitee is None:
        raise TeamError(f"No user is called “{username}”.")
    if team.invitations.count() >= INVITATIONS_MAX:
        raise TeamError(
            f"The team has {INVITATIONS_MAX} invitations waiting for an answer: wait for "
            "some, or share the invitation link."
        )
    if Membership.objects.filter(challenge=challenge, user=invitee).exists():
        raise TeamError(f"{invitee.get_username()} is in a team of this challenge already.")
    if team.memberships.count() >= challenge.max_team_size:
        raise TeamError(f"The team is full ({challenge.max_team_size} members at most).")
    invitation, _ = Invitation.objects.get_or_create(
        team=team, user=invitee, defaults={"invited_by": by, "created": now}
    )
    return invitation


def respond(*, invitation: Invitation, user, accept: bool, now: datetime) -> Membership | None:
    if invitation.user_id != user.pk:
        raise TeamError("This invitation is not yours.")
    if not accept:
        invitation.delete()
        return None
    return join(team=invitation.team, user=user, now=now)


def _check_member(team: Team, *, user) -> None:
    if not team.memberships.filter(user=user).exists():
        raise TeamError("Only the team's members can do this.")


def new_link(*, team: Team, by, now: datetime) -> Team:
    """Replace the invitation link (the old one stops working)."""
    _check_forming(team.challenge, now=now)
    _check_member(team, user=by)
    team.invite_code = new_invite_code()
    team.save(update_fields=["invite_code"])
    return team


def leave(*, team: Team, user, now: datetime) -> None:
    """Leave before the test phase, as long as no entry of the team is the leaver's: a
    made entry stays the team's, and its maker with it. The last member leaving an
    entry-less team dissolves it."""
    challenge = team.challenge
    _check_forming(challenge, now=now)
    with transaction.atomic():
        team = _lock_joiner(user=user, challenge=challenge, team=team)
        _check_member(team, user=user)
        if team.submissions.filter(user=user).exists():
            raise TeamError(
                "Your entries are the team's now, so you stay in it: a team keeps its "
                "members' entries and limits together."
            )
        team.memberships.filter(user=user).delete()
        if not team.memberships.exists() and not team.submissions.exists():
            team.delete()
            return
        refresh_label(team)
