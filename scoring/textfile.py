"""Reading ASCII number files into flat arrays, fast and without ever raising.

A file is read in blocks of whole lines. Each block becomes a :class:`Table`:
the numbers of all its lines in one flat float64 array plus the count of
numbers on each line. Three paths turn bytes into numbers:

- *fixed width*: every line of the block has the same length and holds
  right-aligned fields in scientific notation, as MATLAB's ``save -ascii``
  writes them (``   6.7125064e-01``). The block is reshaped without copying
  token by token, checked column by column and converted with integer
  arithmetic; Clinger's fast path (an exact mantissa below 2**53 scaled by an
  exact power of ten) keeps every value correctly rounded.
- *general*: numpy's C ``fromstring`` reads any block of plain decimal
  numbers; token boundaries come from the separator mask.
- *careful*: a block in which either path finds anything unusual is read line
  by line with Python's ``float`` so that every bad line gets its own message.
  Only blocks with problems (or unusual spellings such as ``1_000``) pay for it.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from .errors import Problems

BLOCK_SIZE = 1 << 20
_P10 = 10.0 ** np.arange(23)
_SCI = re.compile(rb"([+-]?)(\d)\.(\d+)[eE]([+-])(\d+)$")
_SPLIT = re.compile(r"[ \t\r]+")


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
    def offsets(self) -> np.ndarray:
        return np.cumsum(self.counts) - self.counts


def iter_blocks(source, block_size: int = BLOCK_SIZE) -> Iterator[tuple[bytes, int]]:
    """Yield ``(bytes, first_line)`` blocks of whole lines, each ending in LF."""
    stream, close = _open(source)
    try:
        carry = b""
        line = 1
        while True:
            chunk = stream.read(block_size)
            if not chunk:
                break
            cut = chunk.rfind(b"\n")
            if cut < 0:
                carry += chunk  # a very long line: keep reading until it ends
                continue
            block = carry + chunk[: cut + 1] if carry else chunk[: cut + 1]
            carry = chunk[cut + 1 :]
            yield block, line
            line += block.count(b"\n")
        if carry:
            yield carry + b"\n", line
    finally:
        if close:
            stream.close()


def _open(source):
    if isinstance(source, bytes | bytearray | memoryview):
        return io.BytesIO(source), True
    if isinstance(source, str | os.PathLike):
        return open(source, "rb"), True  # noqa: SIM115 - closed by iter_blocks
    if hasattr(source, "read"):
        if hasattr(source, "seek"):
            source.seek(0)
        return source, False
    raise TypeError(f"cannot read numbers from {type(source).__name__}")


def tokenize(buf: bytes, first_line: int, problems: Problems) -> Table:
    """Turn a block of whole lines into a :class:`Table`, reporting unreadable lines."""
    b = np.frombuffer(buf, dtype=np.uint8)
    newlines = np.flatnonzero(b == 10)
    n_lines = newlines.size
    clean = not np.count_nonzero(b > 126) and np.count_nonzero(b < 32) == (
        n_lines + np.count_nonzero(b == 9) + np.count_nonzero(b == 13)
    )
    if clean:
        table = _fixed_width(b, newlines, first_line)
        if table is None:
            table = _general(buf, b, newlines, first_line)
        if table is not None:
            return table
    return _careful(buf, first_line, problems)


def _general(buf: bytes, b: np.ndarray, newlines: np.ndarray, first_line: int) -> Table | None:
    sep = (b <= 32).view(np.int8)
    # -1 where a token starts, +1 where the separator after a token starts.
    edges = np.flatnonzero(np.diff(sep, prepend=np.int8(1)))
    ends = edges[1::2]
    counts = np.diff(np.searchsorted(ends, newlines, side="right"), prepend=0)
    try:
        values = np.fromstring(buf, dtype=np.float64, sep=" ")
    except ValueError:
        return None
    if values.size != ends.size or not np.isfinite(values).all():
        return None
    return Table(first_line, values, counts, np.zeros(counts.size, bool))


def _fixed_width(b: np.ndarray, newlines: np.ndarray, first_line: int) -> Table | None:
    n_lines = newlines.size
    width = int(newlines[0])
    if n_lines == 0 or width == 0 or b.size != n_lines * (width + 1):
        return None
    rows = b.reshape(n_lines, width + 1)
    if not (rows[:, width] == 10).all():
        return None  # lines of different lengths
    if (rows[:, width - 1] == 13).all():
        width -= 1  # CRLF
    layout = _field_layout(rows[0, :width].tobytes())
    if layout is None:
        return None
    field, sci, frac, exp = layout
    if width % field:
        return None
    per_line = width // field
    x = np.ascontiguousarray(rows[:, :width]).reshape(-1, field)
    lead = field - sci
    sign = x[:, lead - 1]
    if not (
        (x[:, : lead - 1] == 32).all()
        and ((sign == 32) | (sign == 45) | (sign == 43)).all()
        and (x[:, lead + 1] == 46).all()
        and ((x[:, field - exp - 2] | 32) == 101).all()
        and ((x[:, field - exp - 1] == 43) | (x[:, field - exp - 1] == 45)).all()
    ):
        return None
    digit_cols = np.r_[lead, lead + 2 : lead + 2 + frac, field - exp : field]
    digits = x[:, digit_cols] - np.uint8(48)
    if not (digits < 10).all():
        return None
    digits = digits.astype(np.float64)
    mantissa = digits[:, : frac + 1] @ _P10[frac::-1]
    exponent = (digits[:, frac + 1 :] @ _P10[exp - 1 :: -1]).astype(np.int64)
    scale = np.where(x[:, field - exp - 1] == 45, -exponent, exponent) - frac
    exact = np.abs(scale) <= 22
    clipped = np.clip(scale, -22, 22)
    values = np.where(
        scale >= 0, mantissa * _P10[np.abs(clipped)], mantissa / _P10[np.abs(clipped)]
    )
    if not exact.all():
        values[~exact] = np.fromstring(x[~exact].tobytes(), dtype=np.float64, sep=" ")
    values = np.where(sign == 45, -values, values)
    if not np.isfinite(values).all():
        return None
    counts = np.full(n_lines, per_line, dtype=np.int64)
    return Table(first_line, values, counts, np.zeros(n_lines, bool))


def _field_layout(line: bytes) -> tuple[int, int, int, int] | None:
    """(field width, unsigned token length, fraction digits, exponent digits) of line's first field."""
    stripped = line.lstrip(b" ")
    if not stripped or len(stripped) == len(line):
        return None
    end = stripped.find(b" ")
    token = stripped if end < 0 else stripped[:end]
    match = _SCI.match(token)
    if match is None:
        return None
    frac, exp = len(match.group(3)), len(match.group(5))
    if frac > 14:
        return None  # mantissa would not be exact in a double
    field = len(line) - len(stripped) + len(token)
    return field, 4 + frac + exp, frac, exp


