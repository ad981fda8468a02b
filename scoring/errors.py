"""Problems found in a file, collected rather than raised one at a time.

Every problem is reported as ``PATH:LINE: message`` (spec §1). Vectorised checks
find bad lines as whole arrays, so the collector accepts arrays of line numbers
with a function that formats the message for one of them.

A hostile file can have millions of bad lines, so the cost of collecting them is
bounded: only the problems that can still be shown (the ``MAX_REPORTED`` smallest
line numbers) are kept and formatted, the rest are only counted, and once
``GIVE_UP`` problems are counted the readers stop reading (the count is then a
lower bound: "... and at least N more problems").

When many lines share one problem, the report says the fix once: each problem may name
its *summary* ("use commas: separate numbers with spaces or tabs"), and a summary shared
by ``SUMMARY_MIN`` lines or more leads the report as ``PATH: 300 lines use commas: …``,
before the capped ``PATH:LINE: message`` lines (which stay as they are). A reader that
knows more about the whole file (every value between 0 and 100: percentages?) may give
a summary a *hint*, shown in its place whatever the count.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

MAX_REPORTED = 100
# Problems counted before a reader stops reading a file: far more than are shown,
# few enough that a file of millions of bad lines costs a fraction of a second.
GIVE_UP = 10_000
# A path longer than this is shown by its end (a 60,000-character folder name
# repeated in 101 lines would make a 6 MB report).
MAX_PATH = 120
# A summary leads the report once this many lines share it ("many lines"); at most
# MAX_SUMMARIES summaries lead one file's report, the most frequent first.
SUMMARY_MIN = 10
MAX_SUMMARIES = 5


@dataclass(frozen=True)
class Problem:
    """One bad line: ``path``, 1-based ``line`` (0 for the whole file) and ``message``."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        path = short_path(self.path)
        if self.line <= 0:
            return f"{path}: {self.message}"
        return f"{path}:{self.line}: {self.message}"


def short_path(path: str) -> str:
    """``path``, or its last ``MAX_PATH`` - 1 characters after "…" if it is longer."""
    return path if len(path) <= MAX_PATH else "…" + path[-(MAX_PATH - 1) :]


