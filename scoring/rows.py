"""A file as example rows: blank lines, row counts and spec §1's value bound, block by block.

:class:`RowReader` turns the tokenizer's blocks into :class:`Rows` (the non-blank
lines, numbered as examples) and collects the problems every reader shares: blank
lines before the last example, a wrong number of rows. :func:`check_range` is the
first check of every reader: every number within ±1e100 and a Gaussian variance
within [0, 1e200], on each block's values at once, before any target is used, so
that no loss can overflow and no outcome depends on a hidden target.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

import numpy as np

from .blocks import Tail
from .errors import Problems, fmt
from .textfile import Table, tables

MAX_VALUE = 1e100  # every number of a file, spec §1
MAX_VARIANCE = 1e200  # a Gaussian row's variance
_VALUE_RANGE = "±" + f"{MAX_VALUE:.0e}".replace("e+", "e")  # as spec §1 writes it: ±1e100
_VARIANCE_RANGE = "[0, " + f"{MAX_VARIANCE:.0e}".replace("e+", "e") + "]"
# Summaries (errors.Problems.add): what many lines share, and its fix.
BLANK = "are blank before the last example: remove them (a blank line shifts every row after it)"
OUT_OF_RANGE = f"hold values outside {_VALUE_RANGE} (or a variance outside {_VARIANCE_RANGE})"


class Rows:
    """The non-blank lines of one block: their row indices, line numbers and numbers.

    A block without blank lines (the usual case) computes ``index``, ``lines`` and
    ``offsets`` only if asked: a file of a million one-number rows never needs them.
    """

    def __init__(
        self,
        table: Table,
        counts: np.ndarray,
        bad: np.ndarray,
        *,
        first_index: int,
        index: np.ndarray | None = None,
        lines: np.ndarray | None = None,
        offsets: np.ndarray | None = None,
    ):
        self.table = table
        self.counts = counts  # numbers on each row
        self.bad = bad  # row already reported unreadable
        self.first_index = first_index
        if index is not None:
            self.index, self.lines, self.offsets = index, lines, offsets

    @functools.cached_property
    def index(self) -> np.ndarray:
        """0-based example index of each row."""
        return self.first_index + np.arange(self.counts.size)

    @functools.cached_property
    def lines(self) -> np.ndarray:
        """1-based line number of each row."""
        return self.table.line_numbers

    @functools.cached_property
    def offsets(self) -> np.ndarray:
        """Where each row's numbers start in ``values``."""
        return self.table.offsets

    @property
    def values(self) -> np.ndarray:
        return self.table.values

    @property
    def one_number_each(self) -> bool:
        """Every row holds exactly one number (a readable non-blank row holds one or
        more, so as many numbers as rows, none bad, means one each)."""
        return self.values.size == self.counts.size and not self.bad.any()

    def with_bad(self, bad: np.ndarray) -> Rows:
        return Rows(
            self.table,
            self.counts,
            bad,
            first_index=self.first_index,
            index=self.index,
            lines=self.lines,
            offsets=self.offsets,
        )


