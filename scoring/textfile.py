"""Reading ASCII number files into flat arrays, fast and without ever raising.

A file is read in blocks of whole lines. Each block becomes a :class:`Table`:
the numbers of all its lines in one flat float64 array plus the count of
numbers on each line. First the C parser (``scoring/_native.c``, built by
``python -m scoring._build``) tries the block: one pass, every value correctly
rounded (Clinger's fast path, then Eisel-Lemire, then Python's own conversion).
It refuses any block holding anything but plain numbers, blanks and line ends,
and never reports a problem itself; a refused block (or every block, when the
parser is not built) takes the numpy paths, which write every message:

- *fixed width*: every line of the block has the same length and holds
  right-aligned fields in scientific notation, as MATLAB's ``save -ascii``
  writes them (``   6.7125064e-01``). The block is reshaped without copying
  token by token, checked column by column and converted with integer
  arithmetic; Clinger's fast path (an exact mantissa below 2**53 scaled by an
  exact power of ten) keeps every value correctly rounded.
- *general*: numpy's C ``fromstring`` reads any block of plain decimal
  numbers; token boundaries come from the separator mask.
- *sorting out*: in a block that either path refuses, array operations find
  the lines holding anything but plain numbers (a byte other than digits, signs,
  points, exponents and blanks, or a malformed token); ``fromstring`` reads the
  others and only the odd lines are read one by one with Python's ``float``
  (:mod:`scoring.lines`), so that every bad line gets its own message.

A hostile file costs little more than a valid one: one bad line per block does
not send the block's other lines through Python, a line with more numbers than
``max_numbers`` is rejected without converting its tokens, and reading stops once
the file's :class:`~scoring.errors.Problems` has counted enough to give up.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from . import _accel
from .blocks import MAX_LINE_BYTES, LongLine, Tail, iter_blocks
from .errors import Problems
from .fixedwidth import _MATLAB, _columns, _field_layout, _matlab16
from .lines import TOO_LONG, read_lines, too_many


@dataclass
class Table:
    """Numbers of a block of lines: ``values`` flat, ``counts[i]`` numbers on line i.

    ``bad[i]`` marks a line already reported as unreadable; it holds no values.
    """

    first_line: int
    values: np.ndarray
    counts: np.ndarray
    bad: np.ndarray

    @property
    def n_lines(self) -> int:
        return int(self.counts.size)

    @property
    def line_numbers(self) -> np.ndarray:
        return self.first_line + np.arange(self.counts.size)

    @property
    def uniform(self) -> int | None:
        """The count of every line when they all hold the same (the C parser's blocks of
        one row type), else None: checks of whole blocks without a pass over the lines."""
        return int(self.counts[0]) if self.counts.strides == (0,) and self.counts.size else None

    def full(self) -> bool:
        """Every line holds a number and none was unreadable (no row to pick out)."""
        uniform = self.uniform  # (only the C parser's blocks, which have no bad line)
        if uniform is not None:
            return uniform > 0
        return bool(self.n_lines and self.counts.all() and not self.bad.any())

    def max_count(self) -> int:
        uniform = self.uniform
        return uniform if uniform is not None else int(self.counts.max(initial=0))

    @property
    def offsets(self) -> np.ndarray:
        if self.uniform is not None:
            return np.arange(self.counts.size) * self.uniform
        if self.values.size == self.counts.size and self.counts.all():
            return np.arange(self.counts.size)  # one number on every line
        return np.cumsum(self.counts) - self.counts


def compiled() -> bool:
    """Whether the C parser is built (``python -m scoring._build``; make install does)
    and not switched off (:func:`scoring._accel.disabled`)."""
    return _accel.native() is not None


def tables(
    source, problems: Problems, max_numbers: int | None = None, rows_wanted: int | None = None
) -> Iterator[Table | Tail]:
    """The file as a sequence of :class:`Table` blocks, numbered from line 1.

    Stops early, marking ``problems`` as a lower bound, once they are hopeless. Past
    ``rows_wanted`` non-blank lines (and the block holding the first extra one) the rest
    is only counted, as one :class:`Tail`: a file of too many rows costs a scan, not a read.
    """
    line, rows = 1, 0
    # Spec §1: a line over 1 MiB is a line error in every file, whatever it holds.
    # (A file by its path is read through a mapping: no copy of its bytes before parsing.)
    blocks = iter_blocks(source, max_line=MAX_LINE_BYTES, views=True)
    ahead = _ParsedAhead(blocks, max_numbers)
    try:
        for buf, parsed in ahead:
            if problems.hopeless:
                problems.stop()  # and there is more to read
                return
            if isinstance(buf, LongLine):
                problems.add(line, buf.message(max_numbers, MAX_LINE_BYTES), TOO_LONG)
                table = Table(line, np.empty(0), np.zeros(1, np.int64), np.ones(1, bool))
            elif isinstance(parsed, Table):
                table = parsed
                table.first_line = line
            else:
                table = tokenize(buf, line, problems, max_numbers, compiled=parsed is None)
            line += table.n_lines
            rows += int(np.count_nonzero((table.counts > 0) | table.bad))
            yield table
            if rows_wanted is not None and rows > rows_wanted:
                tail = Tail(line)
                for rest in ahead.unparsed():
                    tail.add(rest)
                yield tail
                return
    finally:
        ahead.close()


class _ParsedAhead:
    """The blocks, each with the C parser's :class:`Table` of it (None: not parsed here,
    or refused, for :func:`tokenize`'s other paths to read), the next block parsed on
    another thread (PARSE_THREADS) while the caller checks this one.

    The C parser releases the GIL while it reads a block, so that on two cores a large
    file's parsing overlaps its reading and checking (and the multiclass reader's
    normalising, itself on a thread of its own). Only the C parser runs there: it never
    reports a problem, so every message is still written by the calling thread, in the
    file's order. A file of one block never starts a thread.
    """

    def __init__(self, blocks: Iterator[bytes | LongLine], max_numbers: int | None):
        self.blocks = blocks
        self.max_numbers = max_numbers
        self.native = _accel.native() is not None
        self._pool: ThreadPoolExecutor | None = None
        self._pending: deque[tuple[bytes | LongLine, Future | None]] = deque()

    def __iter__(self) -> Iterator[tuple[bytes | LongLine, Table | None | bool]]:
        for buf in self.blocks:
            self._pending.append((buf, self._submit(buf)))
            # (as many blocks in flight as threads parse them, and the caller's)
            if len(self._pending) > PARSE_THREADS:
                yield self._result(self._pending.popleft())
        while self._pending:
            yield self._result(self._pending.popleft())

    def _submit(self, buf) -> Future | None:
        if not self.native or isinstance(buf, LongLine) or not self._pending:
            return None  # (the first block: parsed by the caller, a file may be one block)
        try:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(PARSE_THREADS)
            return self._pool.submit(_compiled, buf, 0, self.max_numbers)
        except RuntimeError:  # ("can't start new thread", near a process's limits)
            self.native = False
            return None

    @staticmethod
    def _result(pending) -> tuple[bytes | LongLine, Table | None | bool]:
        """(block, its Table) when parsed ahead; (block, False) when the C parser refused
        it (the other paths read it); (block, None) when it was not tried."""
        buf, job = pending
        if job is None:
            return buf, None
        table = job.result()
        return buf, (table if table is not None else False)

    def unparsed(self) -> Iterator[bytes | LongLine]:
        """The blocks not yet handed out, unparsed (the tail of a file of too many rows)."""
        while self._pending:
            buf, job = self._pending.popleft()
            if job is not None:
                job.cancel()
            yield buf
        yield from self.blocks

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


def tokenize(
    buf: bytes,
    first_line: int,
    problems: Problems,
    max_numbers: int | None = None,
    *,
    compiled: bool = True,
) -> Table:
    """Turn a block of whole lines into a :class:`Table`, reporting unreadable lines.

    A line of more than ``max_numbers`` numbers is unreadable too, whichever path reads it.
    ``compiled`` False: the C parser has already refused the block.
    """
    if compiled:
        table = _compiled(buf, first_line, max_numbers)
        if table is not None:
            return table
    buf = bytes(buf)  # (a view of a mapped file: the other paths take bytes)
    b = np.frombuffer(buf, dtype=np.uint8)
    table = _fixed_width(buf, b, first_line)  # checks every byte it accepts
    if table is not None:
        if max_numbers is not None and table.counts.max() > max_numbers:
            table = _drop_long_lines(table, problems, max_numbers)
        return table
    newlines = np.flatnonzero(b == 10)
    returns = np.flatnonzero(b == 13)
    plain = (
        not np.count_nonzero(b > 126)
        and np.count_nonzero(b < 32) == newlines.size + np.count_nonzero(b == 9) + returns.size
        # CR only in CR LF: anywhere else it is no separator (spec §1).
        and bool((b[np.minimum(returns + 1, b.size - 1)] == 10).all())
    )
    if plain:
        table = _general(buf, b, newlines, first_line, problems, max_numbers)
    if table is not None:
        return table
    if newlines.size <= _FEW_LINES:
        return _careful(buf, first_line, problems, max_numbers)
    return _sort_out(buf, b, newlines, first_line, problems, max_numbers)


class _Scratch(threading.local):
    """The C parser's output buffers, reused from block to block (one set per thread).

    Fresh memory is not free: numpy asks for huge pages on arrays of 4 MB and more, and
    the kernel zeroes each 2 MB page on its first touch. Reused, that cost is paid once
    per process instead of once per block; each block's numbers are then copied out.
    """

    values = np.empty(0)
    counts = np.empty(0, dtype=np.int64)

    def take(self, size: int) -> tuple[np.ndarray, np.ndarray]:
        if self.counts.size < size:
            # A number takes a digit and a blank at least; a line at least its LF.
            self.values = np.empty(size // 2 + 1)
            self.counts = np.empty(size, dtype=np.int64)
        return self.values, self.counts


_scratch = _Scratch()
# One thread parses a large file's next blocks (with its own scratch buffers), one block
# ahead at a time: on this project's two-core machines two such threads were slower (they
# then compete with the reading thread and the multiclass reader's normalising thread).
PARSE_THREADS = 1
# Blocks are about 1 MiB (blocks.BLOCK_SIZE); only one very long line makes a larger one.
# Beyond this its scratch buffers (12 bytes per byte of block) are not worth keeping:
# numpy reads it.
_COMPILED_MAX_BLOCK = 4 << 20


def _compiled(buf: bytes, first_line: int, max_numbers: int | None) -> Table | None:
    """The block read by the C parser, or None if any line needs a closer look."""
    native = _accel.native()
    if native is None or len(buf) > _COMPILED_MAX_BLOCK:
        return None
    values, counts = _scratch.take(len(buf))
    read = native.parse_block(buf, values, counts, -1 if max_numbers is None else max_numbers)
    if read is None:
        return None
    n, lines = read
    counts = counts[:lines]
    if lines and n == lines * int(counts[0]) and (counts == counts[0]).all():
        # The same count on every line (a classification file, a file of one row type):
        # one number stands for all of them, read-only, in no memory.
        counts = np.broadcast_to(np.int64(counts[0]), (lines,))
    else:
        counts = counts.copy()
    return Table(first_line, values[:n].copy(), counts, np.zeros(lines, dtype=bool))


def _drop_long_lines(table: Table, problems: Problems, max_numbers: int) -> Table:
    """Report the lines of more than ``max_numbers`` numbers and drop their values."""
    long = table.counts > max_numbers
    found = table.counts[long]
    problems.add_lines(
        table.line_numbers[long], lambda i: too_many(int(found[i]), max_numbers), TOO_LONG
    )
    keep = np.repeat(~long, table.counts)
    counts = np.where(long, 0, table.counts)
    return Table(table.first_line, table.values[keep], counts, table.bad | long)


def _general(
    buf: bytes,
    b: np.ndarray,
    newlines: np.ndarray,
    first_line: int,
    problems: Problems | None = None,
    max_numbers: int | None = None,
) -> Table | None:
    values, counts, long = _convert(buf, b, newlines, max_numbers if problems is not None else None)
    if values is None or not np.isfinite(values).all():
        return None
    if long.any():
        counts = _report_long(problems, first_line, counts, long, max_numbers)
    return Table(first_line, values, counts, long)


def _convert(buf: bytes, b: np.ndarray, newlines: np.ndarray, max_numbers: int | None):
    """(values or None if fromstring fails, numbers per line, lines of too many numbers).

    The values of lines of more than ``max_numbers`` numbers are left out: those
    lines are blanked before conversion, so that their tokens are never converted.
    """
    sep = (b <= 32).view(np.int8)
    # -1 where a token starts, +1 where the separator after a token starts.
    edges = np.flatnonzero(np.diff(sep, prepend=np.int8(1)))
    ends = edges[1::2]
    counts = np.diff(np.searchsorted(ends, newlines, side="right"), prepend=0)
    long = np.zeros(counts.size, bool)
    expected = ends.size
    if max_numbers is not None and counts.max() > max_numbers:
        long = counts > max_numbers
        text = b.copy()
        text[np.repeat(long, np.diff(newlines, prepend=-1))] = 32
        buf = text.tobytes()
        expected -= int(counts[long].sum())
    if expected == 0:
        return np.empty(0), counts, long  # fromstring would read a blank text as [-1.0]
    try:
        values = np.fromstring(buf, dtype=np.float64, sep=" ")
    except ValueError:
        return None, counts, long
    return (values if values.size == expected else None), counts, long


def _report_long(problems, first_line, counts, long, max_numbers) -> np.ndarray:
    """Report the lines of too many numbers; their counts become 0 (they hold no values)."""
    found = counts[long]
    problems.add_lines(
        first_line + np.flatnonzero(long),
        lambda i: too_many(int(found[i]), max_numbers),
        TOO_LONG,
    )
    return np.where(long, 0, counts)


def _fixed_width(buf: bytes, b: np.ndarray, first_line: int) -> Table | None:
    width = buf.find(b"\n")
    if width <= 0 or b.size % (width + 1):
        return None
    n_lines = b.size // (width + 1)
    rows = b.reshape(n_lines, width + 1)
    if not (rows[:, width] == 10).all():
        return None  # lines of different lengths
    if (rows[:, width - 1] == 13).all():
        width -= 1  # CRLF
    layout = _field_layout(buf[:width])
    if layout is None or width % layout[0]:
        return None
    field = layout[0]
    x = np.ascontiguousarray(rows[:, :width]).reshape(-1, field)
    values = _matlab16(x) if layout == _MATLAB else _columns(x, *layout)
    if values is None:
        return None
    counts = np.full(n_lines, width // field, dtype=np.int64)
    return Table(first_line, values, counts, np.zeros(n_lines, bool))


def _careful(
    buf: bytes, first_line: int, problems: Problems, max_numbers: int | None = None
) -> Table:
    """Every line of the block read one by one."""
    lines = buf.split(b"\n")[:-1]
    numbers = range(first_line, first_line + len(lines))
    counts, bad, values, read = read_lines(lines, numbers, len(lines), problems, max_numbers)
    if read < len(lines):
        problems.stop()  # given up: the block ends here, and so does the file
    return Table(first_line, np.array(values, dtype=np.float64), counts, bad)


# Fewer lines than this are read one by one without looking for the odd ones first.
_FEW_LINES = 16
# Byte classes of the plain-number grammar [+-]?(D+.?D*|.D+)([eE][+-]?D+)?, a part of
# what float() reads on which numpy's fromstring agrees with it.
_BLANK, _DIGIT, _SIGN, _POINT, _EXP, _CR, _OTHER = range(7)
_CLASS = np.full(256, _OTHER, dtype=np.uint8)
_CLASS[list(b" \t\n")] = _BLANK
_CLASS[list(b"0123456789")] = _DIGIT
_CLASS[list(b"+-")] = _SIGN
_CLASS[ord(".")] = _POINT
_CLASS[list(b"eE")] = _EXP
_CLASS[ord("\r")] = _CR


def _odd_bytes(b: np.ndarray) -> np.ndarray:
    """Bytes that make their line more than plain numbers (a block ending in LF).

    Each rule looks at a byte and its neighbours: a sign starts a token or follows
    an exponent mark, a point has a digit on one side, an exponent mark follows a
    digit or point and precedes a digit or sign; then at most one point and one
    exponent per token, the point first. A CR is a blank only right before LF.
    """
    c = _CLASS[b]
    cr = np.flatnonzero(c == _CR)
    c[cr] = np.where(b[np.minimum(cr + 1, b.size - 1)] == 10, _BLANK, _OTHER)
    prev = np.empty_like(c)
    prev[0], prev[1:] = _BLANK, c[:-1]
    nxt = np.empty_like(c)
    nxt[-1], nxt[:-1] = _BLANK, c[1:]
    digit_next = nxt == _DIGIT
    sign, point, exp = c == _SIGN, c == _POINT, c == _EXP
    odd = c == _OTHER
    odd |= sign & ~(
        ((prev == _BLANK) & (digit_next | (nxt == _POINT))) | ((prev == _EXP) & digit_next)
    )
    odd |= point & ~(
        ((prev == _DIGIT) & (digit_next | (nxt == _EXP) | (nxt == _BLANK)))
        | (((prev == _BLANK) | (prev == _SIGN)) & digit_next)
    )
    odd |= exp & ~(((prev == _DIGIT) | (prev == _POINT)) & (digit_next | (nxt == _SIGN)))
    if point.any() or exp.any():
        # Position of the latest blank, and of the latest point or exponent mark before
        # each byte: a second one in the same token is odd (an exponent after a point
        # is the only pair allowed).
        at = np.arange(b.size, dtype=np.int32)
        blank = np.maximum.accumulate(np.where(c == _BLANK, at, -1))
        mark = np.maximum.accumulate(np.where(point | exp, at, -1))
        last_exp = np.maximum.accumulate(np.where(exp, at, -1))
        odd[1:] |= point[1:] & (mark[:-1] > blank[1:])
        odd[1:] |= exp[1:] & (last_exp[:-1] > blank[1:])
    return odd


def _sort_out(
    buf: bytes,
    b: np.ndarray,
    newlines: np.ndarray,
    first_line: int,
    problems: Problems,
    max_numbers: int | None,
) -> Table:
    """Read the plain lines of a block at C speed and only its odd lines one by one."""
    n = newlines.size
    starts = np.r_[0, newlines[:-1] + 1]
    lengths = newlines - starts + 1  # LF included
    odd = np.logical_or.reduceat(_odd_bytes(b), starts)
    # Blank the odd lines (keeping their LF) and convert the rest in one go.
    text = b.copy()
    blanked = np.repeat(odd, lengths)
    blanked[newlines] = False
    text[blanked] = 32
    values, counts, long = _convert(text.tobytes(), text, newlines, max_numbers)
    if values is None:
        return _careful(buf, first_line, problems, max_numbers)  # a spelling the rules missed
    infinite = ~np.isfinite(values)
    if infinite.any():  # 1e999: such a line is odd too, to get its own message
        owner = np.repeat(np.arange(n), np.where(long, 0, counts))  # the line of each value
        odd[owner[infinite]] = True
        values = values[~odd[owner]]
    counts[odd] = 0
    if long.any():
        counts = _report_long(problems, first_line, counts, long, max_numbers)
    which = np.flatnonzero(odd)
    # A generator: a block of 500,000 bad lines is given up on after a few thousand.
    lines = (buf[start:end] for start, end in zip(starts[which], newlines[which], strict=True))
    odd_counts, odd_bad, odd_values, read = read_lines(
        lines, map(int, first_line + which), which.size, problems, max_numbers
    )
    stopped = read < which.size
    which = which[:read]
    counts[which] = odd_counts
    bad = long.copy()
    bad[which] = odd_bad
    merged = np.empty(int(counts.sum()))
    from_odd = np.zeros(n, dtype=bool)
    from_odd[which] = True
    from_odd = np.repeat(from_odd, counts)
    merged[~from_odd] = values
    merged[from_odd] = odd_values
    if stopped:
        problems.stop()  # given up: the block ends at the line that made it hopeless
        cut = int(which[-1]) + 1
        counts, bad = counts[:cut], bad[:cut]
        merged = merged[: int(counts.sum())]
    return Table(first_line, merged, counts, bad)
