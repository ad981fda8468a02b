"""The best-per-participant board, kept as a table (models.BestEntry) instead of a window
over every entry of a split at each request.

``refresh`` recomputes one participant's rows of one dataset from their listed entries
(a few hundred Score rows at most) and is called inside every transaction that changes
which of their entries are listed or what they score: scoring, rescoring, moderation,
withdrawal, deletion, final choices and team joins (submissions.standings.entries_changed
and submissions.services._claim), after the participant's lock is taken, so two changes
of one participant are applied one after the other. ``rebuild`` computes a whole dataset
from scratch with the window query the board used before (the backfill, and the oracle
the tests compare the kept table with).

Both follow queries.py's order: value ascending, n/a last, then the submission's time
and id; non-probabilistic entries are left out under a probabilistic loss.
"""

from dataclasses import replace

from django.db.models import Q, Window
from django.db.models.functions import RowNumber

from challenge_site.submissions import entrants
from challenge_site.submissions.entrants import Entrant
from challenge_site.submissions.models import Score
from challenge_site.submissions.policy import listed_q
from datasets.models import Dataset, ScoredSplit, Split

from . import slices
from .models import BestEntry
from .queries import ORDER, Board, _entries

# The splits whose boards can be final (services.FINAL_SPLITS): only they get final rows.
FINAL_SPLITS = (Split.TEST, ScoredSplit.PRIVATE)


def participant_key(team_id: int | None, user_id: int | None) -> str:
    """The participant as entrants.partition groups entries: the team, else the user."""
    if team_id is not None:
        return f"t{team_id}"
    return "" if user_id is None else f"u{user_id}"


def _key(entrant: Entrant | None) -> str:
    return "" if entrant is None else participant_key(entrant.team_id, entrant.user_id)


def _order(row) -> tuple:
    value = row["value"]
    return (value is None, value if value is not None else 0.0, row["created"], row["id"])


def best_of(dataset: Dataset, rows: list[dict]) -> list[BestEntry]:
    """The BestEntry rows of one participant's listed Score rows (dicts with id, created,
    in_final, split, loss, value, key)."""
    losses = dataset.shown_losses()
    names = {loss.name for loss in losses}
    probabilistic = {loss.name for loss in losses if loss.probabilistic}
    # A slice's rows ("nlp@shifted") make boards of their own (scoring.md §8).
    parts = {row["loss"]: slices.split_key(row["loss"]) for row in rows}
    # (submission, split, slice) with some probabilistic value: not point-only there.
    some_probabilistic = {
        (row["id"], row["split"], parts[row["loss"]][1])
        for row in rows
        if parts[row["loss"]][0] in probabilistic and row["value"] is not None
    }
    best: dict[tuple, dict] = {}
    for row in rows:
        loss, slice_name = parts[row["loss"]]
        if loss not in names:
            continue
        if (
            loss in probabilistic
            and row["value"] is None
            and (row["id"], row["split"], slice_name) not in some_probabilistic
        ):
            continue  # point-only under a probabilistic loss: left out (queries.py)
        kinds = [False, True] if row["split"] in FINAL_SPLITS and row["in_final"] else [False]
        for final in kinds:
            slot = (row["split"], row["loss"], final, row["key"])
            if slot not in best or _order(row) < _order(best[slot]):
                best[slot] = row
    return [
        BestEntry(
            dataset_id=dataset.pk,
            split=split,
            loss=loss,
            final=final,
            participant=key,
            submission_id=row["id"],
            value=row["value"],
            created=row["created"],
        )
        for (split, loss, final, key), row in best.items()
    ]


def _listed_rows(dataset: Dataset, entrants: list[Entrant | None]) -> list[dict]:
    """The listed Score rows of the participants' entries (None: the baseline's), each
    with its participant's key."""
    whose = Q(pk__in=[])
    for entrant in entrants:
        whose |= (
            Q(submission__team__isnull=True, submission__user__isnull=True)
            if entrant is None
            else entrant.q("submission__")
        )
    scores = Score.objects.filter(dataset=dataset).filter(listed_q("submission__")).filter(whose)
    return [
        {
            "id": pk,
            "created": created,
            "in_final": in_final,
            "split": split,
            "loss": loss,
            "value": value,
            "key": participant_key(team_id, user_id),
        }
        for pk, created, in_final, split, loss, value, team_id, user_id in scores.values_list(
            "submission_id",
            "submission__created",
            "submission__in_final_ranking",
            "split",
            "loss",
            "value",
            "submission__team_id",
            "submission__user_id",
        )
    ]


def refresh(*, dataset: Dataset, entrant: Entrant | None) -> None:
    """Recompute the participant's rows (None: the baseline's), inside the caller's
    transaction and after the participant's lock."""
    refresh_many(dataset=dataset, entrants=[entrant])


def refresh_many(*, dataset: Dataset, entrants: list[Entrant | None]) -> None:
    """``refresh`` for several participants (a batch of scoring runs) in three queries,
    after every one's lock."""
    rows = best_of(dataset, _listed_rows(dataset, entrants))
    BestEntry.objects.filter(
        dataset=dataset, participant__in=[_key(entrant) for entrant in entrants]
    ).delete()
    BestEntry.objects.bulk_create(rows, batch_size=500)


def window_rows(board: Board) -> list[BestEntry]:
    """Each participant's first entry on ``board`` (best=True) by the window query over
    every listed entry of the split: the from-scratch answer."""
    scores = _entries(board, lazy=False)
    if board.final:
        scores = scores.filter(submission__in_final_ranking=True)
    scores = (
        scores.annotate(
            place=Window(
                RowNumber(), partition_by=entrants.partition("submission__"), order_by=ORDER
            )
        )
        .filter(place=1)
        .values_list(
            "submission_id", "value", "submission__created", "submission__team", "submission__user"
        )
    )
    return [
        BestEntry(
            dataset_id=board.dataset.pk,
            split=board.split,
            loss=board.sort_key,
            final=board.final,
            participant=participant_key(team_id, user_id),
            submission_id=pk,
            value=value,
            created=created,
        )
        for pk, value, created, team_id, user_id in scores
    ]


def recompute(dataset: Dataset) -> list[BestEntry]:
    """Every BestEntry row of the dataset, from scratch (not saved)."""
    rows = []
    stored = _slices_scored(dataset)
    for loss in dataset.shown_losses():
        for split in ScoredSplit.values:
            for slice_name in ["", *stored.get(split, ())]:
                board = Board(dataset, split, loss, best=True, slice=slice_name)
                rows += window_rows(board)
                if split in FINAL_SPLITS:
                    rows += window_rows(replace(board, final=True))
    return rows


def _slices_scored(dataset: Dataset) -> dict[str, set[str]]:
    """Split → the slices some Score row of the dataset is stored under."""
    found: dict[str, set[str]] = {}
    keys = (
        Score.objects.filter(dataset=dataset, loss__contains=slices.SEPARATOR)
        .values_list("split", "loss")
        .distinct()
    )
    for split, stored in keys:
        found.setdefault(split, set()).add(slices.split_key(stored)[1])
    return found


def rebuild(dataset: Dataset) -> int:
    """Replace the dataset's rows with ``recompute``'s (the backfill); returns how many.
    Run it where no scoring runs at the same time (a deploy), or accept that a change
    made meanwhile is put right by that participant's next refresh."""
    rows = recompute(dataset)
    BestEntry.objects.filter(dataset=dataset).delete()
    BestEntry.objects.bulk_create(rows, batch_size=2000)
    return len(rows)
