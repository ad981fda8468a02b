"""Cells of the CSV files the site exports, written so that a spreadsheet shows them as
they are (every app's exports use these)."""

from scoring.losses import format_value

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_number(value: float | None) -> str:
    """Full precision as `python -m scoring evaluate` prints it; inf, n/a."""
    return format_value(value)


def csv_text(text: str) -> str:
    """Participants write method and author names: keep them from running as formulas."""
    return f"'{text}" if text.startswith(FORMULA_STARTS) else text
