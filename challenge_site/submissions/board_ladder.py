"""The board's Ladder (Feedback.BOARD_LADDER): one Ladder shared by the whole board.

Per dataset and feedback split (validation, the test's public part) the board keeps one
released best. The entries of every account are taken in one sequence, the order they
were committed under the board's lock (``BoardStep.seq``, given once and kept, so that a
recomputation replays the same order): an entry gets a released score only when it
beats the entry holding the board's released best by the Ladder's step (scoring.ladder:
the paired standard error of their per-example terms, Blum & Hardt 2015), rounded to the
step's power of ten; every other entry gets no released score, and nothing of its value.
So a set of accounts learns together what one account would learn from the same uploads:
at most one released score per real improvement of the board, and one bit (not better)
for every other upload.

Commit order rather than submission order: an entry is compared with the best released
when it is scored, which is what anyone could have seen then; submission order would
make an entry scored late change what was released before it. Two entries scored at
once are put in order by the board's row (SELECT … FOR UPDATE), taken after the
participant's lock (standings.entries_changed), never before it.

Entries an organiser takes off the board (hidden, disqualified) and deleted ones leave
the sequence: the board is recomputed in the kept order. A withdrawn entry stays a step,
as on a participant's Ladder (policy.ladder_steps_q): taken out, the later entries would
be judged again against a weaker best, and withdrawing one's own holder would release
scores the board kept back. Late joiners' entries (late_joiners.py) take no part on the
test's public part. The steps are kept whatever the feedback option, so that switching
to it never shows a stale board; challenges.policy says who sees them.
"""

from django.db import transaction

import scoring
import scoring.ladder
from datasets.models import Dataset, ScoredSplit

from .entrants import Entrant
from .ladder import LADDER_SPLITS, first_floor, loss_terms
from .late_joiners import late_q
from .models import BoardLadder, BoardStep, Score, SplitResult
from .policy import ladder_steps_q

# What an entry that released nothing shows, to everyone (its participant included).
NOT_RELEASED = "not released: not better than the board's best by the step"
FIELDS = ("seq", "scored", "value", "precision", "current")


def lock(*, dataset: Dataset, split: str) -> BoardLadder:
    """The board's row, locked until the end of the transaction."""
    board, _ = BoardLadder.objects.get_or_create(dataset=dataset, split=split)
    return BoardLadder.objects.select_for_update().get(pk=board.pk)


def _candidates(dataset: Dataset, split: str, loss) -> tuple[list[Score], dict[int, str]]:
    """The Score rows that take part (the Ladder's steps' ranking-loss rows with a value and
    stored terms; baselines and, on the public part, late joiners' entries left out) in
    submission order, and their terms files by submission."""
    if loss is None:
        return [], {}
    found = Score.objects.filter(
        ladder_steps_q("submission__"),
        dataset=dataset,
        split=split,
        loss=loss.name,
        value__isnull=False,
        submission__is_baseline=False,
    )
    if split == ScoredSplit.PUBLIC:
        found = found.exclude(late_q(dataset.challenge, "submission__"))
    # Only what the Ladder reads of them (the value, the participant): a whole board's
    # rows are read at each refresh, so no other column (and no JSON) is loaded.
    rows = list(
        found.select_related("submission")
        .only("submission_id", "value", "submission__team_id", "submission__user_id")
        .order_by("submission__created", "pk")
    )
    names = dict(
        SplitResult.objects.filter(
            submission__in={row.submission_id for row in rows}, split=split
        ).values_list("submission_id", "terms")
    )
    return [row for row in rows if names.get(row.submission_id)], names


