"""Taking part in a challenge: joining it, accepting its rules, approval by its organisers.

What a user must have done before downloading or submitting is the policy's
(``policy.participation_missing``); these functions record the steps and describe where a
user stands, in words too (``participation_block``: the refusal that downloads and
submissions give). Every function takes keyword arguments and an explicit ``now`` where
the clock matters.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.core.mail import EmailMessage, get_connection
from django.db.models import QuerySet
from django.urls import reverse

from . import policy
from .models import Challenge, Participant


@dataclass(frozen=True)
class Standing:
    """Where ``user`` stands in a challenge: what the pages show them."""

    participant: Participant | None
    organiser: bool
    asks_rules: bool  # the challenge asks participants to accept its rules
    asks_approval: bool  # ... and an organiser to approve each of them
    block: str | None  # why they may not download or submit yet (None: they may)

    @property
    def needs_rules_acceptance(self) -> bool:
        """The join form asks for the rules: asked, and not accepted yet."""
        return self.asks_rules and (
            self.participant is None or self.participant.rules_accepted_at is None
        )

    @property
    def waiting_for_approval(self) -> bool:
        return (
            self.asks_approval
            and not self.organiser
            and self.participant is not None
            and self.participant.approved_at is None
        )


def participant_of(*, challenge: Challenge, user) -> Participant | None:
    if not user.is_authenticated:
        return None
    return Participant.objects.filter(challenge=challenge, user=user).first()


def standing(*, challenge: Challenge, user) -> Standing:
    asked = policy.participation_asks(challenge)
    return Standing(
        participant=participant_of(challenge=challenge, user=user),
        organiser=policy.is_organiser(user, challenge),
        asks_rules=policy.RULES_ACCEPTANCE in asked,
        asks_approval=policy.APPROVAL in asked,
        block=participation_block(challenge, user=user),
    )


def participation_block(challenge: Challenge, *, user) -> str | None:
    """Why ``user`` may not download the challenge's data or submit to it, in words, or
    None if they may."""
    missing, joined = policy.participation_standing(challenge, user=user)
    if not missing:
        return None
    title = challenge.title
    if not user.is_authenticated:
        asked = policy.participation_asks(challenge)
        if asked == (policy.RULES_ACCEPTANCE,):
            what = "its participants accept its rules"
        elif asked == (policy.APPROVAL,):
            what = "the organisers approve each participant"
        else:
            what = "its participants accept its rules and the organisers approve each one"
        return f"Log in and join {title} first: {what}."
    if policy.RULES_ACCEPTANCE in missing:
        then = (
            "; the organisers then approve your participation" if policy.APPROVAL in missing else ""
        )
        return f"Accept the rules of {title} first{then}."
    if joined:
        return f"Your participation in {title} is waiting for the organisers' approval."
    return f"Ask to join {title} first: the organisers approve each participant."


def join(*, challenge: Challenge, user, accept_rules: bool, now: datetime) -> Participant:
    """The user's Participant row in ``challenge``, created if need be (joining subscribes
    them to its announcements). ``accept_rules`` records ``now`` as the moment they
    accepted the rules, the first time only: accepting again keeps the first moment."""
    participant, created = Participant.objects.get_or_create(
        challenge=challenge,
        user=user,
        defaults={"joined": now, "rules_accepted_at": now if accept_rules else None},
    )
    if not created and accept_rules and participant.rules_accepted_at is None:
        # Conditional: of two acceptances at once, the first one written stays.
        Participant.objects.filter(pk=participant.pk, rules_accepted_at__isnull=True).update(
            rules_accepted_at=now
        )
        participant.refresh_from_db(fields=["rules_accepted_at"])
    return participant


def _organised_by(participants: QuerySet[Participant], user) -> QuerySet[Participant]:
    """The rows of ``participants`` in challenges ``user`` organises (plain pks: an update
    may not follow a query with joins or DISTINCT)."""
    pks = [
        pk
        for pk, challenge_id in participants.values_list("pk", "challenge_id")
        if policy.manages(user, challenge_id)
    ]
    return Participant.objects.filter(pk__in=pks)


def approve(*, participants: QuerySet[Participant], by, now: datetime) -> int:
    """Approve the participants ``by`` may approve (those of challenges they organise)
    who are not approved yet, recording who and when; how many were approved."""
    return (
        _organised_by(participants, by)
        .filter(approved_at__isnull=True)
        .update(approved_at=now, approved_by=by)
    )


def revoke_approval(*, participants: QuerySet[Participant], by) -> int:
    """Withdraw the approval of the participants ``by`` organises; how many lost it. Their
    rows stay (joined, rules accepted): an organiser can approve them again."""
    return (
        _organised_by(participants, by)
        .filter(approved_at__isnull=False)
        .update(approved_at=None, approved_by=None)
    )


# --- Writing to participants (the admin's participants list) ------------------------------


@dataclass(frozen=True)
class Mailed:
    sent: list[str]  # user names written to
    unreachable: list[str]  # no address, or an inactive account: nothing sent


def _message(participant: Participant, *, subject: str, body: str, by) -> EmailMessage:
    """A plain-text e-mail from the site to ``participant``, signed by the challenge and
    answered to the organiser who wrote it (their address is theirs to give: only when
    they have one)."""
    challenge = participant.challenge
    link = settings.SITE_URL.rstrip("/") + reverse("challenge_detail", args=[challenge.slug])
    text = f"{body.strip()}\n\n-- \n{by.get_username()}, organiser of “{challenge.title}”\n{link}\n"
    return EmailMessage(
        # A header cannot hold a line break.
        subject=" ".join(f"{challenge.title}: {subject}".split()),
        body=text,
        to=[participant.user.email],
        reply_to=[by.email] if by.email else None,
    )


def write_to(*, participants: QuerySet[Participant], subject: str, body: str, by) -> Mailed:
    """E-mail ``body`` to the participants ``by`` organises. Raises one of
    mailing.services.MAIL_UNAVAILABLE when the mail server is down (nothing is recorded:
    the organiser sends again)."""
    rows = list(_organised_by(participants, by).select_related("user", "challenge"))
    reachable = [p for p in rows if p.user.is_active and p.user.email]
    unreachable = [p.user.get_username() for p in rows if p not in reachable]
    if reachable:
        with get_connection(fail_silently=False) as connection:
            connection.send_messages(
                [_message(p, subject=subject, body=body, by=by) for p in reachable]
            )
    return Mailed([p.user.get_username() for p in reachable], unreachable)


def refuse_approval(*, participants: QuerySet[Participant], reason: str, by) -> Mailed:
    """Refuse (or withdraw) the approval of the participants ``by`` organises and e-mail
    them why: they are told, rather than left waiting. The reason goes out first, so a
    mail server that is down changes nothing."""
    body = (
        "Your participation was not approved by the organisers, so you cannot download "
        f"the data or submit.\n\nTheir reason:\n\n{reason.strip()}\n\nReply to this e-mail "
        "to answer them."
    )
    mailed = write_to(
        participants=participants, subject="participation not approved", body=body, by=by
    )
    revoke_approval(participants=participants, by=by)
    return mailed
