"""Publishing a challenge's results (only after the deadline, at an explicit ``now``) and
the record of every change of publication, opening and target file as a ChallengeEvent.

``Challenge.save()`` only saves: the admin, the importer and code publish through
``publish_results`` / ``withdraw_results``, and forms that move a deadline ask
``check_publication``.
"""

from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Exists, OuterRef

from . import signals
from .models import (
    Audit,
    Challenge,
    ChallengeEvent,
    EventKind,
    format_utc,
    publication_refusal,
)
from .publication import exposure


def check_publication(*, challenge: Challenge, now: datetime) -> None:
    """ValidationError if ``challenge``'s results would be public at ``now`` before its
    deadline: the deadline's error when they already are published (a form moving it into
    the future), else results_published's (publishing too early)."""
    if not challenge.results_published:
        return
    refusal = publication_refusal(challenge, now=now)
    if refusal is None:
        return
    was_published = (
        challenge.pk is not None
        and not challenge._state.adding
        and Challenge.objects.filter(pk=challenge.pk, results_published=True).exists()
    )
    if was_published:
        message = (
            "The results are published, so the deadline must have passed: withdraw "
            f"them before moving it to {format_utc(challenge.deadline)}."
        )
        raise ValidationError({"deadline": message}, code="published")
    raise ValidationError({"results_published": refusal}, code="too_early")


def record_event(challenge: Challenge, *, kind: EventKind, audit: Audit, detail: dict):
    """A ChallengeEvent: who (a user, or none for commands and code), how, when."""
    user = audit.user if getattr(audit.user, "pk", None) else None
    return ChallengeEvent.objects.create(
        challenge=challenge,
        kind=kind,
        at=audit.at,
        user=user,
        username=user.get_username() if user is not None else "",
        via=audit.via,
        detail=detail,
    )


def publish_results(*, challenge: Challenge, user, now: datetime, via: str = "") -> bool:
    """Make the test scores of ``challenge`` public; False if they already were.

    ValidationError (saying when they can be) before the deadline; a ChallengeEvent
    records the change, with what it made public (publication.exposure).
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
        challenge.save(update_fields=["results_published", "updated"])
        signals.results_published_changed.send(sender=Challenge, challenge=challenge)
        record_event(
            challenge,
            kind=EventKind.PUBLISHED if published else EventKind.WITHDRAWN,
            audit=Audit(user=user, via=via, at=now),
            detail=exposure(challenge, now=now).as_json(),
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


def options_changed(
    *, challenge: Challenge, public_fraction_before: float, final_entries_before: int
) -> int:
    """After a save of ``challenge`` (inside its transaction) from the admin or the
    importer: when its public part or its number of final entries changed, the apps
    above (signals.options_changed) rescore and recompute what depends on them. Returns
    how many entries were queued to be scored again."""
    public_part_changed = challenge.test_public_fraction != public_fraction_before
    final_entries_changed = challenge.final_entries != final_entries_before
    if not (public_part_changed or final_entries_changed):
        return 0
    answers = signals.options_changed.send(
        sender=Challenge,
        challenge=challenge,
        public_part_changed=public_part_changed,
        final_entries_changed=final_entries_changed,
    )
    return sum(count or 0 for _, count in answers)


def save_challenge(*, challenge: Challenge) -> None:
    """Save ``challenge`` as a form or an import changed it, but for ``results_published``:
    only ``publish_results``/``withdraw_results`` write that, with the record of it. A
    copy loaded before a publication (the admin's form, an import checking its files)
    would otherwise withdraw the results unseen, with no event and no e-mail."""
    if challenge._state.adding:
        challenge.save()
        return
    fields = [
        field.name
        for field in Challenge._meta.concrete_fields
        if not field.primary_key and field.name != "results_published"
    ]
    challenge.save(update_fields=fields)


VIA_SCHEDULE = "scheduled publication"


def publish_scheduled(*, now: datetime) -> list[str]:
    """Publish the results of every challenge whose ``publish_results_at`` has come (the
    beat's sweep): as ``publish_results`` does by hand, with its event (via "scheduled
    publication"). The time stays set, as the organiser's record; a publication or a
    withdrawal recorded at or after it means the organiser has acted since, so a
    challenge withdrawn after its automatic publication is not published again. Returns
    the slugs published."""
    acted_since = ChallengeEvent.objects.filter(
        challenge=OuterRef("pk"),
        kind__in=[EventKind.PUBLISHED, EventKind.WITHDRAWN],
        at__gte=OuterRef("publish_results_at"),
    )
    due = Challenge.objects.filter(
        publish_results_at__lte=now, results_published=False, deadline__lt=now
    ).exclude(Exists(acted_since))
    published = []
    for challenge in due.order_by("publish_results_at", "pk"):
        if publish_results(challenge=challenge, user=None, now=now, via=VIA_SCHEDULE):
            published.append(challenge.slug)
    return published
