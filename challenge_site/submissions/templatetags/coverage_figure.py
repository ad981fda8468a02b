"""Nominal against observed coverage of a split's central intervals at the dataset's
quantile levels (spec §8: ``covP``, stored with the plot data as reported values), as a
small SVG drawn here and a table of the same numbers: ``{% coverage_figure entry %}``.

The SVG is markup built from numbers alone (no script, no style attribute, no text from
a user), inline on the page: a dozen points need no image request of their own.
"""

from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from challenge_site.submissions.evaluation import REPORTED_KEY
from scoring.quantile_scores import nominal

register = template.Library()

# The square's side and margins in CSS pixels; ticks at every 20 %.
SIZE, LEFT, BOTTOM, TOP, RIGHT = 260, 44, 36, 12, 12
TICKS = (0, 0.2, 0.4, 0.6, 0.8, 1)
POINT, IDEAL, GRID = "#1f5fbf", "#444444", "#dddddd"


def coverage_rows(plot_data: dict | None) -> list[dict]:
    """The reported ``covP`` values, narrowest interval first: ``name``, ``nominal``
    (P/100), ``observed`` (the share of targets inside) and ``gap`` (observed − nominal:
    negative when the intervals are too narrow)."""
    rows = []
    for name, value in (plot_data or {}).get(REPORTED_KEY) or []:
        level = nominal(name)
        if level is not None and value is not None:
            rows.append({"name": name, "nominal": level, "observed": value, "gap": value - level})
    return sorted(rows, key=lambda row: row["nominal"])


def _x(share: float) -> float:
    return LEFT + share * (SIZE - LEFT - RIGHT)


def _y(share: float) -> float:
    return SIZE - BOTTOM - share * (SIZE - BOTTOM - TOP)


def coverage_svg(rows: list[dict], *, label: str) -> SafeString:
    """The observed coverage of each interval against its nominal coverage, with the
    diagonal a calibrated forecaster lies on. Built from numbers (the names are ``covP``,
    digits checked by :func:`scoring.quantile_scores.nominal`) and the escaped label."""
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{SIZE}" height="{SIZE}"'
        f' viewBox="0 0 {SIZE} {SIZE}" role="img" aria-label="{escape(label)}">'
    ]
    for t in TICKS:
        parts.append(
            f'<line x1="{_x(t):.1f}" y1="{_y(0):.1f}" x2="{_x(t):.1f}" y2="{_y(1):.1f}"'
            f' stroke="{GRID}"/><line x1="{_x(0):.1f}" y1="{_y(t):.1f}" x2="{_x(1):.1f}"'
            f' y2="{_y(t):.1f}" stroke="{GRID}"/>'
            f'<text x="{_x(t):.1f}" y="{_y(0) + 14:.1f}" font-size="10"'
            f' text-anchor="middle">{t:.0%}</text>'
            f'<text x="{_x(0) - 4:.1f}" y="{_y(t) + 3:.1f}" font-size="10"'
            f' text-anchor="end">{t:.0%}</text>'
        )
    parts.append(
        f'<line x1="{_x(0):.1f}" y1="{_y(0):.1f}" x2="{_x(1):.1f}" y2="{_y(1):.1f}"'
        f' stroke="{IDEAL}" stroke-dasharray="4 3"/>'
    )
    for row in rows:
        parts.append(
            f'<circle cx="{_x(row["nominal"]):.2f}" cy="{_y(row["observed"]):.2f}" r="4"'
            f' fill="{POINT}"><title>{escape(row["name"])}: nominal {row["nominal"]:.0%},'
            f" observed {row['observed']:.1%}</title></circle>"
        )
    middle_x, middle_y = (_x(0) + _x(1)) / 2, (_y(0) + _y(1)) / 2
    parts.append(
        f'<text x="{middle_x:.1f}" y="{SIZE - 4}" font-size="11" text-anchor="middle">'
        "Nominal coverage</text>"
        f'<text x="12" y="{middle_y:.1f}" font-size="11" text-anchor="middle"'
        f' transform="rotate(-90 12 {middle_y:.1f})">Observed</text></svg>'
    )
    return mark_safe("".join(parts))  # noqa: S308 - numbers and escaped text only


@register.inclusion_tag("submissions/_coverage_figure.html")
def coverage_figure(entry) -> dict:
    """``entry``: a visibility.SplitScores whose result the user may see. Nothing is drawn
    when its plot data reports no coverage (a dataset without quantile levels)."""
    rows = coverage_rows(entry.result.plot_data if entry.result else None)
    label = (
        f"Nominal against observed coverage of the {entry.label.lower()} split's central"
        " intervals; its numbers follow in a table."
    )
    return {"entry": entry, "rows": rows, "svg": coverage_svg(rows, label=label) if rows else ""}
