"""Leaderboards and results: what a URL asks for, who may see it, and the rows to show.

Every function takes keyword arguments; ``now`` is explicit where the clock matters.
Who may see which split, and which entries are listed, is the policy's to say
(challenges.policy, submissions.policy).
"""

import math
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from functools import partial

from django.contrib.auth.models import AnonymousUser
from django.core.cache import cache

import scoring
from challenge_site.challenges import policy
from challenge_site.query_params import BadOptions
from challenge_site.submissions import finals
from datasets.models import TEST_PARTS, Dataset, ScoredSplit, Split
from scoring import bootstrap

from . import generation, queries, slices
from .cursors import Cursor
from .queries import Board, Entry, Interval

PAGE_SIZE = 50
# Pages up to this number may be asked for by number (an OFFSET of at most ~1000 rows);
# later ones are reached by the keyset links ("after"/"before" a row), at any depth.
SHALLOW_PAGES = 20
RESULTS_SIZE = 10
EXPORT_CHUNK = 500
SPLITS = (Split.VAL, Split.TEST)
# The splits whose ranking is final once published (final selections apply).
FINAL_SPLITS = (Split.TEST, ScoredSplit.PRIVATE)
VIEWS = {"all": "All submissions", "best": "Best per participant"}
# The baseline's rank below a results table, kept per generation (a new one is a new key;
# this only bounds how long an unused one stays).
BASELINE_RANK_SECONDS = 3600


# --- What the URL asks for ------------------------------------------------------------


def default_sort(dataset: Dataset) -> scoring.Loss:
    losses = {loss.name: loss for loss in dataset.shown_losses()}
    return losses.get(dataset.effective_ranking_loss) or next(iter(losses.values()))


def point_loss(dataset: Dataset) -> scoring.Loss | None:
    """The task's first loss of point predictions (01l, nmse), the chapter's second column."""
    return next((loss for loss in dataset.shown_losses() if not loss.probabilistic), None)


def parse_board(
    *,
    dataset: Dataset,
    split: str | None,
    sort: str | None,
    view: str | None,
    slice: str | None = None,  # noqa: A002 - the query parameter's name
    user=None,
    now=None,
) -> Board:
    """A Board from query parameters; missing ones take their defaults (val, the
    dataset's ranking loss, all submissions, the whole split). BadOptions names every
    wrong one; a ``slice`` must be one ``user`` may see at ``now`` (slices.parse)."""
    losses = {loss.name: loss for loss in dataset.shown_losses()}
    errors = {}
    split = split or Split.VAL
    splits = board_splits(dataset.challenge)
    if split not in splits:
        errors["split"] = f"expected one of {', '.join(splits)}, found {split!r}"
    if sort and sort not in losses:
        errors["sort"] = (
            f"expected one of {', '.join(losses)} for a {dataset.task} dataset, found {sort!r}"
        )
    view = view or "all"
    if view not in VIEWS:
        errors["view"] = f"expected one of {', '.join(VIEWS)}, found {view!r}"
    chosen = ""
    if slice and "split" not in errors:
        try:
            chosen, _ = slices.parse(dataset, split, slice, user=user, now=now)
        except BadOptions as error:
            errors.update(error.errors)
    elif slice:
        errors["slice"] = slices.NONE_SHOWN
    if errors:
        raise BadOptions(errors)
    return Board(
        dataset,
        split,
        losses[sort] if sort else default_sort(dataset),
        view == "best",
        final=split in FINAL_SPLITS and finals.in_force(dataset),
        slice=chosen,
        late_withheld=policy.late_feedback_withheld(
            dataset.challenge, split, user=user or AnonymousUser()
        ),
    )


def board_splits(challenge) -> tuple[str, ...]:
    """The splits with leaderboards: validation and test, and the test's two parts when
    the challenge has a public part."""
    if challenge.has_public_part:
        return (Split.VAL, ScoredSplit.PUBLIC, ScoredSplit.PRIVATE, Split.TEST)
    return SPLITS


