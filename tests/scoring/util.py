"""Helpers shared by the scoring tests: reference readers and small file builders."""

from __future__ import annotations

import math
import re
from contextlib import contextmanager
from functools import partial
from unittest import mock

import numpy as np
import pytest

from scoring import ScoringError, textfile
from scoring.errors import Problems


def reference_numbers(buf: bytes) -> list[list[float] | None]:
    """Spec §1 written the slow, obvious way: per line the numbers, or None if unreadable."""
    lines = buf.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    out: list[list[float] | None] = []
    for raw in lines:
        try:
            text = raw.decode("ascii")
        except UnicodeDecodeError:
            out.append(None)
            continue
        if any(ord(c) < 32 and c not in "\t\r" for c in text):
            out.append(None)
            continue
        # Blanks are spaces and tabs; a CR only directly before the LF that ends a line.
        if text.endswith("\r"):
            text = text[:-1]
        text = text.rstrip(" \t")
        if "\r" in text:
            out.append(None)
            continue
        text = text.lstrip(" \t")
        if not text:
            out.append([])
            continue
        values: list[float] | None = []
        for token in re.split(r"[ \t]+", text):
            try:
                value = float(token)
            except ValueError:
                values = None
                break
            if not math.isfinite(value):
                values = None
                break
            values.append(value)
        out.append(values)
    return out


def table_numbers(table: textfile.Table) -> list[list[float] | None]:
    """A :class:`~scoring.textfile.Table` as per-line lists (None for a line reported bad)."""
    out: list[list[float] | None] = []
    offset = 0
    for count, bad in zip(table.counts.tolist(), table.bad.tolist(), strict=True):
        if bad:
            out.append(None)
            continue
        out.append(table.values[offset : offset + count].tolist())
        offset += count
    assert offset == table.values.size
    return out


def file_numbers(buf: bytes) -> list[list[float] | None]:
    """A whole file through the tokenizer, as per-line lists (None for an unreadable line)."""
    problems = Problems("f")
    return [line for table in textfile.tables(buf, problems) for line in table_numbers(table)]


def same_floats(a: list, b: list) -> bool:
    """Equal lists of lists of floats, bit for bit (so -0.0 differs from 0.0)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if (x is None) != (y is None):
            return False
        if x is None:
            continue
        if len(x) != len(y):
            return False
        if any(
            math.copysign(1, u) != math.copysign(1, v) or u != v for u, v in zip(x, y, strict=True)
        ):
            return False
    return True


@contextmanager
def small_blocks(size: int):
    """Read files in blocks of ``size`` bytes, so a short file spans many blocks."""
    with mock.patch.object(textfile, "iter_blocks", partial(textfile.iter_blocks, block_size=size)):
        yield


def problems_of(call, *args, **kwargs) -> ScoringError:
    """The ScoringError raised by ``call`` (fails the test if there is none)."""
    with pytest.raises(ScoringError) as info:
        call(*args, **kwargs)
    return info.value


def lines_of(text: str | list[str], crlf: bool = False) -> bytes:
    """Join rows into file bytes, one per line, with a final newline."""
    rows = text if isinstance(text, list) else [text]
    sep = "\r\n" if crlf else "\n"
    return (sep.join(rows) + sep).encode("ascii")


def quantile_row(a, q) -> str:
    return "0 " + " ".join(f"{float(x)!r} {float(y)!r}" for x, y in zip(a, q, strict=True))


def matlab(values) -> str:
    """One line as MATLAB's ``save -ascii`` writes it: each value as ``%16.7e``."""
    return "".join(f"{v:16.7e}" for v in values)


def arr(*values) -> np.ndarray:
    return np.array(values, dtype=np.float64)
