"""One line at a time: the numbers on a line, or the message that says why it is unreadable.

The block readers of :mod:`scoring.textfile` hand over the lines they cannot read
at C speed; here each gets its own message. Every check is a C-speed pass over
the line (a 10 MB line costs milliseconds), and a line of more than ``max_numbers``
numbers is rejected before any token is converted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np

from .errors import Problems
from .options import MAX_SAMPLES

# Control characters other than TAB and CR become 0, every other byte 1: a C-speed
# search even on a line of megabytes (LF never occurs inside a line).
_CONTROL = bytes(0 if c < 32 and c not in (9, 13) else 1 for c in range(256))

_DECIMAL_COMMA = re.compile(r"[+-]?[0-9]+,[0-9]+([eE][+-]?[0-9]+)?")
# What many bad lines share, said once at the top of the report (errors.Problems.add):
# a plural verb phrase, then the fix.
COMMAS = "use commas: separate numbers with spaces or tabs"
DECIMAL_COMMAS = "use decimal commas: write numbers with a decimal point (0.5, not 0,5)"
SEMICOLONS = "use semicolons: separate numbers with spaces or tabs"
TEXT = (
    "hold text that is not a number: a file holds numbers only (no header, label, "
    "quote or index column)"
)
NOT_FINITE = "hold nan or inf: every number must be finite"
NOT_ASCII = "hold characters that are not plain ASCII: save the file as plain ASCII text"
CONTROL = "hold control characters: numbers only, separated by spaces or tabs"
CARRIAGE_RETURN = "hold a carriage return (CR) inside the line: end each line with LF or CR LF only"
TOO_LONG = (
    f"are too long: a prediction line holds one example, at most a flag and {MAX_SAMPLES} "
    "sample values"
)


def read_lines(
    lines: Iterable[bytes],
    line_numbers: Iterable[int],
    size: int,
    problems: Problems,
    max_numbers: int | None = None,
) -> tuple[np.ndarray, np.ndarray, list[float], int]:
    """Parse the ``size`` ``lines`` (numbered ``line_numbers``), reporting each unreadable one.

    Returns the count of numbers on each line, which lines were unreadable, all
    the numbers in line order, and how many lines were read: fewer than ``size``
    when ``problems`` became hopeless (reading stops at the line that made it so,
    and ``lines`` may be a generator that is never run to its end).
    """
    counts = np.zeros(size, dtype=np.int64)
    bad = np.zeros(size, dtype=bool)
    values: list[float] = []
    for i, (raw, line_no) in enumerate(zip(lines, line_numbers, strict=False)):
        numbers, message, summary = parse_line(raw, first=line_no == 1, max_numbers=max_numbers)
        if message is not None:
            problems.add(line_no, message, summary)
            bad[i] = True
            if problems.hopeless:
                return counts[: i + 1], bad[: i + 1], values, i + 1
            continue
        counts[i] = len(numbers)
        values.extend(numbers)
    return counts, bad, values, size


def too_many(count: int, max_numbers: int) -> str:
    return f"expected at most {max_numbers} numbers on a line, found {count}"


def parse_line(
    raw: bytes, *, first: bool = False, max_numbers: int | None = None
) -> tuple[list[float], str | None, str | None]:
    """Numbers on one line, or the message that says why it cannot be read (and the
    summary it shares with lines of the same problem).

    A line of more than ``max_numbers`` numbers is rejected before any is converted.
    """
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError as exc:
        return [], _non_ascii(raw, exc.start, first), NOT_ASCII
    col = raw.translate(_CONTROL).find(0)
    if col >= 0:
        return (
            [],
            (
                f"unexpected control character 0x{raw[col]:02x} at column {col + 1}; "
                "expected numbers separated by spaces or tabs"
            ),
            CONTROL,
        )
    # One CR right before the LF ends the line (CR LF); any other CR is an error, even
    # among trailing blanks ("0.5\r \n", spec §1). Trailing blanks are ignored.
    text = (text[:-1] if text.endswith("\r") else text).rstrip(" \t")
    if "\r" in text:
        return (
            [],
            (
                f"unexpected carriage return (CR) at column {text.index(chr(13)) + 1}; expected "
                "numbers separated by spaces or tabs, each line ending in LF or CR LF"
            ),
            CARRIAGE_RETURN,
        )
    text = text.lstrip(" \t")
    if not text:
        return [], None, None
    # A line has at most one token more than it has blanks: count exactly only when
    # that bound is too loose, and without splitting (a 10 MB line would be millions
    # of strings).
    if max_numbers is not None and text.count(" ") + text.count("\t") >= max_numbers:
        count = _count_tokens(text)
        if count > max_numbers:
            return [], too_many(count, max_numbers), TOO_LONG
    numbers = []
    # Only blanks (spaces and tabs) are left to split on: str.split's whitespace.
    for token in text.split():
        try:
            value = float(token)
        except ValueError:
            return [], _not_a_number(token), _not_a_number_summary(token)
        if value != value or value in (float("inf"), float("-inf")):
            return [], f"expected a finite number, found {_show(token)}", NOT_FINITE
        numbers.append(value)
    return numbers, None, None


def _count_tokens(text: str) -> int:
    """Tokens of a stripped ASCII line: the blank-to-non-blank steps, plus the first."""
    b = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    blank = (b == 32) | (b == 9)
    return 1 + int(np.count_nonzero(blank[:-1] & ~blank[1:]))


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
    if token.startswith(("#", "%", "//")):
        # A header or comment line, as np.savetxt(header=…) or other tools write one.
        return (
            f"expected a number, found {_show(token)}: header and comment lines are not "
            "allowed (np.savetxt: leave header empty)"
        )
    return f"expected a number, found {_show(token)}"


def _not_a_number_summary(token: str) -> str:
    if _DECIMAL_COMMA.fullmatch(token):
        return DECIMAL_COMMAS  # "0,5": one number, written with a comma
    if "," in token:
        return COMMAS
    return SEMICOLONS if ";" in token else TEXT


def _show(token: str) -> str:
    return repr(token if len(token) <= 40 else token[:37] + "...")