class RowReader:
    """Reads a file as example rows: blank lines only at the end, every problem collected."""

    def __init__(
        self,
        source,
        path: str,
        *,
        tables: list[Table] | None = None,
        problems: Problems | None = None,
        max_numbers: int | None = None,
    ):
        self.source = source
        self.tables = tables  # already tokenized (task inference read them)
        self.problems = problems if problems is not None else Problems(path)
        self.max_numbers = max_numbers  # longer lines are rejected unread
        self.count = 0
        # Blank lines after the last example so far: always one run, [start, stop).
        self._pending_blank: tuple[int, int] | None = None
        self._line_of_row: dict[int, int] = {}
        self._watch: int | None = None
        self.last_line = 0
        self.last_row_line = 0

    def rows(self, expected: int | None = None) -> Iterator[Rows]:
        self._watch = expected
        if self.tables is not None:
            self.tables.reverse()  # hand each cached block over and let it go
            while self.tables:
                if self.problems.hopeless:
                    self.problems.stop()
                    self.tables.clear()
                    break
                yield self._take(self.tables.pop())
        else:
            for table in tables(self.source, self.problems, self.max_numbers, expected):
                if isinstance(table, Tail):
                    self._count(table)
                else:
                    yield self._take(table)
        if self.count == 0 and not self.problems:
            self.problems.add(1, "the file is empty; expected one example per line")

    def tokenized(self) -> Iterator[Table]:
        return tables(self.source, self.problems, self.max_numbers)

    def _take(self, table: Table) -> Rows:
        if table.full():
            return self._take_full(table)
        lines = table.line_numbers
        self.last_line = int(lines[-1]) if lines.size else self.last_line
        nonblank = (table.counts > 0) | table.bad
        if nonblank.any():
            last = int(lines[nonblank][-1])
            if self._pending_blank is not None:
                self.problems.add_range(*self._pending_blank, _blank_before_example, BLANK)
            blank = lines[~nonblank]
            self.problems.add_lines(blank[blank < last], _blank_before_example, BLANK)
            after = (last + 1, self.last_line + 1)
            self._pending_blank = after if after[0] < after[1] else None
        elif lines.size:
            start = self._pending_blank[0] if self._pending_blank else int(lines[0])
            self._pending_blank = (start, self.last_line + 1)
        index = self.count + np.arange(np.count_nonzero(nonblank))
        row_lines = lines[nonblank]
        if row_lines.size:
            self.last_row_line = int(row_lines[-1])
        if self._watch is not None and index.size and index[0] <= self._watch <= index[-1]:
            self._line_of_row[self._watch] = int(row_lines[self._watch - index[0]])
        self.count += index.size
        return Rows(
            table,
            table.counts[nonblank],
            table.bad[nonblank],
            first_index=int(index[0]) if index.size else self.count,
            index=index,
            lines=row_lines,
            offsets=table.offsets[nonblank],
        )

    def _take_full(self, table: Table) -> Rows:
        """A block with no blank line (the usual case): no row needs to be picked out."""
        n = table.n_lines
        self.last_line = self.last_row_line = table.first_line + n - 1
        if self._pending_blank is not None:
            self.problems.add_range(*self._pending_blank, _blank_before_example, BLANK)
            self._pending_blank = None
        if self._watch is not None and self.count <= self._watch < self.count + n:
            self._line_of_row[self._watch] = table.first_line + self._watch - self.count
        rows = Rows(table, table.counts, table.bad, first_index=self.count)
        self.count += n
        return rows

    def _count(self, tail: Tail) -> None:
        """The rest of a file of too many rows: counted, not read (see textfile.tables)."""
        self.count += tail.rows
        if tail.lines:
            self.last_line = tail.first_line + tail.lines - 1
        if tail.rows:
            self.last_row_line = tail.last_row_line

    def check_count(self, expected: int, what: str) -> None:
        if self.count == expected or self.count == 0 or not self.problems.exact:
            return  # (a file given up on has an unknown count)
        if self.count < expected:
            line = self.last_row_line + 1  # where the next example should have been
        else:
            line = self._line_of_row.get(expected, self.last_line)
        self.problems.add(line, f"expected {expected} rows, one per {what}, found {self.count}")


def _blank_before_example(i: int) -> str:
    return (
        "blank line before the last example; every line must hold "
        "an example (a blank line would shift the rows after it)"
    )


def check_range(rows: Rows, problems: Problems, gaussian: np.ndarray | None = None) -> Rows:
    """Report the rows holding a number beyond ±1e100 and mark them bad (spec §1).

    ``gaussian`` marks the rows whose third number is a variance: it may reach 1e200.
    Each bad row is reported once, at its first number out of range. One min and
    one max over the block decide the usual case, where nothing is out of range.
    """
    v = rows.values
    if not v.size or (v.max() <= MAX_VALUE and v.min() >= -MAX_VALUE):
        return rows
    pos = np.flatnonzero(np.abs(v) > MAX_VALUE)
    row = np.searchsorted(rows.offsets, pos, side="right") - 1  # skips rows of no numbers
    if gaussian is not None:
        variance = gaussian[row] & (pos - rows.offsets[row] == 2)
        keep = ~variance | (np.abs(v[pos]) > MAX_VARIANCE)
        pos, row = pos[keep], row[keep]
        variance = variance[keep]
    else:
        variance = np.zeros(pos.size, dtype=bool)
    # pos ascends, so row does: the first entry of each row is its first number
    first = np.flatnonzero(np.r_[True, row[1:] != row[:-1]]) if row.size else row
    row = row[first]
    found, is_var = v[pos[first]], variance[first]
    problems.add_lines(
        rows.lines[row],
        lambda i: (
            f"variance {fmt(found[i])} is outside {_VARIANCE_RANGE}"
            if is_var[i]
            else f"value {fmt(found[i])} is outside {_VALUE_RANGE}"
        ),
        OUT_OF_RANGE,
    )
    bad = rows.bad.copy()
    bad[row] = True
    return rows.with_bad(bad)
