"""The Ladder's shown scores (Blum & Hardt 2015), kept on the ranking loss's Score rows.

For every participant, dataset and feedback split (validation, the test's public part),
their listed entries are taken in submission order through scoring.ladder: each entry's
row gets the shown score after it (``ladder_value``, rounded to the threshold's
precision, never finer than 1/n), that rounding unit and whether it set the shown score; the
entry whose score is shown has ``ladder_current``. The values are kept whatever the
challenge's feedback option, so that switching it never shows a stale or missing score;
challenge_site.policy.ladder_applies says who sees them instead of the exact scores.

Called inside the transaction that changes a participant's entries (scoring, moderation,
deletion), under the participant's quota lock, so that two entries scored at once are
put in order by the second.
"""

import math

import numpy as np

import scoring
import scoring.ladder
from challenge_site.policy import listed_scores
from datasets.models import Dataset, ScoredSplit

from . import terms as stored_terms
from .models import Score, SplitResult

# The splits that give feedback during the challenge.
LADDER_SPLITS = (ScoredSplit.VAL, ScoredSplit.PUBLIC)
FIELDS = ("ladder_value", "ladder_precision", "ladder_accepted", "ladder_current")


def _loss_terms(loaded: dict, loss: scoring.Loss, value: float) -> np.ndarray | None:
    """Per-example terms whose mean is ``value`` (nmse's squared errors scaled by the
    normaliser, read off the stored value), or None without them."""
    found = loaded.get(loss.terms_key)
    if found is None:
        return None
    if loss.terms_key == loss.name:
        return found
    mean = float(np.mean(found))
    if not (math.isfinite(mean) and math.isfinite(value)) or mean == 0:
        return None
    return found * (value / mean)


def refresh(*, dataset: Dataset, user_id: int, split: str) -> int:
    """Recompute the participant's Ladder on ``split``; returns the rows written.

    Entries without stored terms (scored before they were kept) and entries whose
    ranking loss is n/a take no part (no shown score)."""
    loss = scoring.LOSSES.get(dataset.effective_ranking_loss)
    rows = list(
        Score.objects.filter(
            dataset=dataset,
            split=split,
            submission__user_id=user_id,
            submission__is_baseline=False,
        ).order_by("submission__created", "submission_id", "loss")
    )
    names = dict(
        SplitResult.objects.filter(
            submission__in={row.submission_id for row in rows}, split=split
        ).values_list("submission_id", "terms")
    )
    listed = set(
        listed_scores(Score.objects.filter(pk__in=[row.pk for row in rows])).values_list(
            "pk", flat=True
        )
    )
    sequence, taking_part = [], []
    for row in rows:
        if loss is None or row.loss != loss.name:
            continue
        if row.pk not in listed or row.value is None or not names.get(row.submission_id):
            continue
        found = _loss_terms(stored_terms.load(names[row.submission_id]), loss, row.value)
        if found is not None:
            sequence.append(found)
            taking_part.append(row)
    # Never finer than 1/n, Blum & Hardt's rounding (scoring.ladder.Step.precision).
    steps = scoring.ladder.ladder(sequence, min_precision=1 / sequence[0].size) if sequence else []
    wanted = {row.pk: (None, None, None, False) for row in rows}
    current = steps[-1].best if steps else None
    for index, (row, step) in enumerate(zip(taking_part, steps, strict=True)):
        # The precision of the score shown after this entry: its setter's.
        precision = steps[step.best].precision
        wanted[row.pk] = (step.shown, precision, step.accepted, index == current)
    changed = []
    for row in rows:
        values = wanted[row.pk]
        if tuple(getattr(row, name) for name in FIELDS) != values:
            for name, value in zip(FIELDS, values, strict=True):
                setattr(row, name, value)
            changed.append(row)
    Score.objects.bulk_update(changed, FIELDS)
    return len(changed)


def refresh_dataset(*, dataset: Dataset) -> None:
    """Every participant's Ladder of the dataset (its ranking loss changed)."""
    users = (
        Score.objects.filter(
            dataset=dataset, split__in=LADDER_SPLITS, submission__user__isnull=False
        )
        .values_list("submission__user_id", flat=True)
        .distinct()
    )
    for user_id in sorted(set(users)):
        for split in LADDER_SPLITS:
            refresh(dataset=dataset, user_id=user_id, split=split)
