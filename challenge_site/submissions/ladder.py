"""The Ladder's shown scores (Blum & Hardt 2015), kept on the ranking loss's Score rows.

For every participant, dataset and feedback split (validation, the test's public part),
their listed entries are taken in submission order through scoring.ladder: each entry's
row gets the shown score after it (``ladder_value``, rounded to the threshold's
precision, never finer than 1/n), that rounding unit and whether it set the shown score; the
entry whose score is shown has ``ladder_current``. The values are kept whatever the
challenge's feedback option, so that switching it never shows a stale or missing score;
challenges.policy.ladder_applies says who sees them instead of the exact scores.

Called inside the transaction that changes a participant's entries (scoring, moderation,
deletion), under the participant's quota lock, so that two entries scored at once are
put in order by the second.
"""

import math

import numpy as np
from django.db.models import F, Q

import scoring
import scoring.ladder
from datasets.models import Dataset, ScoredSplit

from . import terms as stored_terms
from .entrants import Entrant, any_of_q, lock_order, of_rows
from .models import Score, SplitResult
from .policy import ladder_steps_q

# The splits that give feedback during the challenge.
LADDER_SPLITS = (ScoredSplit.VAL, ScoredSplit.PUBLIC)
FIELDS = ("ladder_value", "ladder_precision", "ladder_accepted", "ladder_current")


def loss_terms(name: str, loss: scoring.Loss, value: float) -> np.ndarray | None:
    """Per-example terms whose mean is ``value`` (nmse's squared errors scaled by the
    normaliser, read off the stored value), or None without them, from the stored terms
    file ``name`` (its one array read: kept, as probing's are, for the next entries)."""
    found = stored_terms.load_array(name, loss.terms_key)
    if found is None:
        return None
    if loss.terms_key == loss.name:
        return found
    mean = float(np.mean(found))
    if not (math.isfinite(mean) and math.isfinite(value)) or mean == 0:
        return None
    return found * (value / mean)


def first_floor(n: int) -> float:
    """The smallest threshold a first shown score is rounded with (scoring.ladder.step's
    first_floor): 1/sqrt(n), the standard error of n terms of unit spread, so that a
    fresh account's first entry is shown to the unit an honest first entry gets (0.01 at
    n = 1,000 for log-loss) and not to 1/n, which told one row's change (~0.0046 nats at
    n = 1,000) from a file constant but for that row."""
    return 1 / math.sqrt(n)


def first_shown(row: Score) -> bool:
    """Whether ``row`` (a ranking-loss row that set its participant's shown score) is the
    participant's first entry with a shown score on its split: then there was no earlier
    shown score for it to beat. One query (submission_listing_idx-backed lookups)."""
    submission = row.submission
    entrant = Entrant.of(submission)
    if entrant is None:
        return False
    earlier = Q(submission__created__lt=submission.created) | Q(
        submission__created=submission.created, submission_id__lt=submission.pk
    )
    return not (
        Score.objects.filter(
            entrant.q("submission__"),
            dataset_id=row.dataset_id,
            split=row.split,
            loss=row.loss,
            ladder_value__isnull=False,
            submission__is_baseline=False,
        )
        .filter(earlier)
        .exists()
    )


def refresh(*, dataset: Dataset, entrant: Entrant, split: str) -> int:
    """Bring the participant's Ladder on ``split`` up to date; returns the rows written.

    A new entry costs one step (its terms and the current entry's); any other change
    recomputes the whole sequence. Entries without stored terms (scored before they
    were kept) and entries whose ranking loss is n/a take no part (no shown score)."""
    return refresh_many(dataset=dataset, entrants=[entrant], split=split)


def refresh_many(*, dataset: Dataset, entrants: list[Entrant], split: str) -> int:
    """``refresh`` for several participants (a batch of scoring runs): each one's Ladder
    is its own, read and written in one query of each kind for them all."""
    loss = scoring.find_loss(dataset.task, dataset.effective_ranking_loss)
    rows = list(
        Score.objects.filter(
            any_of_q(entrants, "submission__"),
            dataset=dataset,
            split=split,
            submission__is_baseline=False,
        )
        # What the Ladder reads and writes of them (not the intervals' columns).
        .only("submission_id", "split", "loss", "value", *FIELDS)
        .annotate(owner_team=F("submission__team_id"), owner_user=F("submission__user_id"))
        .order_by("submission__created", "submission_id", "loss")
    )
    names = dict(
        SplitResult.objects.filter(
            submission__in={row.submission_id for row in rows}, split=split
        ).values_list("submission_id", "terms")
    )
    # Listed entries, and withdrawn ones: a withdrawn entry leaves the boards but stays a
    # step of its participant's Ladder (policy.ladder_steps_q says why).
    steps = set(
        Score.objects.filter(
            ladder_steps_q("submission__"), pk__in=[row.pk for row in rows]
        ).values_list("pk", flat=True)
    )
    by_entrant: dict[Entrant | None, list[Score]] = {}
    for row in rows:
        by_entrant.setdefault(of_rows((row.owner_team, row.owner_user)), []).append(row)
    changed = []
    for own in by_entrant.values():
        candidates = [
            row
            for row in own
            if loss is not None
            and row.loss == loss.name
            and row.pk in steps
            and row.value is not None
            and names.get(row.submission_id)
        ]
        if _only_the_newest_is_new(own, candidates):
            changed += _append(candidates, loss=loss, names=names)
        else:
            changed += _recompute(own, candidates, loss=loss, names=names)
    Score.objects.bulk_update(changed, FIELDS)
    return len(changed)


