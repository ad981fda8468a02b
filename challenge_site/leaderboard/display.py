"""Leaderboard rows as the page prints them, formatted once in Python.

A page has up to 50 rows of a dozen cells; formatting them here (the same filters the
submission pages use) leaves the template to place finished strings, which keeps the
render time a small part of the page's budget.
"""

import math
from dataclasses import dataclass

from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

import scoring
from challenge_site.submissions.templatetags.submission_format import score, score_exact

from .queries import Interval
from .services import Row
from .templatetags.leaderboard_format import signed

NOT_COMPUTED = "added after this entry was scored; filled in when it is rescored"
TIED = "cannot be told apart from the leader: the 95 % interval of the difference holds 0"
LEADER = "the leader: the top tier is it and the entries that cannot be told apart from it"


@dataclass(frozen=True)
class DisplayRow:
    rank: str
    url: str
    method: str
    mark: str
    mark_label: str
    is_baseline: bool
    non_probabilistic: bool
    participant: str
    authors: str
    created_iso: str
    created: str
    cells: list[tuple[str, SafeString]]  # (CSS class, cell content)
    row_class: str = ""  # "baseline", "tied" (the top tier under the sort loss), both
    tier_mark: SafeString = SafeString("")  # "≈" before the rank of the top tier
    rank_interval: str = "–"  # best-per-participant view: "1–3", "2"
    unranked: bool = False  # a final board's entry that is not its participant's best final


@dataclass(frozen=True)
class IntervalSummary:
    """What a page's legend says about its intervals."""

    shown: bool  # some cell shows a ± interval
    sort_shown: bool  # some row has an interval under the sort loss (the forest plot)
    missing: bool  # some cell of a loss with intervals shows its score alone (yet)


def _exact(value: float) -> str:
    return score(value) if math.isinf(value) else score_exact(value)


def _half_width(half: float) -> str:
    """The ± to two significant digits (0.012, 0.0017, 1.2): what a reader compares."""
    if not math.isfinite(half):
        return "∞"
    if half == 0:
        return "0"
    if not 1e-6 <= half < 1e9:
        return f"{half:.1e}"
    half = float(f"{half:.2g}")  # rounded first: 0.0999 reads 0.10, not 0.100
    decimals = 1 - math.floor(math.log10(half))
    if decimals >= 0:
        return f"{half:.{decimals}f}"
    return f"{round(half, decimals):.0f}"


def interval_html(value: float | None, interval: Interval | None) -> SafeString:
    """The "± 0.012" after a score (half its 95 % interval's width), with the exact bounds
    in its title and in words for screen readers; nothing without an interval or a finite
    score."""
    own = interval.own if interval is not None else None
    if own is None or value is None or not math.isfinite(value):
        return SafeString("")
    lower, upper = own
    finite = math.isfinite(lower) and math.isfinite(upper)
    half = (upper - lower) / 2 if finite else math.inf
    return format_html(
        ' <span class="pm" title="95 % interval: {} to {}" aria-hidden="true">±\u00a0{}</span>'
        '<span class="visually-hidden"> (95 % interval {} to {})</span>',
        _exact(lower),
        _exact(upper),
        _half_width(half),
        score(lower),
        score(upper),
    )


def score_html(value: float | None, interval: Interval | None = None) -> SafeString:
    """A score as the tables show it: its exact value in the title, ± its interval."""
    return format_html(
        '<span title="{}">{}</span>{}',
        score_exact(value),
        score(value),
        interval_html(value, interval),
    )


def _loss_cell(cell) -> SafeString:
    if not cell.computed:
        return format_html('<span title="{}">—</span>', NOT_COMPUTED)
    return score_html(cell.value, cell.interval)


def _has_interval(cell) -> bool:
    return cell.interval is not None and cell.interval.own is not None


def _lacks_interval(cell) -> bool:
    """A score of a loss with intervals shown alone (not computed yet, or never)."""
    return cell.loss.terms is not None and cell.value is not None and not _has_interval(cell)


def interval_summary(rows: list[Row], *, sort: scoring.Loss) -> IntervalSummary:
    cells = [cell for row in rows for cell in row.cells]
    shown = any(_has_interval(cell) for cell in cells)
    return IntervalSummary(
        shown=shown,
        sort_shown=any(_has_interval(cell) for cell in cells if cell.loss.name == sort.name),
        missing=shown and any(_lacks_interval(cell) for cell in cells),
    )


def _tier_mark(row: Row, *, sort: scoring.Loss | None) -> SafeString:
    """The "≈" of the top tier under the sort loss: the leader and the entries tied with it."""
    interval = row.interval(sort.name) if sort is not None else None
    if interval is None or not interval.tied_with_leader:
        return SafeString("")
    leader = row.rank == 1
    return format_html(
        '<span class="tie" title="{}" aria-hidden="true">≈</span>'
        '<span class="visually-hidden">{}</span> ',
        LEADER if leader else TIED,
        "(top tier) " if leader else "(top tier: cannot be told apart from the leader) ",
    )


def _rank_interval(row: Row) -> str:
    if row.rank_interval is None:
        return "–"
    lower, upper = row.rank_interval
    return str(lower) if lower == upper else f"{lower}–{upper}"


def display_rows(
    rows: list[Row], *, ranking: scoring.Loss | None, sort: scoring.Loss | None = None
) -> list[DisplayRow]:
    """Every cell's text; the gain over the baseline right after the ranking loss; the
    top tier under the ``sort`` loss shaded and marked."""
    shown = []
    for row in rows:
        entry = row.entry
        cells = []
        for cell in row.cells:
            cells.append(("num", _loss_cell(cell)))
            if ranking is not None and cell.loss.name == ranking.name:
                cells.append(("num gain", format_html("{}", signed(row.gain))))
        tier_mark = _tier_mark(row, sort=sort)
        row_class = " ".join(
            name for name, on in (("baseline", entry.is_baseline), ("tied", tier_mark)) if on
        )
        shown.append(
            DisplayRow(
                rank="–" if row.rank is None else str(row.rank),
                url=reverse("submission_detail", args=[entry.pk]),
                method=entry.method,
                mark=entry.mark,
                mark_label=entry.mark_label,
                is_baseline=entry.is_baseline,
                non_probabilistic=row.non_probabilistic,
                participant=entry.participant,
                authors=entry.authors,
                created_iso=entry.created.isoformat(),
                created=entry.created.strftime("%Y-%m-%d %H:%M"),
                cells=cells,
                row_class=row_class,
                tier_mark=tier_mark,
                rank_interval=_rank_interval(row),
                unranked=row.unranked,
            )
        )
    return shown
