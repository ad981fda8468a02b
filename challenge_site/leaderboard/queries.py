"""The leaderboard in SQL: rank one split's entries under one loss, then pivot their scores.

A page's rows take two statements, whatever the number of submissions:

1. ``ranked_ids``: the Score rows of the sort loss, ordered by value (n/a last; +inf
   after every finite value, as SQL compares floats), ties by the submission's time
   and id. The index the Score model names ``score_leaderboard_idx`` (dataset, split,
   loss, value, submission) answers the WHERE and the first ORDER BY key, so pages read
   about as many index entries as they show; equal values are put in time order on
   the fly (PostgreSQL: incremental sort; SQLite: a temp B-tree for the right part of
   the ORDER BY). Each sort loss uses the same index with its own ``loss`` prefix.
   The best-per-participant view numbers each participant's entries with a window
   function and keeps the first, which reads every entry of the split.
2. ``pivot``: those submissions with one FilteredRelation (LEFT JOIN) per loss, each
   found through ``score_unique_submission_split_loss``, and the participant's name.

Non-probabilistic entries (every probabilistic loss n/a: files of 0/1 probabilities or
zero variances) are left out under a probabilistic sort loss.
"""

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from django.db.models import Exists, F, FilteredRelation, OuterRef, Q, QuerySet, Subquery, Window
from django.db.models.functions import RowNumber

import scoring
from challenge_site.policy import PARTICIPANT_FIELDS, listed_scores, participant_label_of
from challenge_site.submissions import entrants
from challenge_site.submissions.models import Mark, Score, Submission
from datasets.models import Dataset

# Ascending, n/a last, then submission time and id (ids break ties of equal times).
ORDER = (
    F("value").asc(nulls_last=True),
    F("submission__created").asc(),
    F("submission_id").asc(),
)
SUBMISSION_FIELDS = (
    "id",
    "method",
    "authors",
    "created",
    "mark",
    "in_final_ranking",
    *PARTICIPANT_FIELDS,
)


@dataclass(frozen=True)
class Board:
    """One leaderboard: a dataset's split sorted by one of its task's losses."""

    dataset: Dataset
    split: str
    sort: scoring.Loss
    best: bool = False
    # Final selections are in force (challenge_site.submissions.finals): only each
    # participant's best entry among those counting for the final ranking gets a rank.
    final: bool = False

    @property
    def losses(self) -> list[scoring.Loss]:
        return scoring.losses_for(self.dataset.task)

    @property
    def other_probabilistic(self) -> list[str]:
        return [loss.name for loss in self.losses if loss.probabilistic and loss != self.sort]


# The bootstrap fields of a Score row (intervals.py writes them), in this order.
INTERVAL_FIELDS = (
    "lower",
    "upper",
    "leader_lower",
    "leader_upper",
    "baseline_lower",
    "baseline_upper",
    "tied_with_leader",
    "rank_lower",
    "rank_upper",
)


@dataclass(frozen=True)
class Interval:
    """How sure one score is (scoring.md §5); None where not (yet) computed."""

    lower: float | None
    upper: float | None
    leader_lower: float | None
    leader_upper: float | None
    baseline_lower: float | None
    baseline_upper: float | None
    tied_with_leader: bool | None
    rank_lower: int | None
    rank_upper: int | None

    @property
    def own(self) -> tuple[float, float] | None:
        return None if self.lower is None else (self.lower, self.upper)

    @property
    def vs_leader(self) -> tuple[float, float] | None:
        return None if self.leader_lower is None else (self.leader_lower, self.leader_upper)

    @property
    def vs_baseline(self) -> tuple[float, float] | None:
        return None if self.baseline_lower is None else (self.baseline_lower, self.baseline_upper)

    @property
    def rank(self) -> tuple[int, int] | None:
        return None if self.rank_lower is None else (self.rank_lower, self.rank_upper)


@dataclass(frozen=True)
class Entry:
    """One submission of a page with its scores on the board's split."""

    pk: int
    method: str
    authors: str
    created: datetime
    mark: str
    is_baseline: bool
    participant: str  # policy.participant_label
    values: dict[str, float | None]  # n/a as None
    computed: dict[str, bool]  # False: no Score row (a loss registered after scoring)
    intervals: dict[str, Interval | None]  # None: no interval (n/a, lift, ece, computing)
    in_final_ranking: bool = True

    @property
    def mark_label(self) -> str:
        return Mark(self.mark).label


def _probabilistic_elsewhere(board: Board) -> Exists:
    """Some other probabilistic loss of the same submission and split has a value."""
    return Exists(
        Score.objects.filter(
            submission=OuterRef("submission"),
            split=board.split,
            loss__in=board.other_probabilistic,
            value__isnull=False,
        )
    )


def _without_point_entries(board: Board, scores: QuerySet[Score], *, lazy: bool):
    """Leave out non-probabilistic entries: their sort value is n/a and so is every
    other probabilistic loss.

    ``lazy`` tests the other losses row by row, only for the n/a rows a LIMITed scan
    reaches. Otherwise the non-probabilistic entries are found once, from the n/a end
    of the index (a small set), which keeps full scans (window, export) cheap and
    keeps PostgreSQL from pricing a subquery per row (and compiling the plan with JIT).
    """
    if not board.sort.probabilistic:
        return scores
    if not board.other_probabilistic:
        return scores.filter(value__isnull=False)
    if lazy:
        return scores.filter(Q(value__isnull=False) | _probabilistic_elsewhere(board))
    point_only = (
        Score.objects.filter(
            dataset=board.dataset, split=board.split, loss=board.sort.name, value__isnull=True
        )
        .exclude(_probabilistic_elsewhere(board))
        .values("submission_id")
    )
    return scores.exclude(value__isnull=True, submission_id__in=Subquery(point_only))


