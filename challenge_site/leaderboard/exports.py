"""A leaderboard as CSV (every row, in the page's order) and as JSON rows for the API.

A slice's board (scoring.md §8, ``?slice=NAME``) exports the slice's scores and intervals
under the losses' own names, its name in the ``slice`` column (empty: the whole split)."""

import csv
import json
from collections.abc import Iterable, Iterator

from challenge_site.spreadsheet import csv_number, csv_text
from challenge_site.submissions.visibility import json_value

from . import ladder_board
from .queries import Board
from .services import Row, gain_unit, ranking_loss

# The last board's interval losses: a whole-board export asks several times per row, and
# Board.losses looks the losses up in the registry at each access (a tenth of the time
# of a million-row file). Keyed by identity: a Board is frozen.
_last_board: tuple = (None, [])


def _interval_losses(board: Board) -> list[str]:
    """The board's losses that get bootstrap intervals: those with per-example terms."""
    global _last_board
    last, names = _last_board
    if last is not board:
        names = [loss.name for loss in board.losses if loss.terms is not None]
        _last_board = (board, names)
    return names


def _pair(pair, number) -> list:
    return [None, None] if pair is None else [number(pair[0]), number(pair[1])]


def interval_header(board: Board) -> list[str]:
    header = []
    for name in _interval_losses(board):
        header += [f"{name}_lower", f"{name}_upper"]
        header += [f"{name}_vs_leader_lower", f"{name}_vs_leader_upper"]
        header += [f"{name}_vs_baseline_lower", f"{name}_vs_baseline_upper"]
        header.append(f"{name}_indistinguishable_from_leader")
        header += [f"{name}_{mark}" for _, mark in _TAIL_MARKS]
    return [*header, "rank_interval_lower", "rank_interval_upper", "rank_interval_heavy_tail"]


# The heavy-tail marks (scoring.tails): Interval field → its CSV column suffix / API key.
# Yes: the interval may be too narrow (the per-example terms look heavy-tailed).
_TAIL_MARKS = (
    ("heavy_tail", "heavy_tail"),
    ("leader_heavy_tail", "vs_leader_heavy_tail"),
    ("baseline_heavy_tail", "vs_baseline_heavy_tail"),
)


def _yes_no(value: bool | None) -> str:
    return "" if value is None else ("yes" if value else "no")


def _rank_heavy_tail(board: Board, row: Row) -> bool | None:
    """The rank interval's mark: that of the sort loss's own interval (its terms)."""
    if row.rank_interval is None:
        return None
    interval = row.interval(board.sort.name)
    return None if interval is None else interval.heavy_tail


def interval_fields(board: Board, row: Row) -> list[str]:
    """The bootstrap columns: empty where there is no interval (or not yet)."""

    def number(value):
        return csv_number(value) if value is not None else ""

    fields = []
    for name in _interval_losses(board):
        interval = row.interval(name)
        for pair in ("own", "vs_leader", "vs_baseline"):
            fields += _pair(interval and getattr(interval, pair), number)
        fields.append(_yes_no(interval.tied_with_leader if interval else None))
        fields += [
            _yes_no(getattr(interval, field) if interval else None) for field, _ in _TAIL_MARKS
        ]
    fields = ["" if value is None else value for value in fields]
    rank = row.rank_interval
    fields += ["", ""] if rank is None else [str(rank[0]), str(rank[1])]
    return [*fields, _yes_no(_rank_heavy_tail(board, row))]


def csv_header(board: Board) -> list[str]:
    header = ["rank", "submission", "url", "mark", "method", "authors", "participant"]
    # certain: examples of the split's whole file claiming certainty (Entry.certain).
    header += ["created", "baseline", "non_probabilistic", "certain", "slice"]
    header += [loss.name for loss in board.losses]
    ranking = ranking_loss(board.dataset)
    if ranking is not None:
        unit = gain_unit(board.dataset).replace(" ", "_")
        header.append(f"{ranking.name}_gain_over_baseline_{unit}")
    return header + interval_header(board)


def csv_row(board: Board, row: Row, *, url: str, with_gain: bool) -> list[str]:
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
        "" if entry.certain is None else str(entry.certain),
        csv_text(board.slice),
    ]
    fields += [csv_number(cell.value) if cell.computed else "" for cell in row.cells]
    if with_gain:
        fields.append(csv_number(row.gain))
    return fields + interval_fields(board, row)