def _careful(buf: bytes, first_line: int, problems: Problems) -> Table:
    lines = buf.split(b"\n")[:-1]
    counts = np.zeros(len(lines), dtype=np.int64)
    bad = np.zeros(len(lines), dtype=bool)
    values: list[float] = []
    for i, raw in enumerate(lines):
        line_no = first_line + i
        numbers, message = parse_line(raw, first=line_no == 1)
        if message is not None:
            problems.add(line_no, message)
            bad[i] = True
            continue
        counts[i] = len(numbers)
        values.extend(numbers)
    return Table(first_line, np.array(values, dtype=np.float64), counts, bad)


def parse_line(raw: bytes, *, first: bool = False) -> tuple[list[float], str | None]:
    """Numbers on one line, or the message that says why it cannot be read."""
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError as exc:
        return [], _non_ascii(raw, exc.start, first)
    for col, ch in enumerate(text, 1):
        if ord(ch) < 32 and ch not in "\t\r":
            return [], (
                f"unexpected control character 0x{ord(ch):02x} at column {col}; "
                "expected numbers separated by spaces or tabs"
            )
    text = text.strip(" \t\r")
    if not text:
        return [], None
    numbers = []
    for token in _SPLIT.split(text):
        try:
            value = float(token)
        except ValueError:
            return [], _not_a_number(token)
        if value != value or value in (float("inf"), float("-inf")):
            return [], f"expected a finite number, found {_show(token)}"
        numbers.append(value)
    return numbers, None


def _non_ascii(raw: bytes, start: int, first: bool) -> str:
    if first and start == 0 and raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "the file is UTF-16 text; save it as plain ASCII"
    if first and start == 0 and raw.startswith(b"\xef\xbb\xbf"):
        return "the file starts with a UTF-8 byte order mark; save it as plain ASCII"
    try:
        ch = raw[start:].decode("utf-8")[0]
        found = f"character {ch!r}"
    except UnicodeDecodeError:
        found = f"byte 0x{raw[start]:02x}"
    return f"unexpected {found} at column {start + 1}; expected plain ASCII numbers"


def _not_a_number(token: str) -> str:
    if "," in token or ";" in token:
        return f"expected numbers separated by spaces or tabs, found {_show(token)}"
    return f"expected a number, found {_show(token)}"


def _show(token: str) -> str:
    return repr(token if len(token) <= 40 else token[:37] + "...")
