"""Problems found in a file, collected rather than raised one at a time.

Every problem is reported as ``PATH:LINE: message`` (spec §1). Vectorised checks
find bad lines as whole arrays, so the collector accepts arrays of line numbers
with a function that formats the message for one of them; only the lines that
are finally shown are ever formatted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

MAX_REPORTED = 100


@dataclass(frozen=True)
class Problem:
    """One bad line: ``path``, 1-based ``line`` (0 for the whole file) and ``message``."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        if self.line <= 0:
            return f"{self.path}: {self.message}"
        return f"{self.path}:{self.line}: {self.message}"


class ScoringError(Exception):
    """A file breaks the format; ``problems`` lists what was shown, ``total`` counts all."""

    def __init__(self, problems: list[Problem], total: int | None = None):
        self.problems = list(problems)
        self.total = len(self.problems) if total is None else total
        super().__init__(self.report())

    @property
    def lines(self) -> list[str]:
        out = [str(p) for p in self.problems]
        hidden = self.total - len(self.problems)
        if hidden > 0:
            out.append(f"... and {hidden} more problem{'s' if hidden != 1 else ''}")
        return out

    def report(self) -> str:
        return "\n".join(self.lines)


def fmt(value: float) -> str:
    """A number as a person would write it: ``0.7``, ``1``, ``-2.5e-08``."""
    value = float(value)
    if value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return repr(value)


class Problems:
    """Collects problems for one file; reports the first ``MAX_REPORTED`` by line."""

    def __init__(self, path: str):
        self.path = path
        self._single: list[tuple[int, int, str]] = []
        self._batches: list[tuple[np.ndarray, Callable[[int], str]]] = []
        self._order = 0

    def add(self, line: int, message: str) -> None:
        self._single.append((line, self._order, message))
        self._order += 1

    def add_lines(self, lines, message: Callable[[int], str]) -> None:
        """Record one problem per entry of ``lines``; ``message(i)`` formats entry ``i``."""
        lines = np.asarray(lines, dtype=np.int64)
        if lines.size:
            self._batches.append((lines, message))

    @property
    def total(self) -> int:
        return len(self._single) + sum(int(lines.size) for lines, _ in self._batches)

    def __bool__(self) -> bool:
        return self.total > 0

    def shown(self, limit: int = MAX_REPORTED) -> list[Problem]:
        candidates: list[tuple[int, int, str | tuple[int, int]]] = [
            (line, order, msg) for line, order, msg in self._single
        ]
        for b, (lines, _) in enumerate(self._batches):
            # Only the smallest `limit` lines of a batch can be shown.
            take = np.argsort(lines, kind="stable")[:limit]
            candidates.extend((int(lines[i]), self._order + b, (b, int(i))) for i in take)
        candidates.sort(key=lambda c: (c[0], c[1]))
        out = []
        for line, _, msg in candidates[:limit]:
            if isinstance(msg, tuple):
                b, i = msg
                msg = self._batches[b][1](i)
            out.append(Problem(self.path, line, msg))
        return out

    def error(self) -> ScoringError:
        return ScoringError(self.shown(), self.total)

    def raise_if_any(self) -> None:
        if self:
            raise self.error()
