"""Leaderboard rows as the page prints them, formatted once in Python.

A page has up to 50 rows of a dozen cells. Each row's whole ``<tr>`` is built here in
one pass (the same filters the submission pages use): the template engine would spend
most of the page's time resolving, escaping and looping over ~700 cell variables, and
format_html per cell costs several times a plain f-string. Text from people (method,
authors, participant) is escaped with html.escape, as Django's autoescape does; the
numbers (score, score_exact, signed) and the constants below are plain ASCII digits,
letters, ∞ and ± with nothing to escape.
"""

import math
from dataclasses import dataclass
from html import escape

from django.urls import reverse
from django.utils.safestring import SafeString

import scoring
from challenge_site.submissions.templatetags.submission_format import score, score_exact
from scoring import bootstrap

from .queries import Interval
from .services import Row

NOT_COMPUTED = "added after this entry was scored; filled in when it is rescored"
TIED = "cannot be told apart from the leader: the 95 % interval of the difference holds 0"
LEADER = "the leader: the top tier is it and the entries that cannot be told apart from it"
CERTAIN = (
    "gives probability 0 or 1 (or zero variance) to {examples}: should one of them turn"
    " out otherwise, its log loss is infinite. The data cannot show this risk; its score"
    " and interval assume it never happens"
)
NO_SPREAD = "no spread: every resample gives the same score"
OWN_TAIL = "heavy-tailed terms: this interval may be too narrow"
LEADER_TAIL = (
    "heavy-tailed terms: the interval of the difference to the leader may be too narrow,"
    " so whether this entry is in the top tier may be wrong"
)
# An interval is shown as "± h" only when its two offsets from the score read the same
# to two significant digits; otherwise as "+a/−b" (issue 28: bounds wherever asymmetric).


@dataclass(frozen=True)
class IntervalSummary:
    """What a page's legend says about its intervals."""

    shown: bool  # some cell shows a ± interval
    sort_shown: bool  # some row has an interval under the sort loss (the forest plot)
    missing: bool  # some cell of a loss with intervals shows its score alone (yet)
    heavy_tail: bool = False  # some cell or tier mark has the heavy-tail "†"
    certain: bool = False  # some row is tagged "certain ×k"
    no_spread: bool = False  # some cell's interval has no spread


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


def _offsets(value: float, lower: float, upper: float) -> str | None:
    """What follows a score: "± h" when its interval is symmetric about it (the two
    offsets equal as printed), "+a/−b" otherwise; None
    when the score lies outside its interval (the bounds are shown then)."""
    above, below = upper - value, value - lower
    if above < 0 or below < 0:
        return None
    up, down = _half_width(above), _half_width(below)
    finite = math.isfinite(above) and math.isfinite(below)
    if finite and up == down:
        return f"±\u00a0{_half_width((upper - lower) / 2)}"
    # A break opportunity after the slash: a board with many loss columns wraps the two
    # offsets rather than grow wider than the page (a "± h" is short enough not to).
    return f"+{up}/<wbr>−{down}"


def _interval(value: float | None, interval: Interval | None) -> str:
    own = interval.own if interval is not None else None
    if own is None or value is None or not math.isfinite(value):
        return ""
    lower, upper = own
    # The dagger inside the ± span (a block on the leaderboard: it stays on its line).
    dagger = _dagger(OWN_TAIL) if interval.heavy_tail else ""
    words = f'<span class="visually-hidden"> ({OWN_TAIL})</span>' if dagger else ""
    if math.isfinite(lower) and math.isfinite(upper) and bootstrap.same(lower, upper):
        # A constant loss (a baseline's log 2): the resamples' rounding, not a spread.
        return (
            f' <span class="pm" title="{NO_SPREAD}" aria-hidden="true">no spread{dagger}</span>'
            f'<span class="visually-hidden"> (95 % interval: {NO_SPREAD})</span>{words}'
        )
    shown = _offsets(value, lower, upper) or f"[{score(lower)},<wbr>\u00a0{score(upper)}]"
    kind = "pm" if shown.startswith("±") else "pm asym"  # asym: may wrap at its <wbr>
    return (
        f' <span class="{kind}" title="95 % interval: {_exact(lower)} to {_exact(upper)}"'
        f' aria-hidden="true">{shown}{dagger}</span>'
        f'<span class="visually-hidden"> (95 % interval {score(lower)} to {score(upper)})</span>'
        f"{words}"
    )


