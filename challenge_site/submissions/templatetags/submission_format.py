"""Scores as people read them: ∞ for infinity, n/a for a loss that does not apply."""

import math

from django import template

register = template.Library()


@register.filter
def score(value) -> str:
    if value is None:
        return "n/a"
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    return f"{value:.4g}"


@register.filter
def score_exact(value) -> str:
    """Full precision, as `python -m scoring evaluate` prints it."""
    if value is None:
        return "n/a"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(float(value))


@register.filter
def percent(value) -> str:
    return "–" if value is None else f"{value * 100:.1f} %"


@register.filter
def p_equals(value) -> str:
    """A test's p-value as "p = 0.41", "p = 0.003" or "p < 0.001"."""
    if value is None:
        return "p n/a"
    if value < 0.001:
        return "p < 0.001"
    return f"p = {value:.2g}" if value < 0.01 else f"p = {value:.2f}"
