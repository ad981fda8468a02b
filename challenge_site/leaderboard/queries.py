"""The leaderboard in SQL: rank one split's entries under one loss, then pivot their scores.

A page's rows take two statements, whatever the number of submissions:

1. the ranking: the Score rows of the sort loss, ordered by value (n/a last; +inf
   after every finite value, as SQL compares floats), ties by the submission's time
   and id. The index the Score model names ``score_leaderboard_idx`` (dataset, split,
   loss, value, submission) answers the WHERE and the first ORDER BY key, so pages read
   about as many index entries as they show; equal values are put in time order on
   the fly (PostgreSQL: incremental sort; SQLite: a temp B-tree for the right part of
   the ORDER BY). The best-per-participant view reads the kept table of each
   participant's best entry instead (models.BestEntry, best.py), whose index holds the
   whole order. Deep pages start after (or before) a key, never at an OFFSET
   (``after``/``before``: a few range reads into the same indexes).
2. ``pivot``: those submissions with one FilteredRelation (LEFT JOIN) per loss, each
   found through ``score_unique_submission_split_loss``, the participant's name and the
   split's SplitResult.certain (one more LEFT JOIN, through
   ``splitresult_unique_submission_split``).

Non-probabilistic entries (every probabilistic loss n/a: files of 0/1 probabilities or
zero variances) are left out under a probabilistic sort loss.
"""

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import lru_cache

from django.db.models import Exists, F, FilteredRelation, OuterRef, Q, QuerySet, Subquery

import scoring
from challenge_site.submissions.display import PARTICIPANT_FIELDS, participant_label_of
from challenge_site.submissions.late_joiners import late_q
from challenge_site.submissions.models import Mark, Score, Status, Submission
from challenge_site.submissions.policy import listed_q, not_withdrawn_q, unmoderated_q
from datasets.models import Dataset

from .models import BestEntry

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
    # One slice of the split (scoring.md §8: its Score rows are "LOSS@SLICE"); "": all.
    slice: str = ""
    # Late joiners' entries are left out (policy.late_feedback_withheld: the test's public
    # part, for everyone but organisers, in a challenge that gives them no feedback).
    late_withheld: bool = False

    @property
    def losses(self) -> list[scoring.Loss]:
        return self.dataset.shown_losses()

    def key(self, loss: scoring.Loss | str) -> str:
        """The Score.loss of ``loss`` on this board: "nlp", or "nlp@shifted" on a slice."""
        name = loss if isinstance(loss, str) else loss.name
        return f"{name}@{self.slice}" if self.slice else name

    @property
    def sort_key(self) -> str:
        return self.key(self.sort)

    @property
    def other_probabilistic(self) -> list[str]:
        return [self.key(loss) for loss in self.losses if loss.probabilistic and loss != self.sort]


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
    "heavy_tail",
    "leader_heavy_tail",
    "baseline_heavy_tail",
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
    # Heavy-tailed terms (scoring.tails): the own (and rank) interval, the difference to
    # the leader, to the baseline may be too narrow. None where no interval.
    heavy_tail: bool | None
    leader_heavy_tail: bool | None
    baseline_heavy_tail: bool | None

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
    participant: str  # display.participant_label
    values: dict[str, float | None]  # n/a as None
    computed: dict[str, bool]  # False: no Score row (a loss registered after scoring)
    intervals: dict[str, Interval | None]  # None: no interval (n/a, lift, ece, computing)
    in_final_ranking: bool = True
    # Examples of the whole file of the board's split whose prediction claims certainty
    # (SplitResult.certain; a test part's and a slice's board: the whole test file's);
    # None for a non-probabilistic file and a split scored before it was counted.
    certain: int | None = None

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
            dataset=board.dataset, split=board.split, loss=board.sort_key, value__isnull=True
        )
        .exclude(_probabilistic_elsewhere(board))
        .values("submission_id")
    )
    return scores.exclude(value__isnull=True, submission_id__in=Subquery(point_only))


def _without_late(board: Board, rows: QuerySet) -> QuerySet:
    """``rows`` (with a ``submission`` relation) less the late joiners' entries when the
    board withholds them; a join with the submissions only then."""
    if not board.late_withheld:
        return rows
    return rows.exclude(late_q(board.dataset.challenge, "submission__"))


def _entries(board: Board, *, lazy: bool) -> QuerySet[Score]:
    """The sort loss's Score rows of the entries the board lists (scored submissions only)."""
    scores = Score.objects.filter(
        dataset=board.dataset, split=board.split, loss=board.sort_key
    ).filter(listed_q("submission__"))
    return _without_point_entries(board, _without_late(board, scores), lazy=lazy)


