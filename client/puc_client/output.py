"""Plain-text tables and the report of one submission."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime


def value_text(value) -> str:
    """A score as the API gives it: a number, "inf", or null (not computed / n/a)."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def table(headers: Sequence[str], rows: Sequence[Sequence]) -> str:
    """Columns aligned on the widest cell; numbers right-aligned."""
    cells = [[value_text(cell) for cell in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))
    numeric = [
        all(isinstance(row[i], int | float) or row[i] in (None, "inf") for row in rows) and rows
        for i in range(len(headers))
    ]

    def line(row: Sequence[str]) -> str:
        parts = [
            cell.rjust(widths[i]) if numeric[i] else cell.ljust(widths[i])
            for i, cell in enumerate(row)
        ]
        return "  ".join(parts).rstrip()

    out = [line(list(headers)), line(["-" * w for w in widths])]
    out += [line(row) for row in cells]
    return "\n".join(out)


def date_text(value: str | None) -> str:
    """An ISO date from the API as "2030-02-08 23:59 UTC"."""
    if not value:
        return ""
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        return value
    if when.tzinfo is not None:
        when = when.astimezone(UTC)
    return when.strftime("%Y-%m-%d %H:%M UTC")


def submission_report(body: dict) -> str:
    """What `show` and `wait` print: the status, then the scores or the error report."""
    lines = [
        f"Submission {body['id']} ({body.get('challenge', '?')} / {body.get('dataset', '?')}, "
        f"{body.get('method', '')!r}): {body['status']}",
        body.get("url", ""),
    ]
    scores = body.get("scores") or {}
    if scores:
        losses: list[str] = []
        for split_scores in scores.values():
            losses += [loss for loss in split_scores if loss not in losses]
        rows = [
            [split] + [split_scores.get(loss) for loss in losses]
            for split, split_scores in scores.items()
        ]
        lines += ["", table(["split", *losses], rows)]
    reported = body.get("reported") or {}
    if reported:  # beside the losses, not ranked (a multiclass ensemble's tu, du, mi)
        names: list[str] = []
        for values in reported.values():
            names += [name for name in values if name not in names]
        rows = [
            [split] + [values.get(name) for name in names] for split, values in reported.items()
        ]
        lines += ["", "Reported, not ranked:", table(["split", *names], rows)]
    ladder = body.get("ladder") or {}
    if ladder:
        rows = [
            [split, shown["loss"], shown["shown"], "yes" if shown["accepted"] else "no"]
            for split, shown in ladder.items()
        ]
        lines += ["", "Through the Ladder:", table(["split", "loss", "shown", "accepted"], rows)]
    if body.get("errors"):
        lines += [""] + [str(line) for line in body["errors"]]
    if body.get("failure"):
        lines += ["", str(body["failure"])]
    return "\n".join(line for line in lines if line is not None).rstrip()
