"""Differences to the baseline as people read them: a sign, ∞, n/a."""

from django import template
from django.utils.safestring import SafeString

from challenge_site.leaderboard.display import score_html, signed

register = template.Library()
register.filter("signed", signed)


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