class _Echo:
    def write(self, value: str) -> str:
        return value


def csv_lines(board: Board, rows: Iterable[Row], *, url_for) -> Iterator[str]:
    """The header and one line per row; ``url_for(submission_id)`` makes absolute links."""
    writer = csv.writer(_Echo())
    yield writer.writerow(csv_header(board))
    with_gain = ranking_loss(board.dataset) is not None
    for row in rows:
        yield writer.writerow(csv_row(board, row, url=url_for(row.entry.pk), with_gain=with_gain))


def json_intervals(board: Board, row: Row) -> dict:
    """The bootstrap fields of an API row (scoring.md §5): per loss with intervals,
    [lower, upper] or null (no interval, or still being computed); bounds as scores are
    (infinity as "inf")."""

    def by_loss(pick):
        out = {}
        for name in _interval_losses(board):
            interval = row.interval(name)
            value = interval and pick(interval)
            out[name] = None if value is None else _pair(value, json_value)
        return out

    return {
        "intervals": by_loss(lambda interval: interval.own),
        "vs_leader": by_loss(lambda interval: interval.vs_leader),
        "vs_baseline": by_loss(lambda interval: interval.vs_baseline),
        "indistinguishable_from_leader": {
            name: (interval := row.interval(name)) and interval.tied_with_leader
            for name in _interval_losses(board)
        },
        "rank_interval": None if row.rank_interval is None else list(row.rank_interval),
        # true: that interval may be too narrow (heavy-tailed terms, scoring.tails).
        **{
            key: {
                name: (interval := row.interval(name)) and getattr(interval, field)
                for name in _interval_losses(board)
            }
            for field, key in _TAIL_MARKS
        },
        "rank_interval_heavy_tail": _rank_heavy_tail(board, row),
    }


def json_row(board: Board, row: Row, *, url: str) -> dict:
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
        # Examples of the split's whole file (a test part's: the whole test file's) whose
        # prediction claims certainty; null: non-probabilistic, or scored before it counted.
        "certain": entry.certain,
        "information_gain": json_value(row.gain),
        "url": url,
        # On a final board: whether the entry counts for the final ranking (null elsewhere).
        "in_final_ranking": entry.in_final_ranking if board.final else None,
        **json_intervals(board, row),
    }


def json_lines(board: Board, rows: Iterable[Row], *, url_for, meta: dict) -> Iterator[str]:
    """The whole board as one JSON document, a row per line: ``meta`` (the board's
    fields), ``results`` (the API's rows, json_row) and ``count``, the number of rows
    (last: a stream knows it at the end). Infinity as "inf"; a NaN stops the document
    (ValueError) rather than write what is not JSON."""
    head = json.dumps(meta, allow_nan=False)[:-1]
    yield head + (", " if meta else "") + '"results": ['
    count = 0
    for row in rows:
        line = json.dumps(json_row(board, row, url=url_for(row.entry.pk)), allow_nan=False)
        yield ("\n" if count == 0 else ",\n") + line
        count += 1
    yield f'\n], "count": {count}}}\n'


def ladder_json_lines(board: Board, *, url_for, loss: str, meta: dict) -> Iterator[str]:
    """The Ladder's board as one JSON document: ladder_board.json_row per participant."""
    head = json.dumps(meta, allow_nan=False)[:-1]
    yield head + (", " if meta else "") + '"results": ['
    count = 0
    for row in ladder_board.iter_rows(board):
        line = json.dumps(ladder_board.json_row(row, url=url_for(row.submission), loss=loss))
        yield ("\n" if count == 0 else ",\n") + line
        count += 1
    yield f'\n], "count": {count}}}\n'


def ladder_csv_lines(board: Board, *, url_for) -> Iterator[str]:
    """The Ladder's board (ladder_board.py): one line per participant."""
    writer = csv.writer(_Echo())
    yield writer.writerow(ladder_board.CSV_HEADER)
    for row in ladder_board.iter_rows(board):
        yield writer.writerow(
            [
                str(row.rank),
                csv_text(row.participant),
                csv_text(row.method),
                str(row.submission),
                url_for(row.submission),
                row.text,
                csv_number(row.precision),  # the rounding unit
                str(row.entries),
            ]
        )
