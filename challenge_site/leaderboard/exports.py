"""A leaderboard as CSV (every row, in the page's order) and as JSON rows for the API."""

import csv
import math
from collections.abc import Iterable, Iterator

from challenge_site.submissions.visibility import json_value

from .queries import Board
from .services import Row, gain_unit, ranking_loss

# A spreadsheet runs a cell that starts with one of these as a formula.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_number(value: float | None) -> str:
    """Full precision as `python -m scoring evaluate` prints it; inf, n/a."""
    if value is None:
        return "n/a"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(float(value))


def csv_text(text: str) -> str:
    """Participants write method and author names: keep them from running as formulas."""
    return f"'{text}" if text.startswith(FORMULA_STARTS) else text


def csv_header(board: Board) -> list[str]:
    header = ["rank", "submission", "url", "mark", "method", "authors", "participant"]
    header += ["created", "baseline", "non_probabilistic"]
    header += [loss.name for loss in board.losses]
    ranking = ranking_loss(board.dataset)
    if ranking is not None:
        unit = gain_unit(board.dataset).replace(" ", "_")
        header.append(f"{ranking.name}_gain_over_baseline_{unit}")
    return header


def csv_row(row: Row, *, url: str, with_gain: bool) -> list[str]:
    entry = row.entry
    fields = [
        "" if row.rank is None else str(row.rank),
        str(entry.pk),
        url,
        entry.mark,
        csv_text(entry.method),
        csv_text(entry.authors),
        csv_text(entry.participant),
        entry.created.isoformat(),
        "yes" if row.is_baseline else "no",
        "yes" if row.non_probabilistic else "no",
    ]
    fields += [csv_number(cell.value) if cell.computed else "" for cell in row.cells]
    if with_gain:
        fields.append(csv_number(row.gain))
    return fields


class _Echo:
    def write(self, value: str) -> str:
        return value


def csv_lines(board: Board, rows: Iterable[Row], *, url_for) -> Iterator[str]:
    """The header and one line per row; ``url_for(submission_id)`` makes absolute links."""
    writer = csv.writer(_Echo())
    yield writer.writerow(csv_header(board))
    with_gain = ranking_loss(board.dataset) is not None
    for row in rows:
        yield writer.writerow(csv_row(row, url=url_for(row.entry.pk), with_gain=with_gain))


def json_row(row: Row, *, url: str) -> dict:
    """One API row; infinity as the string "inf", n/a (or not computed) as null."""
    entry = row.entry
    return {
        "rank": row.rank,
        "submission": entry.pk,
        "participant": entry.participant,
        "method": entry.method,
        "mark": entry.mark,
        "created": entry.created.isoformat().replace("+00:00", "Z"),
        "scores": {cell.loss.name: json_value(cell.value) for cell in row.cells},
        "authors": entry.authors,
        "is_baseline": row.is_baseline,
        "non_probabilistic": row.non_probabilistic,
        "information_gain": json_value(row.gain),
        "url": url,
    }