def _dagger(title: str) -> str:
    return f'<span class="tail" title="{title}" aria-hidden="true">†</span>'


def _heavy_tail(flag: bool | None, title: str) -> str:
    """The "†" after an interval that may be too narrow (heavy-tailed terms), and its
    words for screen readers."""
    if not flag:
        return ""
    return f'{_dagger(title)}<span class="visually-hidden"> ({title})</span>'


def interval_html(value: float | None, interval: Interval | None) -> SafeString:
    """What follows a score: "± 0.012" (half its 95 % interval's width) when the interval
    is symmetric about it, "+0.014/−0.009" (its distances to the bounds) when not, the
    bounds when the score lies outside them, "no spread" when every resample gives the
    same score (bounds within TIE_RTOL); a "†" when heavy-tailed terms may make it too
    narrow. The exact bounds are in its title and in words for screen readers; nothing
    without an interval or a finite score."""
    return SafeString(_interval(value, interval))


def _score(value: float | None, interval: Interval | None) -> str:
    return f'<span title="{score_exact(value)}">{score(value)}</span>{_interval(value, interval)}'


def signed(value) -> str:
    """A difference to the baseline as people read it: a sign, ∞, n/a."""
    if value is None:
        return "n/a"
    if math.isinf(value):
        return "+∞" if value > 0 else "−∞"
    if value == 0:
        return "0"
    return f"{value:+.4g}"  # the hyphen-minus of the loss columns (the score filter)


def score_html(value: float | None, interval: Interval | None = None) -> SafeString:
    """A score as the tables show it: its exact value in the title, ± its interval."""
    return SafeString(_score(value, interval))


_NOT_COMPUTED_CELL = f'<td class="num"><span title="{escape(NOT_COMPUTED)}">—</span></td>'


def _loss_cell(cell) -> str:
    if not cell.computed:
        return _NOT_COMPUTED_CELL
    return f'<td class="num">{_score(cell.value, cell.interval)}</td>'


def _has_interval(cell) -> bool:
    return cell.interval is not None and cell.interval.own is not None


def _lacks_interval(cell) -> bool:
    """A score of a loss with intervals shown alone (not computed yet, or never)."""
    return cell.loss.terms is not None and cell.value is not None and not _has_interval(cell)


def _no_spread(cell) -> bool:
    lower, upper = cell.interval.own
    return math.isfinite(lower) and math.isfinite(upper) and bootstrap.same(lower, upper)


def interval_summary(rows: list[Row], *, sort: scoring.Loss) -> IntervalSummary:
    cells = [cell for row in rows for cell in row.cells]
    with_interval = [cell for cell in cells if _has_interval(cell)]
    shown = bool(with_interval)
    sorted_intervals = [row.interval(sort.name) for row in rows]
    return IntervalSummary(
        shown=shown,
        sort_shown=any(cell.loss.name == sort.name for cell in with_interval),
        missing=shown and any(_lacks_interval(cell) for cell in cells),
        heavy_tail=any(cell.interval.heavy_tail for cell in with_interval)
        or any(
            interval is not None and interval.vs_leader is not None and interval.leader_heavy_tail
            for interval in sorted_intervals
        ),
        certain=any(certain_count(row) for row in rows),
        no_spread=any(_no_spread(cell) for cell in with_interval if cell.value is not None),
    )


def certain_count(row: Row) -> int:
    """How many examples the entry claims certainty on (probability 0 or 1, zero
    variance) under a probabilistic loss; 0 when none, unknown, or when the row is
    already tagged "point predictions" (which says it of every example)."""
    if row.non_probabilistic:
        return 0
    return row.entry.certain or 0


def certain_tag(row: Row) -> str:
    """The "certain ×3" tag after an entry's method, its reason in the title and in
    words for screen readers; "" when certain_count is 0."""
    count = certain_count(row)
    if not count:
        return ""
    examples = f"{count} example{'s' if count != 1 else ''}"
    return (
        f' <span class="tag tag-certain" title="{CERTAIN.format(examples=examples)}"'
        f' aria-hidden="true">certain\u00a0×{count}</span>'
        f'<span class="visually-hidden"> (claims certainty on {examples})</span>'
    )


