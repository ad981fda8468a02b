"""Differences to the baseline as people read them: a sign, ∞, n/a."""

from django import template

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
