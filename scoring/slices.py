"""Slice files (spec §8): one slice name per example of a validation or test split.

A dataset may label each example with a slice (``in`` and ``shifted`` in the 2006
covariate-shift challenge, Quiñonero-Candela et al. 2006; in-domain and shifted data in
the Shifts benchmarks, Malinin et al. 2021) so that every loss is computed on each slice
as well as on the whole split. The file ``NAME_{val,test}_slices.txt`` holds one name
per line matching ``[a-z0-9_-]{1,32}``; lines follow §1's rules (LF or CR LF, blanks
around a name and blank lines at the end ignored, a blank line before the last name and
a line over 1 MiB are errors). Every bad line is reported as ``PATH:LINE: message``, as
is a count of names that differs from the targets'.
"""

from __future__ import annotations

import re

import numpy as np

from .blocks import MAX_LINE_BYTES, LongLine, iter_blocks
from .errors import Problems

NAME_PATTERN = "[a-z0-9_-]{1,32}"
MAX_NAME = 32
_NAME = re.compile(rb"[a-z0-9_-]{1,32}")
# A block of nothing but valid names, one per line, each ending in a bare LF: the usual
# file, split without looking at each line.
_PLAIN_BLOCK = re.compile(rb"(?:[a-z0-9_-]{1,32}\n)*")
# How much of a bad line a message quotes.
_QUOTED = 40

BAD_NAME = (
    f"are not slice names: each line holds one name of 1 to {MAX_NAME} characters "
    "from a-z, 0-9, _ and -"
)
BLANK = "are blank before the last name: remove them (a blank line shifts every name after it)"


def read_slices(source, *, path: str = "slices", n: int | None = None) -> np.ndarray:
    """The slice name of every example, in file order (a numpy str array of ``n`` names).

    ``source`` is bytes, a path or a binary file. Raises
    :class:`~scoring.errors.ScoringError` listing every bad line (a name outside
    ``[a-z0-9_-]{1,32}``, a blank line before the last name, a CR inside a line, a line
    over 1 MiB, an empty file) and, when ``n`` is given, a count of names other than
    ``n``, at the line where the next name should have been (too few) or at the first
    name too many.
    """
    problems = Problems(path)
    names: list[bytes] = []
    reader = _Reader(problems, names, n)
    for block in iter_blocks(source, max_line=MAX_LINE_BYTES):
        if problems.hopeless:
            problems.stop()
            break
        if isinstance(block, LongLine):
            reader.long_line(block)
        else:
            reader.block(block)
    reader.finish()
    problems.raise_if_any()
    # (As wide as the longest name: 28 bytes a name for "shifted", not 128 for any.)
    return np.array(names, dtype=bytes).astype(str) if names else np.array([], dtype="<U1")


class _Reader:
    """Line numbering, blank lines and the count of names, block after block."""

    def __init__(self, problems: Problems, names: list[bytes], n: int | None):
        self.problems = problems
        self.names = names
        self.n = n
        self.line = 0  # the last line read
        self.last_name_line = 0
        self.extra_line = 0  # the line of the first name past n
        self.blanks: list[int] = []  # blank lines since the last name (an error if one follows)

    def _name_at(self, line: int) -> None:
        if self.blanks:
            self.problems.add_lines(self.blanks, _blank_message, BLANK)
            self.blanks = []
        self.last_name_line = line
        if self.n is not None and len(self.names) == self.n and not self.extra_line:
            self.extra_line = line

    def long_line(self, block: LongLine) -> None:
        self.line += 1
        self._name_at(self.line)
        self.names.append(b"")
        self.problems.add(
            self.line,
            f"a line of {block.length} bytes; a line is at most {MAX_LINE_BYTES} bytes "
            "(one slice name)",
            BAD_NAME,
        )

    def block(self, block: bytes) -> None:
        lines = block.split(b"\n")[:-1]  # (a block ends in LF)
        if _PLAIN_BLOCK.fullmatch(block) and not self.blanks:
            first = self.line + 1
            self.line += len(lines)
            if lines:
                if self.n is not None and len(self.names) < self.n < len(self.names) + len(lines):
                    self.extra_line = first + self.n - len(self.names)
                elif self.n is not None and len(self.names) == self.n and not self.extra_line:
                    self.extra_line = first
                self.last_name_line = self.line
                self.names.extend(lines)
            return
        for text in lines:
            self.line += 1
            self._one(text)

    def _one(self, text: bytes) -> None:
        # One CR right before the LF ends the line (CR LF); any other CR is an error.
        text = text[:-1] if text.endswith(b"\r") else text
        name = text.strip(b" \t")
        if not name and b"\r" not in text:
            self.blanks.append(self.line)
            return
        self._name_at(self.line)
        self.names.append(name)
        if b"\r" in name or b"\r" in text:
            column = text.index(b"\r") + 1
            self.problems.add(
                self.line,
                f"unexpected carriage return (CR) at column {column}; expected one slice "
                "name, each line ending in LF or CR LF",
                BAD_NAME,
            )
        elif _NAME.fullmatch(name) is None:
            self.problems.add(self.line, _bad_name(name), BAD_NAME)

    def finish(self) -> None:
        count = len(self.names)
        if count == 0 and self.problems.exact:
            self.problems.add(1, "the file is empty; expected one slice name per line")
            return
        if self.n is None or count == self.n or not self.problems.exact:
            return
        line = self.last_name_line + 1 if count < self.n else self.extra_line
        self.problems.add(line, f"expected {self.n} slice names, one per target, found {count}")


def _bad_name(name: bytes) -> str:
    shown = name[:_QUOTED].decode("utf-8", errors="backslashreplace")
    more = "…" if len(name) > _QUOTED else ""
    if (
        len(name) > MAX_NAME
        and _NAME.fullmatch(name[:MAX_NAME])
        and not name.strip(b"abcdefghijklmnopqrstuvwxyz0123456789_-")
    ):
        return f"slice name of {len(name)} characters; a name is at most {MAX_NAME}: found {shown!r}{more}"
    return (
        f"expected a slice name of 1 to {MAX_NAME} characters from a-z, 0-9, _ and -, "
        f"found {shown!r}{more}"
    )


def _blank_message(_i: int) -> str:
    return "blank line before the last name; every line must hold a slice name"


def first_appearance(names: np.ndarray) -> list[str]:
    """The distinct names in order of first appearance (spec §8's order of slices)."""
    unique, first = np.unique(np.asarray(names), return_index=True)
    return [str(unique[i]) for i in np.argsort(first, kind="stable")]