def _rows(board: Board, *, lazy: bool) -> tuple[QuerySet, str]:
    """The rows that rank the board's entries and the path to each entry's time: the sort
    loss's Score rows, or (best per participant) the kept BestEntry rows. Those hold listed
    entries only (best.py keeps them so, in the transactions that change listing), and are
    read without joining the submissions: a join lets PostgreSQL merge them with every
    submission of the site. ``pivot`` reads listed submissions only, whatever the ids."""
    if board.best:
        rows = BestEntry.objects.filter(
            dataset=board.dataset, split=board.split, loss=board.sort_key, final=board.final
        )
        return _without_late(board, rows), "created"
    return _entries(board, lazy=lazy), "submission__created"


def _order(created: str, *, descending: bool = False) -> tuple:
    if descending:
        return (F("value").desc(), F(created).desc(), F("submission_id").desc())
    return (F("value").asc(nulls_last=True), F(created).asc(), F("submission_id").asc())


def ranking(board: Board, *, paged: bool) -> QuerySet:
    """The board's submission ids in rank order (``paged``: to be read a LIMIT at a time)."""
    rows, created = _rows(board, lazy=paged)
    return rows.order_by(*_order(created)).values_list("submission_id", flat=True)


def ranked_ids(board: Board, *, offset: int = 0, limit: int | None = None) -> list[int]:
    """Submission ids of the board's entries in rank order, ``limit`` of them from ``offset``
    (shallow pages only: deep ones start from a Key, see ``after``)."""
    ids = ranking(board, paged=limit is not None)
    return list(ids[offset : None if limit is None else offset + limit])


@dataclass(frozen=True)
class Key:
    """Where an entry stands in the board's order: its sort value (None: n/a), time, id."""

    value: float | None
    created: datetime
    pk: int

    @classmethod
    def of(cls, board: Board, entry: Entry) -> "Key":
        return cls(entry.values[board.sort.name], entry.created, entry.pk)


def _later(created: str, key: Key, *, before: bool) -> Q:
    """Same value as ``key``: a later (``before``: earlier) time, or the same time and id."""
    op = "lt" if before else "gt"
    return Q(**{f"{created}__{op}": key.created}) | Q(
        **{created: key.created, f"submission_id__{op}": key.pk}
    )


def after(board: Board, key: Key | None, *, limit: int) -> list[int]:
    """Up to ``limit`` ids of the entries after ``key`` in rank order (None: from the
    top): one range read into the index from the key's value (dropping the key's
    earlier ties on the way), then, at the end of the values, the n/a entries."""
    rows, created = _rows(board, lazy=True)
    if key is None:
        parts = [rows]
    elif key.value is None:
        parts = [rows.filter(_later(created, key, before=False), value__isnull=True)]
    else:
        parts = [
            rows.filter(value__gte=key.value).filter(
                Q(value__gt=key.value) | _later(created, key, before=False)
            ),
            rows.filter(value__isnull=True),
        ]
    return _collect(parts, created, limit=limit, descending=False)


def before(board: Board, key: Key, *, limit: int) -> list[int]:
    """Up to ``limit`` ids of the entries just before ``key``, in rank order: the same
    reads backwards."""
    rows, created = _rows(board, lazy=True)
    if key.value is None:
        parts = [
            rows.filter(_later(created, key, before=True), value__isnull=True),
            rows.filter(value__isnull=False),
        ]
    else:
        parts = [
            rows.filter(value__lte=key.value).filter(
                Q(value__lt=key.value) | _later(created, key, before=True)
            )
        ]
    return _collect(parts, created, limit=limit, descending=True)[::-1]


def _collect(parts: list[QuerySet], created: str, *, limit: int, descending: bool) -> list[int]:
    """The parts' ids in order until ``limit``: the next part is read only when the ones
    before run out (the end of the board), so a page takes one query, at most two."""
    ids: list[int] = []
    order = _order(created, descending=descending)
    for part in parts:
        ids += part.order_by(*order).values_list("submission_id", flat=True)[: limit - len(ids)]
        if len(ids) >= limit:
            break
    return ids


def final_ranks(board: Board) -> dict[int, int]:
    """{submission id: rank} of the entries a final board ranks: each participant's best
    among those counting for the final ranking (the baseline in its place)."""
    ids = ranked_ids(replace(board, best=True))
    return {pk: rank for rank, pk in enumerate(ids, start=1)}