def _state(row: Score) -> tuple:
    return tuple(getattr(row, name) for name in FIELDS)


def _only_the_newest_is_new(rows: list[Score], candidates: list[Score]) -> bool:
    """The usual case, a participant's new entry: every row but the newest candidate
    holds the Ladder of the entries before it (one of them current), the newest holds
    none yet. Then one step against the current entry gives what a recompute would."""
    if not candidates or candidates[-1].ladder_accepted is not None:
        return False
    earlier = candidates[:-1]
    if any(row.ladder_accepted is None for row in earlier):
        return False
    if earlier and sum(row.ladder_current for row in earlier) != 1:
        return False
    others = {row.pk for row in candidates}
    return all(_state(row) == (None, None, None, False) for row in rows if row.pk not in others)


def _append(candidates: list[Score], *, loss, names: dict) -> list[Score]:
    """One step of the Ladder for the newest entry (one array of two terms files read):
    the rows to write."""
    new = candidates[-1]
    terms = loss_terms(names[new.submission_id], loss, new.value)
    if terms is None:
        return []  # takes no part, as in a recompute
    index = len(candidates) - 1
    best = next((i for i, row in enumerate(candidates[:-1]) if row.ladder_current), None)
    reference = candidates[best] if best is not None else None
    step = scoring.ladder.step(
        terms,
        shown=None if reference is None else reference.ladder_value,
        best_terms=None
        if reference is None
        else loss_terms(names[reference.submission_id], loss, reference.value),
        index=index,
        best=best,
        min_precision=1 / terms.size,
        first_floor=first_floor(terms.size),
    )
    precision = step.precision if step.accepted else reference.ladder_precision
    new.ladder_value, new.ladder_precision = step.shown, precision
    new.ladder_accepted, new.ladder_current = step.accepted, step.accepted
    changed = [new]
    if step.accepted and reference is not None:
        reference.ladder_current = False
        changed.append(reference)
    return changed


def _recompute(rows: list[Score], candidates: list[Score], *, loss, names: dict) -> list[Score]:
    """The Ladder over every entry again (after a rescore, moderation or deletion): the
    rows to write."""
    sequence, taking_part = [], []
    for row in candidates:
        found = loss_terms(names[row.submission_id], loss, row.value)
        if found is not None:
            sequence.append(found)
            taking_part.append(row)
    # Never finer than 1/n, Blum & Hardt's rounding (scoring.ladder.Step.precision).
    steps = (
        scoring.ladder.ladder(
            sequence,
            min_precision=1 / sequence[0].size,
            first_floor=first_floor(sequence[0].size),
        )
        if sequence
        else []
    )
    wanted = {row.pk: (None, None, None, False) for row in rows}
    current = steps[-1].best if steps else None
    for index, (row, step) in enumerate(zip(taking_part, steps, strict=True)):
        # The precision of the score shown after this entry: its setter's.
        precision = steps[step.best].precision
        wanted[row.pk] = (step.shown, precision, step.accepted, index == current)
    changed = []
    for row in rows:
        values = wanted[row.pk]
        if _state(row) != values:
            for name, value in zip(FIELDS, values, strict=True):
                setattr(row, name, value)
            changed.append(row)
    return changed


def refresh_dataset(*, dataset: Dataset) -> None:
    """Every participant's Ladder of the dataset (its ranking loss changed)."""
    pairs = (
        Score.objects.filter(
            dataset=dataset, split__in=LADDER_SPLITS, submission__is_baseline=False
        )
        .values_list("submission__team_id", "submission__user_id")
        .distinct()
    )
    for entrant in sorted({of_rows(pair) for pair in pairs}, key=lock_order):
        for split in LADDER_SPLITS:
            refresh(dataset=dataset, entrant=entrant, split=split)
