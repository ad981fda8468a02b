"""A forest plot of one leaderboard page (scoring.md §5): each entry's 95 % interval under
the sort loss as a bar with a dot at its score, in rank order, drawn server-side as SVG.

The rows are the page's own (services.leaderboard_page), so the plot shows what the table
shows. Only matplotlib's object-oriented API is used (Figure and its SVG canvas). The
drawing is cached under a fingerprint of everything it draws, which is also its ETag:
it changes when a score, an interval, a label or the page's entries change.
"""

import hashlib
import io
import math
from dataclasses import dataclass

import matplotlib
from django.core.cache import cache
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

import scoring
from challenge_site.submissions.templatetags.submission_format import score

from .plots import BASELINE, CACHE_SECONDS, ENTRY
from .services import Row

OTHER = "#5a6273"
LABEL_CHARS = 40
DRAWING = "2"  # the drawing's version: change it when the drawing code changes
# The x range zooms on the top tier when all the entries span more than ZOOM times its
# width (a far baseline would squeeze the leaders' bars into a few pixels).
ZOOM = 5
TOP_TIER = "top tier: cannot be told apart from the leader"
# The x range is zoomed on the top tier: what lies beyond it is drawn at the edge.
BEYOND = "a score beyond the range shown (zoomed on the top tier): an arrow with its value"
BOUND_BEYOND = "an arrow at a bar's end: its interval goes on beyond the range shown"


@dataclass(frozen=True)
class Bar:
    rank: int | None
    label: str
    value: float | None
    interval: tuple[float, float] | None
    is_baseline: bool
    tied: bool


def _label(row: Row) -> str:
    who = "baseline" if row.is_baseline else (row.participant or "unnamed")
    text = f"{who} · {row.entry.method}"
    if len(text) > LABEL_CHARS:
        text = text[: LABEL_CHARS - 1].rstrip() + "…"
    return f"{'n/a' if row.rank is None else f'{row.rank}.'} {text}"


def bars(rows: list[Row], *, sort: scoring.Loss) -> list[Bar]:
    """One bar per row of the page, in its order."""
    found = []
    for row in rows:
        interval = row.interval(sort.name)
        found.append(
            Bar(
                rank=row.rank,
                label=_label(row),
                value=row.value(sort.name),
                interval=None if interval is None else interval.own,
                is_baseline=row.is_baseline,
                tied=bool(interval is not None and interval.tied_with_leader),
            )
        )
    return found


def fingerprint(data: list[Bar], *, loss: scoring.Loss, title: str) -> str:
    """Changes with anything the drawing shows (floats by their repr: exact)."""
    drawn = (DRAWING, loss.name, loss.title, title, [tuple(vars(bar).values()) for bar in data])
    return hashlib.sha256(repr(drawn).encode()).hexdigest()[:32]


def _finite(bars: list[Bar]) -> list[float]:
    return [
        x
        for bar in bars
        for x in (bar.value, *(bar.interval or ()))
        if x is not None and math.isfinite(x)
    ]


def _padded(low: float, high: float) -> tuple[float, float]:
    pad = (high - low) * 0.06 or max(abs(high) * 0.06, 0.05)
    return low - pad, high + pad


def _limits(data: list[Bar]) -> tuple[float, float]:
    """The x range: every finite score and bound, unless that is more than ZOOM times as
    wide as the top tier's (the leader and the entries tied with it, their scores and
    intervals); then the top tier's range widened (ZOOM − 1)/2 of its width on each
    side, so that its bars stay readable and what lies beyond is drawn at the edge."""
    everything = _finite(data)
    if not everything:
        return 0.0, 1.0
    low, high = min(everything), max(everything)
    top = _finite([bar for bar in data if bar.tied or bar.rank == 1])
    if top:
        top_low, top_high = min(top), max(top)
        # A tier of one point (no intervals yet) is as wide as 6 % of its score (none of
        # a score of 0: no zoom).
        width = top_high - top_low or abs(top_high) * 0.06
        if width > 0 and high - low > ZOOM * width:
            margin = width * (ZOOM - 1) / 2
            low, high = max(low, top_low - margin), min(high, top_high + margin)
    return _padded(low, high)


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] + "."


