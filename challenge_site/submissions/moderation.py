"""Moderation by a challenge's organisers: hide an entry from the leaderboards, disqualify
it (its page says why, to everyone), restore it, rescore it; every change is recorded as a
ModerationEvent with who, when and why.

Which entries are listed follows from ``Submission.moderation`` through
``submissions.policy.listed_q``; this module only changes it. Baselines are never
moderated. Every function takes keyword arguments and an explicit ``now``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import QuerySet

from challenge_site.challenges import policy

from . import services, standings
from .entrants import Entrant
from .models import (
    REASON_REQUIRED,
    Moderation,
    ModerationAction,
    ModerationEvent,
    Submission,
)

REASON_MAX_LENGTH = 1000
# The moderation each action leaves an entry in.
OUTCOME = {
    ModerationAction.HIDE: Moderation.HIDDEN,
    ModerationAction.DISQUALIFY: Moderation.DISQUALIFIED,
    ModerationAction.RESTORE: Moderation.NONE,
}


@dataclass
class Outcome:
    """What one moderation call did: the entries changed, and those left as they were."""

    changed: list[Submission] = field(default_factory=list)
    baselines: list[Submission] = field(default_factory=list)  # never moderated
    unchanged: list[Submission] = field(default_factory=list)  # already so (same reason)


def clean_reason(*, action: ModerationAction, reason: str) -> str:
    """The reason, stripped; ValidationError if the action needs one or it is too long."""
    reason = (reason or "").strip()
    if action in REASON_REQUIRED and not reason:
        raise ValidationError(
            f"A reason is required to {'hide' if action == ModerationAction.HIDE else 'disqualify'}"
            " an entry; it is shown on the entry's page.",
            code="required",
        )
    if len(reason) > REASON_MAX_LENGTH:
        raise ValidationError(
            f"The reason is {len(reason)} characters long; at most {REASON_MAX_LENGTH}.",
            code="max_length",
        )
    return reason


def _check_organiser(submissions: list[Submission], *, user) -> None:
    """Only organisers of each entry's challenge moderate it (the admin's lists show them
    nothing else; this is the same rule, asked again where the change is made)."""
    for submission in submissions:
        if not policy.manages(user, submission.dataset.challenge_id):
            raise PermissionDenied(f"{user} does not organise the challenge of #{submission.pk}.")


def _event(submission: Submission, *, action, reason: str, previous: str, user, now):
    return ModerationEvent(
        submission=submission,
        action=action,
        reason=reason,
        previous=previous,
        at=now,
        user=user if user is not None and user.is_authenticated else None,
        username=user.get_username() if user is not None and user.is_authenticated else "",
    )


def moderate(
    *,
    submissions: QuerySet[Submission],
    action: ModerationAction,
    reason: str,
    user,
    now: datetime,
) -> Outcome:
    """Hide, disqualify or restore every given entry and record one event for each one
    that changed (a new reason for a hidden or disqualified entry is a change).

    Raises ValidationError (no reason for hide or disqualify, or too long a reason) or
    PermissionDenied (``user`` does not organise some entry's challenge); then nothing
    changes. Baselines are left out.
    """
    action = ModerationAction(action)
    if action not in OUTCOME:
        raise ValueError(f"not a moderation action: {action}")
    reason = clean_reason(action=action, reason=reason)
    target = OUTCOME[action]
    # The restored entry's page no longer shows a reason (the event keeps it).
    new_reason = "" if target == Moderation.NONE else reason
    outcome = Outcome()
    ids = list(submissions.values_list("pk", flat=True))  # whatever the admin's query
    with transaction.atomic():
        standings.lock_owners(ids)  # before the submissions: see standings
        rows = list(
            Submission.objects.filter(pk__in=ids)
            .select_for_update(of=("self",), no_key=True)
            .select_related("dataset")
            .order_by("pk")
        )
        _check_organiser(rows, user=user)
        events = []
        for submission in rows:
            if submission.is_baseline:
                outcome.baselines.append(submission)
                continue
            if submission.moderation == target and submission.moderation_reason == new_reason:
                outcome.unchanged.append(submission)
                continue
            events.append(
                _event(
                    submission,
                    action=action,
                    reason=reason,
                    previous=submission.moderation,
                    user=user,
                    now=now,
                )
            )
            submission.moderation = target
            submission.moderation_reason = new_reason
            submission.moderated_at = now
            outcome.changed.append(submission)
        Submission.objects.bulk_update(
            outcome.changed, ["moderation", "moderation_reason", "moderated_at"]
        )
        ModerationEvent.objects.bulk_create(events)
        # A listed entry came or went: the leaders (and so the intervals), its
        # participant's Ladder and final entries may change.
        changed = {}
        for submission in outcome.changed:
            key = (submission.dataset_id, submission.team_id or 0, submission.user_id)
            changed.setdefault(key, [submission.dataset, set(), Entrant.of(submission)])
            changed[key][1].update(submission.splits)
        for _, (dataset, splits, entrant) in sorted(changed.items()):
            standings.entries_changed(dataset=dataset, entrant=entrant, splits=splits)
    return outcome


def hide(*, submissions: QuerySet[Submission], reason: str, user, now: datetime) -> Outcome:
    return moderate(
        submissions=submissions, action=ModerationAction.HIDE, reason=reason, user=user, now=now
    )


def disqualify(*, submissions: QuerySet[Submission], reason: str, user, now: datetime) -> Outcome:
    return moderate(
        submissions=submissions,
        action=ModerationAction.DISQUALIFY,
        reason=reason,
        user=user,
        now=now,
    )


def restore(*, submissions: QuerySet[Submission], reason: str = "", user, now: datetime) -> Outcome:
    return moderate(
        submissions=submissions, action=ModerationAction.RESTORE, reason=reason, user=user, now=now
    )


def rescore(*, submissions: QuerySet[Submission], user, now: datetime, reason: str = "") -> int:
    """services.rescore, one entry at a time so that an event is recorded for each entry
    queued (not for an invalid one whose zip was deleted); returns how many were queued.
    PermissionDenied if ``user`` does not organise some entry's challenge."""
    reason = clean_reason(action=ModerationAction.RESCORE, reason=reason)
    with transaction.atomic():
        rows = list(submissions.select_related("dataset").order_by("pk"))
        _check_organiser(rows, user=user)
        events = [
            _event(
                submission,
                action=ModerationAction.RESCORE,
                reason=reason,
                previous=submission.moderation,
                user=user,
                now=now,
            )
            for submission in rows
            if services.rescore(submissions=Submission.objects.filter(pk=submission.pk))
        ]
        ModerationEvent.objects.bulk_create(events)
    return len(events)