def position(board: Board, entry: Entry, *, value: float) -> int:
    """Rank of an entry with a (non-n/a) sort ``value`` among all the board's entries.

    The entries ranked before it by value are counted on the Score rows alone, an
    index-only range of score_leaderboard_idx (a join with the submissions makes
    PostgreSQL read every submission: seconds at a million), less the few entries such
    rows have that the board does not list (hidden, disqualified, withdrawn or being
    scored again), read apart through their partial indexes; ties at ``value`` (few) are
    ordered by time and id with the join."""
    scores = Score.objects.filter(dataset=board.dataset, split=board.split, loss=board.sort_key)
    below = _without_late(board, scores.filter(value__lt=value))
    unlisted = _unlisted_ids(board.dataset)
    count = below.count()
    if unlisted:
        count -= below.filter(submission_id__in=unlisted).count()
    earlier = Q(submission__created__lt=entry.created) | Q(
        submission__created=entry.created, submission_id__lt=entry.pk
    )
    ties = _without_late(board, scores.filter(value=value).filter(listed_q("submission__")))
    count += ties.filter(earlier).count()
    return count + 1


def _unlisted_ids(dataset: Dataset) -> list[int]:
    """The dataset's submissions that may hold Score rows but are not listed: moderated
    (submission_moderated_idx), withdrawn (submission_withdrawn_idx), or queued or running
    again (submission_pending_idx): few, whatever the board's size."""
    mine = Submission.objects.filter(dataset=dataset)
    # Three reads, each of one partial index (an OR of them may be planned as a scan).
    found = set(mine.exclude(unmoderated_q()).values_list("pk", flat=True))
    found.update(mine.exclude(not_withdrawn_q()).values_list("pk", flat=True))
    pending = mine.filter(status__in=[Status.QUEUED, Status.RUNNING])
    found.update(pending.values_list("pk", flat=True))
    return sorted(found)


@lru_cache(maxsize=64)
def _pivot_rows(split: str, losses: tuple[str, ...]) -> QuerySet:
    """The pivot's query without its ids, built once per split and set of losses: setting
    up five FilteredRelations and ~60 columns costs the ORM more time than the database
    takes to answer. Never evaluated itself: ``pivot`` filters a copy (a QuerySet is
    cloned by filter, so sharing it between requests and threads is safe)."""
    relations, columns = {}, []
    for i, loss in enumerate(losses):
        relations[f"s{i}"] = FilteredRelation(
            "scores", condition=Q(scores__split=split, scores__loss=loss)
        )
        columns += [f"s{i}__value", f"s{i}__id", *(f"s{i}__{name}" for name in INTERVAL_FIELDS)]
    # The split's SplitResult (at most one per submission and split): its certainty count.
    relations["result"] = FilteredRelation("split_results", condition=Q(split_results__split=split))
    return (
        Submission.objects.filter(listed_q())
        .annotate(**relations)
        .values_list(*SUBMISSION_FIELDS, "result__certain", *columns)
        .order_by()  # put in rank order by pivot, not by the model's default ordering
    )


_NO_INTERVAL = [None] * len(INTERVAL_FIELDS)


def pivot(board: Board, ids: Sequence[int]) -> list[Entry]:
    """The submissions ``ids`` in that order with every loss of the board's split, one
    FilteredRelation (LEFT JOIN through score_unique_submission_split_loss) per loss;
    on a slice's board, the slice's rows, under the losses' own names."""
    if not ids:
        return []
    names = [loss.name for loss in board.losses]
    keys = tuple(board.key(name) for name in names)
    rows = _pivot_rows(board.split, keys).filter(pk__in=list(ids))
    by_id = {}
    width = 2 + len(INTERVAL_FIELDS)
    named = len(PARTICIPANT_FIELDS)
    for pk, method, authors, created, mark, final, *rest in rows:
        participant, certain, scores = rest[:named], rest[named], rest[named + 1 :]
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
                name: None if loss[2:] == _NO_INTERVAL else Interval(*loss[2:])
                for name, loss in zip(names, per_loss, strict=True)
            },
            final,
            certain,
        )
    return [by_id[pk] for pk in ids if pk in by_id]


def baseline_score(dataset: Dataset, *, split: str, loss: str) -> tuple[int, float | None] | None:
    """(submission id, value) of the scored baseline's ``loss``; None without one.

    Found through submission_one_baseline_per_dataset and score_unique_submission_split_loss.
    """
    scores = Score.objects.filter(
        submission__dataset=dataset, submission__is_baseline=True, split=split, loss=loss
    )
    return scores.filter(listed_q("submission__")).values_list("submission_id", "value").first()


def has_point_only_entries(board: Board) -> bool:
    """Whether some scored entry of the split is non-probabilistic."""
    probabilistic = [board.key(loss) for loss in board.losses if loss.probabilistic]
    if not probabilistic:
        return False
    first, others = probabilistic[0], probabilistic[1:]
    return (
        Score.objects.filter(
            dataset=board.dataset, split=board.split, loss=first, value__isnull=True
        )
        .filter(listed_q("submission__"))
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