def refresh(*, dataset: Dataset, split: str) -> int:
    """Bring the board's Ladder of ``split`` up to date (inside a transaction, after the
    participant's lock); returns the steps written. New entries after an unchanged
    sequence cost one step each (their terms and the holder's); anything else (an entry
    left or was rescored, the holder went, the ranking loss changed) recomputes it."""
    board = lock(dataset=dataset, split=split)
    loss = scoring.find_loss(dataset.task, dataset.effective_ranking_loss)
    rows, names = _candidates(dataset, split, loss)
    steps = {step.submission_id: step for step in BoardStep.objects.filter(board=board)}
    taking_part = {row.submission_id for row in rows}
    gone = [pk for pk in steps if pk not in taking_part]
    stale = (
        bool(gone)
        or board.loss != (loss.name if loss else "")
        or any(
            steps[row.submission_id].scored != row.value
            for row in rows
            if row.submission_id in steps
        )
        or (board.holder_id is None and any(step.value is not None for step in steps.values()))
    )
    if gone:
        BoardStep.objects.filter(board=board, submission_id__in=gone).delete()
    new = []
    for row in rows:  # their place in the sequence: this commit's, in submission order
        if row.submission_id not in steps:
            step = BoardStep(board=board, submission_id=row.submission_id, seq=board.next_seq)
            board.next_seq += 1
            steps[row.submission_id] = step
            new.append(step)
    # Keyed by the step's own id (``changed`` below looks them up so): the steps' ids and
    # their submissions' ids agree only by chance.
    before = {step.pk: _state(step) for step in steps.values() if step.pk is not None}
    by_submission = {row.submission_id: row for row in rows}
    ordered = sorted((steps[pk] for pk in taking_part), key=lambda step: step.seq)
    board.loss = loss.name if loss else ""
    if stale:
        board.holder_id = None
        for step in ordered:
            step.scored, step.value, step.precision = None, None, None
    _run(board, ordered if stale else new, by_submission, names, loss=loss)
    _mark_current(ordered, by_submission)
    BoardStep.objects.bulk_create(new)
    changed = [step for step in ordered if step.pk in before and before[step.pk] != _state(step)]
    BoardStep.objects.bulk_update(changed, FIELDS)
    board.save(update_fields=["holder", "loss", "next_seq"])
    return len(new) + len(changed)


def _state(step: BoardStep) -> tuple:
    return tuple(getattr(step, name) for name in FIELDS)


def _run(board: BoardLadder, todo: list[BoardStep], by_submission, names, *, loss) -> None:
    """The Ladder's steps of ``todo`` (in sequence order) against the board's holder."""
    held = None  # (terms, released value) of the entry holding the board's best
    if board.holder_id is not None and todo:
        holder = by_submission[board.holder_id]
        found = loss_terms(names[holder.submission_id], loss, holder.value)
        value = (
            BoardStep.objects.filter(board=board, submission_id=board.holder_id)
            .values_list("value", flat=True)
            .first()
        )
        held = None if found is None or value is None else (found, value)
    for step in todo:
        row = by_submission[step.submission_id]
        step.scored = row.value
        found = loss_terms(names[row.submission_id], loss, row.value)
        if found is None:
            continue  # no terms for the ranking loss: takes no part, never released
        result = scoring.ladder.step(
            found,
            shown=None if held is None else held[1],
            best_terms=None if held is None else held[0],
            index=0 if held is None else 1,
            best=None if held is None else 0,
            min_precision=1 / found.size,
            first_floor=first_floor(found.size),
        )
        if result.accepted:
            step.value, step.precision = result.shown, result.precision
            board.holder_id = step.submission_id
            held = (found, result.shown)


def _mark_current(ordered: list[BoardStep], by_submission) -> None:
    """Each participant's latest released entry is their best released one: a release
    always beats the board's best, theirs included."""
    latest: dict[Entrant, BoardStep] = {}
    for step in ordered:
        step.current = False
        if step.value is not None:
            latest[Entrant.of(by_submission[step.submission_id].submission)] = step
    for step in latest.values():
        step.current = True


def refresh_dataset(*, dataset: Dataset) -> None:
    """Both feedback splits' boards of the dataset (its ranking loss, or the challenge's
    options, changed), each in its own transaction."""
    for split in LADDER_SPLITS:
        with transaction.atomic():
            refresh(dataset=dataset, split=split)


def released(*, submission_id: int, split: str) -> tuple[float | None, float | None] | None:
    """(released value, its rounding unit) of the entry on the split's board; (None,
    None) when it released nothing; None when it takes no part."""
    found = (
        BoardStep.objects.filter(submission_id=submission_id, board__split=split)
        .values_list("value", "precision")
        .first()
    )
    return None if found is None else (found[0], found[1])