def split_name(split: str) -> str:
    """How a board's split reads in a sentence: "validation split", "test split's public
    part"."""
    if split == ScoredSplit.PUBLIC:
        return "test split's public part"
    if split == ScoredSplit.PRIVATE:
        return "test split's private part"
    return f"{ScoredSplit(split).label.lower()} split"


def board_name(board: Board) -> str:
    """The board's examples in a sentence: "validation split", "slice shifted of the test
    split"."""
    name = split_name(board.split)
    return f"slice {board.slice} of the {name}" if board.slice else name


def final_split(challenge) -> str:
    """The split the final ranking is computed on: the private part, or the whole test."""
    return ScoredSplit.PRIVATE if challenge.has_public_part else Split.TEST


def sliced_split(split: str) -> str:
    """The split whose slices a board of ``split`` shows: a test part's are the whole test
    split's (slices label the whole split, spec §8)."""
    return Split.TEST if split in TEST_PARTS else split


def check_shallow(number: int) -> None:
    """BadOptions for a leaderboard page asked for by a number past the shallow pages
    (the Ladder's boards, one row per participant, take any number)."""
    if number > SHALLOW_PAGES:
        raise BadOptions(
            {"page": f"pages after {SHALLOW_PAGES} are reached by the next and previous links"}
        )


def board_params(board: Board, **changes) -> dict[str, str]:
    """The query parameters that name ``board`` (with ``changes``), for links."""
    params = {
        "split": board.split,
        "sort": board.sort.name,
        "view": "best" if board.best else "all",
    }
    if board.slice:
        params["slice"] = board.slice
    params.update({key: str(value) for key, value in changes.items()})
    if not params.get("slice"):
        params.pop("slice", None)  # the whole split (slice="" drops a board's slice)
    return params


# --- Rows -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    loss: scoring.Loss
    value: float | None
    computed: bool  # False: the loss was registered after this entry was scored
    interval: Interval | None = None  # how sure the value is; None: none (yet)


@dataclass(frozen=True)
class Row:
    rank: int | None  # None when the sort loss is n/a for this entry
    entry: Entry
    cells: list[Cell]
    non_probabilistic: bool
    gain: float | None  # the baseline's ranking loss minus this entry's
    rank_interval: tuple[int, int] | None = None  # best-per-participant view only
    # On a final board: listed, but not its participant's best final entry (not ranked).
    unranked: bool = False

    @property
    def is_baseline(self) -> bool:
        return self.entry.is_baseline

    @property
    def participant(self) -> str:
        return self.entry.participant

    def value(self, loss_name: str) -> float | None:
        return next((cell.value for cell in self.cells if cell.loss.name == loss_name), None)

    def interval(self, loss_name: str) -> Interval | None:
        return next((cell.interval for cell in self.cells if cell.loss.name == loss_name), None)


def gain_unit(dataset: Dataset) -> str:
    """What the gain over the baseline is measured in: for a log loss (nlp, nlpd) the
    information per example in the dataset's base; otherwise the ranking loss's own units."""
    ranking = ranking_loss(dataset)
    if ranking is None or not ranking.log_scale:
        return f"{dataset.effective_ranking_loss} units"
    base = dataset.log_base
    if math.isclose(base, 2):
        return "bits"
    if math.isclose(base, math.e):
        return "nats"
    if math.isclose(base, 10):
        return "bans"
    return f"base-{base:g} log units"


def information_gain(*, baseline: float | None, value: float | None) -> float | None:
    """baseline − entry (positive: better than the baseline); None if undefined; 0 when
    the two are the same score (``bootstrap.same``: within TIE_RTOL relative), since what
    separates them then is the rounding of their sums (an entry identical to the
    baseline would otherwise gain "+3.037e-13")."""
    if baseline is None or value is None or (math.isinf(baseline) and math.isinf(value)):
        return None
    if bootstrap.same(baseline, value):
        return 0.0
    return baseline - value


