"""A challenge's way out of its draft: what is missing first, then the one explicit step.

``missing_for_opening`` lists, in words an organiser can act on, everything that would
make the open challenge broken or empty; ``open_challenge`` refuses while the list is
not empty, then sets ``opened_at`` and records who opened it (a ChallengeEvent).
"""

from __future__ import annotations

from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import transaction

from challenge_site.challenges.models import Audit, Challenge, EventKind, format_utc
from challenge_site.challenges.services import record_event

from .models import RELEASED_KINDS, DatasetFile, Split

# Every dataset releases these six files over the challenge (datasets/models.py); its
# slices files are optional.
REQUIRED_FILES = [(split, kind) for split in Split for kind in RELEASED_KINDS]


def missing_for_opening(challenge: Challenge, *, now: datetime) -> list[str]:
    """What must be fixed before ``challenge`` can open: an empty list when nothing."""
    missing = []
    if not challenge.title.strip():
        missing.append("The challenge has no title.")
    if not (challenge.start <= challenge.test_start < challenge.deadline):
        missing.append("Dates out of order: start ≤ test start < deadline is required.")
    if challenge.deadline <= now:
        missing.append(
            f"The deadline ({format_utc(challenge.deadline)}) has passed: nobody could submit."
        )
    datasets = list(challenge.datasets.order_by("position", "name"))
    if not datasets:
        missing.append("No dataset: add at least one, with its six files.")
    stored = set(
        DatasetFile.objects.filter(dataset__challenge=challenge).values_list(
            "dataset_id", "split", "kind"
        )
    )
    for dataset in datasets:
        absent = [
            f"{split} {kind}"
            for split, kind in REQUIRED_FILES
            if (dataset.pk, split, kind) not in stored
        ]
        if absent:
            missing.append(f"Dataset {dataset.name}: no file for {', '.join(absent)}.")
        ranking = dataset.effective_ranking_loss
        if ranking not in {loss.name for loss in dataset.shown_losses()}:
            missing.append(
                f"Dataset {dataset.name}: no ranking loss ({ranking!r} is not one of the "
                f"{dataset.task} losses it shows)."
            )
    return missing


def open_challenge(challenge: Challenge, *, user, now: datetime, via: str = "") -> bool:
    """Take ``challenge`` out of its draft; False if it was open already.

    ValidationError listing what is missing (``missing_for_opening``) if anything is.
    """
    with transaction.atomic():
        current = Challenge.objects.select_for_update().get(pk=challenge.pk)
        if current.opened_at is not None:
            challenge.opened_at = current.opened_at
            return False
        missing = missing_for_opening(current, now=now)
        if missing:
            raise ValidationError(missing, code="incomplete")
        Challenge.objects.filter(pk=challenge.pk).update(opened_at=now)
        challenge.opened_at = now
        record_event(
            challenge,
            kind=EventKind.OPENED,
            audit=Audit(user=user, via=via, at=now),
            detail={"datasets": [d.name for d in challenge.datasets.all()]},
        )
    return True
