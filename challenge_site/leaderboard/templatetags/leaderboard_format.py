"""Differences to the baseline as people read them: a sign, ∞, n/a."""

from django import template
from django.utils.safestring import SafeString

from challenge_site.leaderboard.display import (
    IntervalSummary,
    certain_tag,
    interval_summary,
    score_html,
    signed,
)

register = template.Library()
register.filter("signed", signed)


@register.filter(name="certain_tag")
def certain_tag_filter(row) -> SafeString:
    """The row's "certain ×k" tag (display.certain_tag), or nothing."""
    return SafeString(certain_tag(row))


@register.simple_tag
def results_marks(tables) -> IntervalSummary:
    """Which marks the results page's tables show (for its legend): ``tables`` are its
    (DatasetResults, separation) pairs."""
    found = [
        interval_summary(
            [*result.rows, *([result.baseline_below] if result.baseline_below else [])],
            sort=result.ranking,
        )
        for result, _ in tables
    ]
    found += [
        interval_summary(result.point_rows, sort=result.point)
        for result, _ in tables
        if result.point_rows
    ]
    return IntervalSummary(
        shown=any(summary.shown for summary in found),
        sort_shown=any(summary.sort_shown for summary in found),
        missing=any(summary.missing for summary in found),
        heavy_tail=any(summary.heavy_tail for summary in found)
        or any(
            interval.heavy_tail
            for result, _ in tables
            for row in result.rows
            for value, interval in result.slice_cells(row)
            if value is not None and interval is not None and interval.own is not None
        ),
        certain=any(summary.certain for summary in found),
        no_spread=any(summary.no_spread for summary in found),
    )


@register.filter
def row_value(row, loss_name: str):
    """The row's value of one loss (for tables that show only some losses)."""
    return row.value(loss_name)


@register.filter
def row_score(row, loss_name: str):
    """The row's score of one loss with its exact value in the title and ± its interval."""
    return score_html(row.value(loss_name), row.interval(loss_name))


@register.simple_tag
def slice_cells(result, row):
    """The row's cells of the results table's slice blocks (scoring.md §8): each slice's
    ranking (and point) loss with its interval on the slice."""
    return SafeString(
        "".join(
            f'<td class="num slice">{score_html(value, interval)}</td>'
            for value, interval in result.slice_cells(row)
        )
    )