def _entries(board: Board, *, lazy: bool) -> QuerySet[Score]:
    """The sort loss's Score rows of the entries the board lists (scored submissions only)."""
    scores = listed_scores(
        Score.objects.filter(dataset=board.dataset, split=board.split, loss=board.sort.name)
    )
    return _without_point_entries(board, scores, lazy=lazy)


def ranking(board: Board, *, paged: bool) -> QuerySet:
    """The board's submission ids in rank order (``paged``: to be read a LIMIT at a time)."""
    scores = _entries(board, lazy=paged and not board.best)
    if board.best and board.final:
        scores = scores.filter(submission__in_final_ranking=True)
    if board.best:
        # Per team, or user without one; the baseline has neither: a partition of its own.
        scores = scores.annotate(
            place=Window(
                RowNumber(), partition_by=entrants.partition("submission__"), order_by=ORDER
            )
        ).filter(place=1)
    return scores.order_by(*ORDER).values_list("submission_id", flat=True)


def ranked_ids(board: Board, *, offset: int = 0, limit: int | None = None) -> list[int]:
    """Submission ids of the board's entries in rank order, ``limit`` of them from ``offset``."""
    ids = ranking(board, paged=limit is not None)
    return list(ids[offset : None if limit is None else offset + limit])


def final_ranks(board: Board) -> dict[int, int]:
    """{submission id: rank} of the entries a final board ranks: each participant's best
    among those counting for the final ranking (the baseline in its place)."""
    ids = ranked_ids(replace(board, best=True))
    return {pk: rank for rank, pk in enumerate(ids, start=1)}


def position(board: Board, entry: Entry, *, value: float) -> int:
    """Rank of an entry with a (non-n/a) sort ``value`` among all the board's entries."""
    before = (
        Q(value__lt=value)
        | Q(value=value, submission__created__lt=entry.created)
        | Q(value=value, submission__created=entry.created, submission_id__lt=entry.pk)
    )
    return _entries(board, lazy=False).filter(before).count() + 1


def pivot(board: Board, ids: Sequence[int]) -> list[Entry]:
    """The submissions ``ids`` in that order with every loss of the board's split, one
    FilteredRelation (LEFT JOIN through score_unique_submission_split_loss) per loss."""
    if not ids:
        return []
    relations, columns = {}, []
    for i, loss in enumerate(board.losses):
        relations[f"s{i}"] = FilteredRelation(
            "scores", condition=Q(scores__split=board.split, scores__loss=loss.name)
        )
        columns += [f"s{i}__value", f"s{i}__id", *(f"s{i}__{name}" for name in INTERVAL_FIELDS)]
    rows = (
        Submission.objects.filter(pk__in=list(ids))
        .annotate(**relations)
        .values_list(*SUBMISSION_FIELDS, *columns)
        .order_by()  # put in rank order below, not by the model's default ordering
    )
    names = [loss.name for loss in board.losses]
    by_id = {}
    width = 2 + len(INTERVAL_FIELDS)
    named = len(PARTICIPANT_FIELDS)
    for pk, method, authors, created, mark, final, *rest in rows:
        participant, scores = rest[:named], rest[named:]
        per_loss = [scores[i : i + width] for i in range(0, len(scores), width)]
        by_id[pk] = Entry(
            pk,
            method,
            authors,
            created,
            mark,
            participant[0],  # is_baseline
            participant_label_of(participant),
            {name: loss[0] for name, loss in zip(names, per_loss, strict=True)},
            {name: loss[1] is not None for name, loss in zip(names, per_loss, strict=True)},
            {
                name: None if all(v is None for v in loss[2:]) else Interval(*loss[2:])
                for name, loss in zip(names, per_loss, strict=True)
            },
            final,
        )
    return [by_id[pk] for pk in ids if pk in by_id]


def baseline_score(dataset: Dataset, *, split: str, loss: str) -> tuple[int, float | None] | None:
    """(submission id, value) of the scored baseline's ``loss``; None without one.

    Found through submission_one_baseline_per_dataset and score_unique_submission_split_loss.
    """
    scores = Score.objects.filter(
        submission__dataset=dataset, submission__is_baseline=True, split=split, loss=loss
    )
    return listed_scores(scores).values_list("submission_id", "value").first()


def has_point_only_entries(board: Board) -> bool:
    """Whether some scored entry of the split is non-probabilistic."""
    probabilistic = [loss.name for loss in board.losses if loss.probabilistic]
    if not probabilistic:
        return False
    first, others = probabilistic[0], probabilistic[1:]
    return (
        listed_scores(
            Score.objects.filter(
                dataset=board.dataset, split=board.split, loss=first, value__isnull=True
            )
        )
        .exclude(
            Exists(
                Score.objects.filter(
                    submission=OuterRef("submission"),
                    split=board.split,
                    loss__in=others,
                    value__isnull=False,
                )
            )
        )
        .exists()
    )