def ranking_loss(dataset: Dataset) -> scoring.Loss | None:
    return next(
        (
            loss
            for loss in scoring.losses_for(dataset.task)
            if loss.name == dataset.effective_ranking_loss
        ),
        None,
    )


def baseline_ranking_score(board: Board) -> tuple[int | None, float | None]:
    """(submission id, value) of the baseline's ranking loss on the board's split."""
    ranking = ranking_loss(board.dataset)
    if ranking is None:
        return None, None
    found = queries.baseline_score(board.dataset, split=board.split, loss=board.key(ranking))
    return found or (None, None)


def make_rows(
    board: Board,
    entries: list[Entry],
    *,
    first_rank: int,
    baseline: float | None,
    final_ranks: dict[int, int] | None = None,
) -> list[Row]:
    """Rows numbered from ``first_rank``; on a final board, ``final_ranks`` numbers the
    ranked entries and every other row is unranked."""
    ranking = ranking_loss(board.dataset)
    losses = board.losses  # looked up in the registry on each access: once per page
    probabilistic = [loss.name for loss in losses if loss.probabilistic]
    rows = []
    for position, entry in enumerate(entries, start=first_rank):
        values, computed = entry.values, entry.computed
        sort_interval = entry.intervals[board.sort.name]
        rank = None if values[board.sort.name] is None else position
        if final_ranks is not None:
            rank = final_ranks.get(entry.pk) if rank is not None else None
        rows.append(
            Row(
                rank=rank,
                entry=entry,
                cells=[
                    Cell(loss, values[loss.name], computed[loss.name], entry.intervals[loss.name])
                    for loss in losses
                ],
                non_probabilistic=bool(probabilistic)
                and all(values[name] is None for name in probabilistic),
                gain=None
                if ranking is None
                else information_gain(baseline=baseline, value=values[ranking.name]),
                # Ranks are resampled among each participant's best entry only.
                rank_interval=sort_interval.rank
                if board.best and sort_interval is not None and not entry.is_baseline
                else None,
                unranked=final_ranks is not None
                and rank is None
                and values[board.sort.name] is not None,
            )
        )
    return rows


def parse_cursor(*, after: str | None, before: str | None) -> Cursor | None:
    """The Cursor of an ``after`` or ``before`` query parameter; BadOptions if malformed."""
    if after and before:
        raise BadOptions({"after": "give either after or before, not both"})
    if not (after or before):
        return None
    try:
        return Cursor.parse(after or before, before=bool(before))
    except ValueError as error:
        raise BadOptions({"after" if after else "before": str(error)}) from None