def forest_svg(data: list[Bar], *, loss: scoring.Loss, title: str) -> str:
    figure = Figure(figsize=(7.5, max(2.8, 0.3 * len(data) + 1.9)), layout="constrained")
    axes = figure.subplots()
    left, right = _limits(data)
    axes.set_xlim(left, right)

    def edge(x: float) -> float:
        return min(max(x, left), right)

    def beyond(x: float) -> bool:
        return not left <= x <= right

    def arrow(x: float, y: float, colour: str, *, label: bool) -> None:
        """A marker at the edge x lies beyond, with its value if ``label``."""
        at, right_side = edge(x), x > right
        axes.plot([at], [y], marker=">" if right_side else "<", color=colour, clip_on=False)
        if label:
            axes.text(
                at,
                y - 0.18,
                score(x),
                ha="right" if right_side else "left",
                va="bottom",
                color=colour,
                fontsize=7,
            )

    notes, kinds = [], set()
    for y, bar in enumerate(data):
        colour = BASELINE if bar.is_baseline else ENTRY if bar.tied else OTHER
        kinds.add("baseline" if bar.is_baseline else "tied" if bar.tied else "other")
        if bar.value is None:
            axes.text(left + (right - left) * 0.01, y, "n/a", va="center", color=OTHER, fontsize=8)
            continue
        if bar.interval is not None:
            lower, upper = bar.interval
            axes.hlines(
                y, edge(lower), edge(upper), color=colour, linewidth=2.2 if bar.tied else 1.6
            )
            # A score beyond the range has its own arrow; its bar is not drawn.
            for bound in () if beyond(bar.value) else (lower, upper):
                if math.isinf(bound):
                    arrow(bound, y, colour, label=False)
                    notes.append("an arrow at an edge: the interval reaches ∞")
                elif beyond(bound) and not beyond(bar.value):
                    arrow(bound, y, colour, label=False)
                    notes.append(BOUND_BEYOND)
        elif math.isfinite(bar.value):
            notes.append("a dot without a bar: its interval is not computed yet")
        if math.isinf(bar.value):
            arrow(bar.value, y, colour, label=False)
            notes.append("an infinite score: an arrow at the edge")
        elif beyond(bar.value):
            arrow(bar.value, y, colour, label=True)
            notes.append(BEYOND)
        else:
            face = colour if bar.tied or bar.is_baseline else "white"
            marker = "s" if bar.is_baseline else "o"
            axes.plot(
                [bar.value], [y], marker=marker, markersize=6, color=colour, markerfacecolor=face
            )
    leader = next((bar for bar in data if bar.rank == 1), None)
    if leader is not None and leader.value is not None and math.isfinite(leader.value):
        axes.axvline(leader.value, color=ENTRY, linestyle=":", linewidth=1, alpha=0.7)
    axes.set_yticks(range(len(data)), [bar.label for bar in data], parse_math=False, fontsize=8)
    for tick, bar in zip(axes.get_yticklabels(), data, strict=True):
        if bar.is_baseline:
            tick.set_color(BASELINE)
            tick.set_fontweight("bold")
    axes.set_ylim(len(data) - 0.5, -0.5)  # rank 1 at the top
    axes.set_xlabel(f"{loss.name}: {loss.title.lower()} (lower is better)")
    axes.grid(axis="x", alpha=0.3)
    figure.suptitle(title, fontsize=11)
    if not data:
        axes.text(0.5, 0.5, "No scored entries", ha="center", transform=axes.transAxes)
    handles = [
        Line2D([], [], color=colour, marker=marker, markerfacecolor=face, label=label)
        for kind, colour, marker, face, label in (
            ("tied", ENTRY, "o", ENTRY, TOP_TIER),
            ("other", OTHER, "o", "white", "other entries"),
            ("baseline", BASELINE, "s", BASELINE, "baseline"),
        )
        if kind in kinds
    ]
    if handles or notes:
        # The notes head the legend, one a line, so that neither hides the other.
        legend = figure.legend(
            handles=handles,
            loc="outside lower center",
            ncols=3,
            frameon=False,
            fontsize=8,
            title="\n".join(_sentence(note) for note in dict.fromkeys(notes)) or None,
            title_fontsize=8,
        )
        legend.get_title().set_color(OTHER)
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "leaderboard-forest"}):
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()


def cached_svg(data: list[Bar], *, loss: scoring.Loss, title: str, key: str) -> str:
    """The drawing of ``data``, cached under its ``fingerprint``."""
    return cache.get_or_set(
        f"leaderboard-forest:{key}",
        lambda: forest_svg(data, loss=loss, title=title),
        timeout=CACHE_SECONDS,
    )
