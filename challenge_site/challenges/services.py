"""The challenge clock (phases and milestones, as functions of an explicit `now`), and
publishing results: only after the deadline, every change recorded as a ChallengeEvent."""

from dataclasses import dataclass
from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import transaction

from .models import Audit, Challenge, ChallengeEvent, EventKind, Phase, publication_refusal


@dataclass(frozen=True)
class Milestone:
    label: str
    when: datetime
    passed: bool


def current_phase(challenge: Challenge, *, now: datetime) -> Phase:
    """Upcoming before start; validation until test_start; test until the deadline
    (inclusive); post-challenge afterwards."""
    if now < challenge.start:
        return Phase.UPCOMING
    if now < challenge.test_start:
        return Phase.VALIDATION
    if now <= challenge.deadline:
        return Phase.TEST
    return Phase.POST


def timeline(challenge: Challenge, *, now: datetime) -> list[Milestone]:
    """The three dates, each marked passed exactly when current_phase has moved beyond it."""
    return [
        Milestone(
            "Challenge opens: datasets released, validation phase begins",
            challenge.start,
            passed=now >= challenge.start,
        ),
        Milestone(
            "Test phase begins: validation targets released",
            challenge.test_start,
            passed=now >= challenge.test_start,
        ),
        Milestone(
            "Deadline for test submissions", challenge.deadline, passed=now > challenge.deadline
        ),
    ]


def next_milestone(challenge: Challenge, *, now: datetime) -> Milestone | None:
    """The first milestone still ahead, or None once the deadline has passed."""
    return next((m for m in timeline(challenge, now=now) if not m.passed), None)


def publish_results(*, challenge: Challenge, user, now: datetime, via: str = "") -> bool:
    """Make the test scores of ``challenge`` public; False if they already were.

    ValidationError (saying when they can be) before the deadline. Challenge.save
    refuses as well, by the real clock, and records the ChallengeEvent.
    """
    return _set_published(challenge, True, user=user, now=now, via=via)


def withdraw_results(*, challenge: Challenge, user, now: datetime, via: str = "") -> bool:
    """Hide the test scores of ``challenge`` again; False if they were not public."""
    return _set_published(challenge, False, user=user, now=now, via=via)


def _set_published(challenge: Challenge, published: bool, *, user, now, via) -> bool:
    if published and (refusal := publication_refusal(challenge, now=now)):
        raise ValidationError(refusal, code="too_early")
    with transaction.atomic():
        current = (
            Challenge.objects.select_for_update()
            .values_list("results_published", flat=True)
            .get(pk=challenge.pk)
        )
        if current == published:
            challenge.results_published = published
            return False
        challenge.results_published = published
        challenge.save(
            update_fields=["results_published", "updated"], audit=Audit(user=user, via=via, at=now)
        )
    return True


def record_target_change(
    *,
    dataset,
    filename: str,
    split: str,
    old_sha256: str,
    new_sha256: str,
    user=None,
    via: str = "",
    now: datetime,
) -> ChallengeEvent:
    """Record that a stored target file was replaced (``new_sha256``) or deleted (empty).

    While the challenge's results are published, the scores they show change with the
    targets: the challenge is marked revised at ``now`` ("Results revised on …").
    """
    challenge = dataset.challenge
    revised = bool(
        Challenge.objects.filter(pk=challenge.pk)
        .values_list("results_published", flat=True)
        .first()
    )
    if revised:
        Challenge.objects.filter(pk=challenge.pk).update(results_revised_at=now)
        challenge.results_revised_at = now
    from .publication import record_event  # publication needs the policy, which needs us

    return record_event(
        challenge,
        kind=EventKind.TARGETS_REPLACED if new_sha256 else EventKind.TARGETS_DELETED,
        audit=Audit(user=user, via=via, at=now),
        detail={
            "dataset": dataset.name,
            "file": filename,
            "split": str(split),
            "old_sha256": old_sha256,
            "new_sha256": new_sha256,
            "results_revised": revised,
        },
    )
