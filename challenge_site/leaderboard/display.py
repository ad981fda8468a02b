"""Leaderboard rows as the page prints them, formatted once in Python.

A page has up to 50 rows of a dozen cells; formatting them here (the same filters the
submission pages use) leaves the template to place finished strings, which keeps the
render time a small part of the page's budget.
"""

from dataclasses import dataclass

from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

import scoring
from challenge_site.submissions.templatetags.submission_format import score, score_exact

from .services import Row
from .templatetags.leaderboard_format import signed

NOT_COMPUTED = "added after this entry was scored; filled in when it is rescored"


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


def _loss_cell(cell) -> SafeString:
    if not cell.computed:
        return format_html('<span title="{}">—</span>', NOT_COMPUTED)
    return format_html('<span title="{}">{}</span>', score_exact(cell.value), score(cell.value))


def display_rows(rows: list[Row], *, ranking: scoring.Loss | None) -> list[DisplayRow]:
    """Every cell's text; the gain over the baseline right after the ranking loss."""
    shown = []
    for row in rows:
        entry = row.entry
        cells = []
        for cell in row.cells:
            cells.append(("num", _loss_cell(cell)))
            if ranking is not None and cell.loss.name == ranking.name:
                cells.append(("num gain", format_html("{}", signed(row.gain))))
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
            )
        )
    return shown