_TIER_MARKS = {
    leader: (
        f'<span class="tie" title="{escape(LEADER if leader else TIED)}" aria-hidden="true">'
        '≈</span><span class="visually-hidden">'
        + ("(top tier) " if leader else "(top tier: cannot be told apart from the leader) ")
        + "</span> "
    )
    for leader in (True, False)
}
_TAGS = (
    # (Row attribute, the tag after the method's link)
    ("is_baseline", ' <span class="tag tag-baseline">baseline</span>'),
    (
        "unranked",
        ' <span class="tag" title="Not its participant\'s best entry among those that'
        ' count for the final ranking: listed, not ranked">not ranked</span>',
    ),
    (
        "non_probabilistic",
        ' <span class="tag" title="Probabilities of 0 or 1, or zero variances: only the point'
        ' losses apply">point predictions</span>',
    ),
)
# A submission's page, reversed once: the path with a placeholder id, filled in per row.
_PLACEHOLDER = 918273645


def _tier_mark(row: Row, *, sort: scoring.Loss | None) -> str:
    """The "≈" of the top tier under the sort loss: the leader and the entries tied with it."""
    interval = row.interval(sort.name) if sort is not None else None
    if interval is None or interval.vs_leader is None:
        return ""
    # Tied or not, the claim rests on the difference interval: "†" if it may be too narrow.
    tail = _heavy_tail(interval.leader_heavy_tail, LEADER_TAIL)
    if not interval.tied_with_leader:
        return f"{tail} " if tail and row.rank != 1 else ""
    return _TIER_MARKS[row.rank == 1] + (f"{tail} " if tail else "")


def _rank_interval(row: Row, *, sort: scoring.Loss | None) -> str:
    if row.rank_interval is None:
        return "–"
    lower, upper = row.rank_interval
    interval = row.interval(sort.name) if sort is not None else None
    tail = _heavy_tail(interval is not None and interval.heavy_tail, OWN_TAIL)
    return (str(lower) if lower == upper else f"{lower}–{upper}") + tail


def _row_html(row: Row, *, url: str, best: bool, ranking: str | None, sort) -> str:
    """One ``<tr>`` with the whitespace leaderboard.html's loop had around it."""
    entry = row.entry
    cells = []
    for cell in row.cells:
        cells.append(_loss_cell(cell))
        if cell.loss.name == ranking:
            cells.append(f'<td class="num gain">{signed(row.gain)}</td>')
    tier_mark = _tier_mark(row, sort=sort)
    row_class = " ".join(
        name
        for name, on in (("baseline", entry.is_baseline), ("tied", 'class="tie"' in tier_mark))
        if on
    )
    mark = ""
    if entry.mark:
        mark = f'<span class="mark" title="{escape(entry.mark_label)}">{escape(entry.mark)}</span> '
    tags = "".join(tag for name, tag in _TAGS if getattr(row, name)) + certain_tag(row)
    rank = "–" if row.rank is None else row.rank
    attribute = f' class="{row_class}"' if row_class else ""
    return (
        f"\n    <tr{attribute}>"
        f'\n      <td class="num">{tier_mark}{rank}</td>'
        "\n      "
        + (f'<td class="num rank-interval">{_rank_interval(row, sort=sort)}</td>' if best else "")
        + f'\n      <th scope="row">{mark}<a href="{url}">{escape(entry.method)}</a>{tags}</th>'
        f"\n      <td>{escape(entry.participant)}</td>"
        f"\n      <td>{escape(entry.authors)}</td>"
        f'\n      <td><time datetime="{escape(entry.created.isoformat())}">'
        f"{entry.created.strftime('%Y-%m-%d %H:%M')}</time></td>"
        "\n      " + "".join(cells) + "\n    </tr>\n  "
    )


def display_rows(
    rows: list[Row],
    *,
    ranking: scoring.Loss | None,
    sort: scoring.Loss | None = None,
    best: bool = False,
) -> list[SafeString]:
    """Each row's ``<tr>``: every cell's text; the gain over the baseline right after the
    ranking loss; the top tier under the ``sort`` loss shaded and marked; the rank
    interval (``best``: the best-per-participant view)."""
    path = reverse("submission_detail", args=[_PLACEHOLDER])
    head, tail = path.split(str(_PLACEHOLDER))
    name = ranking.name if ranking is not None else None
    return [
        SafeString(
            _row_html(row, url=f"{head}{row.entry.pk}{tail}", best=best, ranking=name, sort=sort)
        )
        for row in rows
    ]