@dataclass(frozen=True)
class Page:
    board: Board
    number: int
    size: int
    rows: list[Row]
    has_next: bool
    baseline_id: int | None
    baseline: float | None  # the baseline's ranking loss on this split
    first_rank: int = 1  # the position of the first row (its rank, unless n/a or final)
    has_earlier: bool = False
    cursor: Cursor | None = None  # how this page was asked for; None: by its number

    @property
    def has_previous(self) -> bool:
        return self.has_earlier

    @property
    def first(self) -> int:
        return self.first_rank

    @property
    def last(self) -> int:
        return self.first + len(self.rows) - 1

    def params(self) -> dict[str, str]:
        """The query parameters that ask for this page again (the forest plot's)."""
        return self.cursor.params() if self.cursor else {"page": str(self.number)}

    def next_params(self) -> dict[str, str] | None:
        """Page numbers while shallow, then a keyset cursor after the last row."""
        if not self.has_next:
            return None
        if self.cursor is None and self.number < SHALLOW_PAGES:
            return {"page": str(self.number + 1)}
        key = queries.Key.of(self.board, self.rows[-1].entry)
        return Cursor(False, self.last, key).params()

    def previous_params(self) -> dict[str, str] | None:
        if not self.has_previous:
            return None
        aligned = (self.first - 1) % self.size == 0
        if self.cursor is None or (aligned and self.first - 1 <= SHALLOW_PAGES * self.size):
            return {"page": str((self.first - 1) // self.size)}
        key = queries.Key.of(self.board, self.rows[0].entry)
        return Cursor(True, self.first, key).params()


def _page_ids(board: Board, *, number: int, size: int, cursor: Cursor | None):
    """(ids of the page, the first row's position, whether rows come before, after)."""
    if cursor is None:
        offset = (number - 1) * size
        ids = queries.ranked_ids(board, offset=offset, limit=size + 1)
        return ids[:size], offset + 1, number > 1, len(ids) > size
    if cursor.before:
        ids = queries.before(board, cursor.key, limit=size + 1)
        earlier = len(ids) > size
        ids = ids[-size:] if earlier else ids
        # The key's own row comes next (the page ends just before it).
        return ids, max(1, cursor.rank - len(ids)), earlier, True
    ids = queries.after(board, cursor.key, limit=size + 1)
    return ids[:size], cursor.rank + 1, True, len(ids) > size


def leaderboard_page(
    *, board: Board, number: int = 1, size: int = PAGE_SIZE, cursor: Cursor | None = None
) -> Page:
    """Page ``number`` of the board (shallow pages), or the page a ``cursor`` names: a
    few queries (ranking, baseline, pivot), whatever the number of entries or the depth."""
    ids, first_rank, earlier, later = _page_ids(board, number=number, size=size, cursor=cursor)
    baseline_id, baseline = baseline_ranking_score(board)
    entries = queries.pivot(board, ids)
    ranks = queries.final_ranks(board) if board.final and not board.best else None
    rows = make_rows(board, entries, first_rank=first_rank, baseline=baseline, final_ranks=ranks)
    number = (first_rank - 1) // size + 1 if cursor else number
    return Page(
        board,
        number,
        size,
        rows,
        later,
        baseline_id,
        baseline,
        first_rank=first_rank,
        has_earlier=earlier,
        cursor=cursor,
    )


def iter_rows(*, board: Board, chunk: int | None = None) -> Iterator[Row]:
    """Every row of the board in order (for exports), read a chunk at a time from a key
    (never an OFFSET, never the whole ranking in memory): constant memory."""
    chunk = chunk or EXPORT_CHUNK
    _, baseline = baseline_ranking_score(board)
    ranks = queries.final_ranks(board) if board.final and not board.best else None
    key, first = None, 1
    # A page's worth first, so the download starts as fast as a page appears.
    size = min(chunk, PAGE_SIZE)
    while True:
        ids = queries.after(board, key, limit=size)
        entries = queries.pivot(board, ids)
        yield from make_rows(board, entries, first_rank=first, baseline=baseline, final_ranks=ranks)
        if len(ids) < size or not entries:
            return
        key, first, size = queries.Key.of(board, entries[-1]), first + len(ids), chunk


# --- Results --------------------------------------------------------------------------


@dataclass(frozen=True)
class DatasetResults:
    """The chapter's table for one dataset: the leading test entries under the ranking
    loss, the baseline in its place, and (as on the 2006 pages) a second table under
    the point loss when some entries are non-probabilistic."""

    dataset: Dataset
    ranking: scoring.Loss
    point: scoring.Loss | None
    rows: list[Row]
    baseline_below: Row | None  # the baseline when it ranks below the leading entries
    point_rows: list[Row]
    unit: str
    # A column block per slice of the split (scoring.md §8, as the 2006 results showed
    # in-domain and shifted scores): each slice's name, and by submission id its Entry
    # on the slice (its losses' values and intervals there).
    slices: tuple[str, ...] = ()
    slice_entries: dict[str, dict[int, Entry]] = field(default_factory=dict)
    # The split the slices label (the whole test split when the ranking is on its private
    # part: a slice's examples of both parts, as the 2006 pages scored the whole test set).
    slice_split: str = Split.TEST

    @property
    def losses_shown(self) -> list[scoring.Loss]:
        """The losses of each block: the ranking loss, and the point loss if another."""
        if self.point is None or self.point == self.ranking:
            return [self.ranking]
        return [self.ranking, self.point]

    def slice_cells(self, row: Row) -> list[tuple[float | None, Interval | None]]:
        """(value, interval) of each slice block's losses for ``row``, block by block."""
        return slices.cells(self.slice_entries, row.entry.pk, self.losses_shown)

    @property
    def width(self) -> int:
        """The number of columns of the main table."""
        return 6 + len(self.losses_shown) + len(self.slices) * len(self.losses_shown)


def _rank_of(board: Board, entry: Entry, value: float) -> int | None:
    if board.best:
        return queries.final_ranks(board).get(entry.pk)
    return queries.position(board, entry, value=value)


def _baseline_row(board: Board, page: Page) -> Row | None:
    """The baseline's row with its rank, for a board sorted by the ranking loss."""
    if page.baseline_id is None:
        return None
    [entry] = queries.pivot(board, [page.baseline_id])
    if page.baseline is None:
        rank = None
    else:
        # Counted on the board's index up to the baseline's value (or, best per
        # participant, every participant's best ranked): work that grows with the board,
        # done once per generation of its listed scores (a count of listed entries, the
        # same for every viewer of this board: generation.py).
        rank = cache.get_or_set(
            generation.key(
                board.dataset,
                "baseline-rank",
                board.split,
                board.sort_key,
                board.best,
                board.final,
                board.late_withheld,
                entry.pk,
                repr(page.baseline),
            ),
            partial(_rank_of, board, entry, page.baseline),
            timeout=BASELINE_RANK_SECONDS,
        )
    [row] = make_rows(board, [entry], first_rank=rank or 0, baseline=page.baseline)
    return row


def _has_point_only_entries(board: Board) -> bool:
    """queries.has_point_only_entries, once per generation of the dataset's listed scores
    (it reads the split's n/a scores, work that grows with the board: 10 ms of a results
    page at a million entries; the same for every viewer, as the baseline's rank)."""
    return cache.get_or_set(
        generation.key(board.dataset, "point-only", board.split),
        partial(queries.has_point_only_entries, board),
        timeout=BASELINE_RANK_SECONDS,
    )


def dataset_results(
    *, dataset: Dataset, size: int = RESULTS_SIZE, names: tuple[str, ...] = ()
) -> DatasetResults | None:
    """The results table of ``dataset``; ``names``: the slices to show a column block for,
    of the final split or, when that is the test's private part, of the whole test split
    (:func:`sliced_split`; those the reader may see: the view asks slices.visible_names)."""
    ranking = ranking_loss(dataset)
    if ranking is None:
        return None
    split = final_split(dataset.challenge)
    final = finals.in_force(dataset)
    # The final ranking: each participant's best entry among those that count.
    board = Board(dataset, split, ranking, best=final, final=final)
    page = leaderboard_page(board=board, size=size)
    baseline_below = None
    if not any(row.is_baseline for row in page.rows):
        baseline_below = _baseline_row(board, page)
    point = point_loss(dataset)
    point_rows = []
    if point is not None and point != ranking and _has_point_only_entries(board):
        point_board = Board(dataset, split, point, best=final, final=final)
        point_rows = leaderboard_page(board=point_board, size=size).rows
    shown = [*page.rows, *([baseline_below] if baseline_below else [])]
    slice_board = replace(board, split=sliced_split(split))
    return DatasetResults(
        dataset,
        ranking,
        point,
        page.rows,
        baseline_below,
        point_rows,
        gain_unit(dataset),
        slices=tuple(names),
        slice_entries=slices.entries_on(slice_board, names, [row.entry.pk for row in shown]),
        slice_split=slice_board.split,
    )