class ScoringError(Exception):
    """A file breaks the format; ``problems`` lists what was shown, ``total`` counts all.

    ``exact`` is False when reading stopped early: the file has at least ``total``
    problems.
    """

    def __init__(
        self,
        problems: list[Problem],
        total: int | None = None,
        *,
        exact: bool = True,
        summaries: list[Problem] | tuple[Problem, ...] = (),
    ):
        self.problems = list(problems)
        self.total = len(self.problems) if total is None else total
        self.exact = exact
        # File-level lines that lead the report ("PATH: 300 lines use commas: …").
        self.summaries = list(summaries)
        self._parts: tuple[ScoringError, ...] = ()
        super().__init__(self.report())

    @classmethod
    def combine(cls, *errors: ScoringError) -> ScoringError:
        """One error for the problems of several files (spec §4: "the problems of both"):
        each file's report in turn, under its own cap and count of the rest."""
        if len(errors) == 1:
            return errors[0]
        combined = cls(
            [p for e in errors for p in e.problems],
            sum(e.total for e in errors),
            exact=all(e.exact for e in errors),
            summaries=[s for e in errors for s in e.summaries],
        )
        combined._parts = tuple(errors)
        combined.args = (combined.report(),)
        return combined

    @property
    def lines(self) -> list[str]:
        if self._parts:
            return [line for part in self._parts for line in part.lines]
        out = [str(s) for s in self.summaries] + [str(p) for p in self.problems]
        hidden = self.total - len(self.problems)
        if hidden == 0 and not self.exact:  # reading stopped early (a time limit)
            out.append("... and perhaps more problems: the rest of the file was not read")
        elif hidden > 0 or not self.exact:
            plural = "s" if hidden != 1 else ""
            at_least = "" if self.exact else "at least "
            out.append(f"... and {at_least}{hidden} more problem{plural}")
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
    """Collects problems for one file; keeps the first ``keep`` by line and counts the rest.

    Problems are ordered by line; on one line, those added one at a time come
    before those added as arrays, each kind in the order added. Memory stays
    O(keep) whatever the number of problems: a problem that cannot be among the
    first ``keep`` is counted and dropped, its message never formatted.
    """

    def __init__(self, path: str, keep: int = MAX_REPORTED, give_up: int | None = None):
        self.path = path
        self.keep = keep
        self.give_up = GIVE_UP if give_up is None else give_up
        self.total = 0
        self.exact = True  # False once a reader stopped before the end of the file
        # ((line, 0 for single / 1 for batch, order), message), at most 2·keep long.
        self._kept: list[tuple[tuple[int, int, int], str]] = []
        self._worst: tuple[int, int, int] | None = None  # set once `keep` are kept
        self._order = 0
        # Problems counted per summary (first seen first), and hints that replace one.
        self.summary_counts: dict[str, int] = {}
        self.hints: dict[str, str] = {}

    def _count(self, summary: str | None, n: int) -> None:
        if summary is not None and n:
            self.summary_counts[summary] = self.summary_counts.get(summary, 0) + n

    def hint(self, summary: str, template: str) -> None:
        """Lead the report with ``template`` (its ``{lines}`` becomes "300 lines") in place
        of ``summary``, however few lines share it: what the whole file shows (every value
        between 0 and 100) says more than any one line."""
        self.hints[summary] = template

    def summaries(self) -> list[Problem]:
        """The lines that lead the report: each summary shared by ``SUMMARY_MIN`` lines or
        more, and each hinted one, the most frequent first (``MAX_SUMMARIES`` at most)."""
        chosen = [
            (count, summary)
            for summary, count in self.summary_counts.items()
            if count >= SUMMARY_MIN or summary in self.hints
        ]
        chosen.sort(key=lambda item: -item[0])  # stable: ties keep the order first seen
        out = []
        for count, summary in chosen[:MAX_SUMMARIES]:
            lines = f"{'' if self.exact else 'at least '}{count} line{'s' if count != 1 else ''}"
            template = self.hints.get(summary)
            message = template.format(lines=lines) if template else f"{lines} {summary}"
            out.append(Problem(self.path, 0, message))
        return out

    def add(self, line: int, message: str, summary: str | None = None) -> None:
        """One problem; ``summary`` (a plural verb phrase and its fix, "use commas: separate
        numbers with spaces or tabs") is what it shares with others of its kind."""
        self.total += 1
        self._count(summary, 1)
        key = (int(line), 0, self._order)
        self._order += 1
        if self._worst is None or key < self._worst:
            self._kept.append((key, message))
            if len(self._kept) >= 2 * self.keep:
                self._prune()

    def add_lines(self, lines, message: Callable[[int], str], summary: str | None = None) -> None:
        """Record one problem per entry of ``lines``; ``message(i)`` formats entry ``i``.

        Only the entries that are among the first ``keep`` so far are formatted.
        """
        lines = np.asarray(lines, dtype=np.int64)
        if not lines.size:
            return
        self.total += int(lines.size)
        self._count(summary, int(lines.size))
        order = self._order
        self._order += 1
        # A batch's key (line, 1, order) sorts after every kept key of the same line,
        # so only lines below the worst kept one can still be shown.
        if self._worst is None:
            candidates = np.arange(lines.size)
        else:
            candidates = np.flatnonzero(lines < self._worst[0])
        if not candidates.size:
            return
        if candidates.size > self.keep:
            candidates = candidates[np.argsort(lines[candidates], kind="stable")[: self.keep]]
        merged = self._kept + [((int(lines[i]), 1, order), int(i)) for i in candidates]
        if len(merged) >= self.keep:
            merged.sort(key=lambda item: item[0])
            del merged[self.keep :]
            self._worst = merged[-1][0]
        self._kept = [(key, message(msg) if isinstance(msg, int) else msg) for key, msg in merged]

    def add_range(
        self, start: int, stop: int, message: Callable[[int], str], summary: str | None = None
    ) -> None:
        """One problem on each line from ``start`` to ``stop`` (exclusive), in O(keep):
        only the first ``keep`` lines can ever be shown."""
        if stop <= start:
            return
        shown = min(stop - start, self.keep)
        self.add_lines(np.arange(start, start + shown), message, summary)
        self.total += (stop - start) - shown
        self._count(summary, (stop - start) - shown)

    def _prune(self) -> None:
        self._kept.sort(key=lambda item: item[0])
        del self._kept[self.keep :]
        if len(self._kept) == self.keep:
            self._worst = self._kept[-1][0]

    @property
    def hopeless(self) -> bool:
        """Enough problems counted: a reader should stop reading (see :meth:`stop`)."""
        return self.total >= self.give_up

    def stop(self) -> None:
        """Record that reading stopped before the end: ``total`` is now a lower bound."""
        self.exact = False

    def __bool__(self) -> bool:
        return self.total > 0

    def shown(self, limit: int = MAX_REPORTED) -> list[Problem]:
        self._kept.sort(key=lambda item: item[0])
        return [Problem(self.path, key[0], msg) for key, msg in self._kept[: min(limit, self.keep)]]

    def error(self) -> ScoringError:
        return ScoringError(self.shown(), self.total, exact=self.exact, summaries=self.summaries())

    def raise_if_any(self) -> None:
        if self:
            raise self.error()
