"""Differences to the baseline as people read them: a sign, ∞, n/a."""

import math

from django import template

register = template.Library()


@register.filter
def signed(value) -> str:
    if value is None:
        return "n/a"
    if math.isinf(value):
        return "+∞" if value > 0 else "−∞"
    if value == 0:
        return "0"
    return f"{value:+.4g}"  # the hyphen-minus of the loss columns (the score filter)


@register.filter
def row_value(row, loss_name: str):
    """The row's value of one loss (for tables that show only some losses)."""
    return row.value(loss_name)


@register.filter
def row_score(row, loss_name: str):
    """The row's score of one loss with its exact value in the title and ± its interval."""
    from challenge_site.leaderboard.display import score_html  # display imports this module

    return score_html(row.value(loss_name), row.interval(loss_name))
