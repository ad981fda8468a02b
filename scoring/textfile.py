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
_SPLIT = re.compile(r"[ \t]+")


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


def iter_blocks(source, block_size: int = BLOCK_SIZE) -> Iterator[bytes]:
    """Yield blocks of whole lines, each ending in LF."""
    stream, close = _open(source)
    try:
        carry = b""
        while True:
            chunk = stream.read(block_size)
            if not chunk:
                break
            cut = chunk.rfind(b"\n")
            if cut < 0:
                carry += chunk  # a very long line: keep reading until it ends
                continue
            yield carry + chunk[: cut + 1] if carry else chunk[: cut + 1]
            carry = chunk[cut + 1 :]
        if carry:
            yield carry + b"\n"
    finally:
        if close:
            stream.close()


def tables(source, problems: Problems) -> Iterator[Table]:
    """The file as a sequence of :class:`Table` blocks, numbered from line 1."""
    line = 1
    for buf in iter_blocks(source):
        table = tokenize(buf, line, problems)
        line += table.n_lines
        yield table


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
    table = _fixed_width(buf, b, first_line)  # checks every byte it accepts
    if table is None:
        newlines = np.flatnonzero(b == 10)
        returns = np.flatnonzero(b == 13)
        plain = (
            not np.count_nonzero(b > 126)
            and np.count_nonzero(b < 32) == newlines.size + np.count_nonzero(b == 9) + returns.size
            # CR only in CR LF: anywhere else it is no separator (spec §1).
            and bool((b[np.minimum(returns + 1, b.size - 1)] == 10).all())
        )
        if plain:
            table = _general(buf, b, newlines, first_line)
    if table is None:
        table = _careful(buf, first_line, problems)
    return table


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


# MATLAB's save -ascii field: "   d.ddddddde+XX" (16 bytes: sign or blank at byte 2).
_MATLAB = (16, 13, 7, 2)


def _bytes_mask(pairs: dict[int, int]) -> np.uint64:
    return np.uint64(sum(v << (8 * k) for k, v in pairs.items()))


# Little-endian words: byte k of the field is bits 8k..8k+7 of word k // 8.
_W0_MASK = _bytes_mask({0: 0xFF, 1: 0xFF, 3: 0xF0, 4: 0xFF, 5: 0xF0, 6: 0xF0, 7: 0xF0})
_W0_WANT = _bytes_mask({0: 0x20, 1: 0x20, 3: 0x30, 4: 0x2E, 5: 0x30, 6: 0x30, 7: 0x30})
_W0_SIX = _bytes_mask({3: 6, 5: 6, 6: 6, 7: 6})
_W0_DIGITS = _bytes_mask({3: 0xF0, 5: 0xF0, 6: 0xF0, 7: 0xF0})
_W0_DIGITS_WANT = _bytes_mask({3: 0x30, 5: 0x30, 6: 0x30, 7: 0x30})
_W1_MASK = _bytes_mask({0: 0xF0, 1: 0xF0, 2: 0xF0, 3: 0xF0, 4: 0xDF, 6: 0xF0, 7: 0xF0})
_W1_WANT = _bytes_mask({0: 0x30, 1: 0x30, 2: 0x30, 3: 0x30, 4: 0x45, 6: 0x30, 7: 0x30})
_W1_SIX = _bytes_mask({0: 6, 1: 6, 2: 6, 3: 6, 6: 6, 7: 6})
_W1_DIGITS = _bytes_mask({0: 0xF0, 1: 0xF0, 2: 0xF0, 3: 0xF0, 6: 0xF0, 7: 0xF0})
_W1_DIGITS_WANT = _bytes_mask({0: 0x30, 1: 0x30, 2: 0x30, 3: 0x30, 6: 0x30, 7: 0x30})
_U = np.uint64


def _matlab16(x: np.ndarray) -> np.ndarray | None:
    """MATLAB fields, eight bytes at a time: layout checks and digits as integer arithmetic.

    A byte is a digit when its high nibble is 3 and adding 6 keeps it so; a
    carry out of a non-digit byte can only make a check fail, never pass.
    """
    w = x.view("<u8")
    w0, w1 = w[:, 0], w[:, 1]
    sign = (w0 >> _U(16)) & _U(0xFF)
    esign = (w1 >> _U(40)) & _U(0xFF)
    if not (
        ((w0 & _W0_MASK) == _W0_WANT).all()
        and (((w0 + _W0_SIX) & _W0_DIGITS) == _W0_DIGITS_WANT).all()
        and ((w1 & _W1_MASK) == _W1_WANT).all()
        and (((w1 + _W1_SIX) & _W1_DIGITS) == _W1_DIGITS_WANT).all()
        and ((sign == _U(0x20)) | (sign == _U(0x2D)) | (sign == _U(0x2B))).all()
        and ((esign == _U(0x2B)) | (esign == _U(0x2D))).all()
    ):
        return None
    f = _U(0xF)
    low = w1 & _U(0x0F0F0F0F)  # four digits, first one in the lowest byte
    low = (low * _U(10) + (low >> _U(8))) & _U(0x00FF00FF)
    low = (low * _U(100) + (low >> _U(16))) & _U(0xFFFF)
    mantissa = (
        ((w0 >> _U(24)) & f) * _U(10_000_000)
        + ((w0 >> _U(40)) & f) * _U(1000_000)
        + ((w0 >> _U(48)) & f) * _U(100_000)
        + ((w0 >> _U(56)) & f) * _U(10_000)
        + low
    ).astype(np.float64)
    exponent = (((w1 >> _U(48)) & f) * _U(10) + ((w1 >> _U(56)) & f)).astype(np.int64)
    return _scale(
        mantissa, np.where(esign == _U(0x2D), -exponent, exponent) - 7, sign == _U(0x2D), x
    )


def _scale(mantissa, power, negative, x) -> np.ndarray | None:
    """mantissa · 10**power, correctly rounded (Clinger's fast path, |power| <= 22)."""
    clipped = np.abs(np.clip(power, -22, 22))
    values = np.where(power >= 0, mantissa * _P10[clipped], mantissa / _P10[clipped])
    exact = np.abs(power) <= 22
    if not exact.all():
        # The text carries its own sign; the sign is applied below.
        values[~exact] = np.abs(np.fromstring(x[~exact].tobytes(), dtype=np.float64, sep=" "))
    values = np.where(negative, -values, values)
    return values if np.isfinite(values).all() else None


def _columns(x: np.ndarray, field: int, sci: int, frac: int, exp: int) -> np.ndarray | None:
    """Any right-aligned d.ddde+XX layout, one byte column at a time."""
    lead = field - sci
    sign = x[:, lead - 1]
    if not (
        # Every field starts with a blank, or "1.0e+00-2.0e+00" would read as two numbers.
        (x[:, : lead - 1] == 32).all()
        and (x[:, 0] == 32).all()
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
    power = np.where(x[:, field - exp - 1] == 45, -exponent, exponent) - frac
    return _scale(mantissa, power, sign == 45, x)


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
    text = text.rstrip(" \t\r")  # a CR before the LF ends the line; trailing blanks too
    if "\r" in text:
        return [], (
            f"unexpected carriage return (CR) at column {text.index(chr(13)) + 1}; expected "
            "numbers separated by spaces or tabs, each line ending in LF or CR LF"
        )
    text = text.lstrip(" \t")
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
