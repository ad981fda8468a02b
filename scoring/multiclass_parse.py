"""The validating reader of multiclass prediction files (spec §1, §7).

Each line holds the L class probabilities of one example, or an ensemble's M·L
(2 ≤ M ≤ 100) when the dataset allows ensembles, one member after the other. Every
probability lies in [0, 1]; each member (or the single row) sums to 1 within 0.01 and
is divided by its own sum; an ensemble row's prediction is its members' mean.

Like scoring.parse's readers, it reads the file once, block by block, collecting every
problem as ``PATH:LINE: message`` (spec §1's bound first) with summaries and whole-file
hints (scoring.hints); a file with problems returns nothing. A block of one line count
(the C parser's usual block) is checked as one (rows, M, L) array and written, divided
by its sums and averaged, straight into the one n × L array of the result: each p the
exact value rounded once, and beside it the side of p the exact value lies on, on which
spec §7's decisions are taken (scoring.multiclass_rows.normalise).
"""

from __future__ import annotations

import os
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from . import _accel, hints
from .errors import Problems, fmt
from .multiclass import entropy_of_checked
from .multiclass_ace import THREADED_SIZE
from .multiclass_blocks import SummaryBlocks
from .multiclass_rows import ClassRows, normalise
from .multiclass_sums import SUM_MARGIN, SUM_TOLERANCE, member_sums, sum_message, sums_off
from .options import MAX_CLASSES, MAX_MEMBERS, ScoringOptions
from .rows import RowReader, Rows, check_range


def max_numbers(classes: int | None) -> int:
    """The most numbers a line may hold before it is rejected unread: the largest
    ensemble row even when ensembles are not accepted (so that a row of 2L numbers gets
    its own message), of the largest L while L is not known."""
    return MAX_MEMBERS * (classes or MAX_CLASSES)


def first_count(source, path: str) -> int | None:
    """The count of numbers on the first readable non-blank line (L when the dataset's
    class count is not given, spec §7), or None when there is no such line."""
    reader = RowReader(source, path, max_numbers=max_numbers(None))
    for rows in reader.rows():
        readable = np.flatnonzero(~rows.bad & (rows.counts > 0))
        if readable.size:
            return int(rows.counts[readable[0]])
    return None


def read_multiclass(
    source,
    *,
    path: str,
    n_expected: int,
    options: ScoringOptions,
    reader: RowReader | None = None,
    labels: np.ndarray | None = None,
) -> ClassRows:
    """The validated predictions of a file of ``n_expected`` rows, or ScoringError listing
    every problem. ``options.classes`` None: L is the count on the first line. ``labels``
    (the n targets, checked): the summary for them is summed as the blocks are read
    (scoring.multiclass_blocks) and kept with the rows."""
    checks = _read(
        source, path=path, n=n_expected, options=options, reader=reader, keep=True, labels=labels
    )
    summary = None
    if checks.summary is not None and not checks.exact:  # (exact rows: decided apart)
        summary = checks.summary.finish()
    _accel.release_memory()  # (the blocks read, freed on two threads)
    members, member_entropy = checks.members, checks.member_entropy
    if members is None:  # (no ensemble row: every row one member, no member entropy)
        n = checks.probs.shape[0]
        members = np.broadcast_to(np.int32(1), (n,))
        member_entropy = np.broadcast_to(np.float64(np.nan), (n,))
    return ClassRows(
        checks.probs,
        members,
        member_entropy,
        resid=checks.resid,
        exact=checks.exact,
        summary=summary,
    )


def check_multiclass(
    source, *, path: str, options: ScoringOptions, n_expected=None, reader: RowReader | None = None
) -> None:
    """Every check of :func:`read_multiclass` with no target (the upload check); the row
    count only if ``n_expected`` is given. Raises ScoringError."""
    _read(source, path=path, n=n_expected, options=options, reader=reader, keep=False)


def _read(source, *, path, n, options, reader, keep, labels=None) -> _Checks:
    problems = reader.problems if reader is not None else Problems(path)
    classes = options.classes
    reader = RowReader(source, path, problems=problems, max_numbers=max_numbers(classes))
    checks = _Checks(problems, classes, options.allow_ensembles, n if keep else None, labels)
    try:
        for rows in reader.rows(n):
            checks.block(rows)
    finally:
        checks.close()
    if n is not None:
        reader.check_count(n, "target")
    checks.finish()
    problems.raise_if_any()
    return checks


def _touch(*arrays: np.ndarray) -> None:
    """Make the pages of each array (C order rows, about to be written by the second
    thread, which is not writing them yet) resident: the kernel's first-touch work (a fault,
    zeroing the page) is then done by the calling thread, otherwise idle, rather than by
    the one that writes the rows. In one call per array where the system can
    (scoring._accel.populate), else by writing a zero into every 4 KiB page."""
    for array in arrays:
        if not _accel.populate(array):
            flat = array.reshape(-1)
            flat[:: max(1, 4096 // array.itemsize)] = 0


class _Checks:
    """The checks of one file, block by block; the result while it has no problem."""

    def __init__(
        self,
        problems: Problems,
        classes: int | None,
        allow: bool,
        n: int | None,
        labels: np.ndarray | None = None,
    ):
        self.problems = problems
        self.labels = labels  # the targets, when the summary is summed block by block
        self.summary: SummaryBlocks | None = None
        self.classes = classes  # None until the first line says (then 0 if it cannot)
        self.allow = allow
        self.n = n  # rows kept (None: checked only)
        self.span = hints.ClassSpan()
        self.probs = self.members = self.member_entropy = self.resid = self.exact = None
        self.count_summary = ""
        self.first_line = 0  # the line that gave L, when it was not given
        # A large file's blocks are normalised on a second thread while the next block
        # is parsed (the C kernel releases the GIL): one block in flight at most.
        self._pool: ThreadPoolExecutor | None = None
        self._pending: Future | None = None
        self._serial = False  # (no thread could start: the blocks are normalised here)

    # --- the result -------------------------------------------------------------------

    def _allocate(self) -> None:
        n = self.n  # (pages of np.empty that no row reaches are never touched)
        self.probs = np.empty((n, self.classes))
        self.resid = np.zeros((n, self.classes), dtype=np.float32)
        self.exact = {}
        # (members and member_entropy: made at the first ensemble row, :meth:`_ensemble`)
        if self.labels is not None and self.labels.size == n:
            self.summary = SummaryBlocks(self.labels, self.classes)

    def _write(self, start: int, v: np.ndarray, sums: np.ndarray, index=None) -> None:
        """Rows ``v`` (rows × M × L, checked) divided by their members' sums and averaged,
        at examples ``index`` (None: ``start`` on, one after the other)."""
        if self.n is None or self.problems:
            return
        if self.probs is None:
            self._allocate()
        rows = v.shape[0]
        if index is None:
            stop = max(min(start + rows, self.n), start)
            where, v, sums = slice(start, stop), v[: stop - start], sums[: stop - start]
        elif index.size and index[-1] >= self.n:  # (rows past the wanted count: an error)
            keep = index < self.n
            where, v, sums = index[keep], v[keep], sums[keep]
        else:
            where = index
        if isinstance(where, slice):  # straight into the result: no temporary
            self._normalise(v, sums, where)
            return
        self.drain()
        if self.summary is not None:  # (rows out of order: summed from the whole file)
            self.summary.abandon()
        probs = np.empty((v.shape[0], self.classes))
        resid = np.empty((v.shape[0], self.classes), dtype=np.float32)
        exact = normalise(v, probs, resid)
        self.probs[where], self.resid[where] = probs, resid
        for i, values in exact.items():
            self.exact[int(where[i])] = values
        self._ensemble(v, sums, where)

    def _ensemble(self, v: np.ndarray, sums: np.ndarray, where) -> None:
        if v.shape[1] > 1:
            if self.members is None:  # (the first ensemble row; one thread writes rows)
                self.members = np.ones(self.n, dtype=np.int32)
                self.member_entropy = np.full(self.n, np.nan)
            self.members[where] = v.shape[1]
            self.member_entropy[where] = entropy_of_checked(v / sums[:, :, None]).mean(axis=1)

    def _normalise(self, v: np.ndarray, sums: np.ndarray, where: slice) -> None:
        """normalise ``v`` into rows ``where`` of the result (and its members' entropy),
        on the second thread when the file is large (the same operations, so the same
        values)."""
        large = self.n * self.classes >= THREADED_SIZE
        if self._pending is not None:
            # While this thread would wait for the second one, it takes the first touch of
            # the pages that thread is to write next (this block's rows and their sums).
            _touch(self.probs[where], self.resid[where])
            if self.summary is not None:
                _touch(*self.summary.rows_of(where))
        self.drain()
        if self._pool is None and large and not self._serial and _cpus() > 1:
            self._pool = ThreadPoolExecutor(1)
        if self._pool is not None:
            try:
                self._pending = self._pool.submit(self._normalised, v, sums, where)
                return
            except RuntimeError:  # ("can't start new thread", near a worker's limits)
                self._pool.shutdown()
                self._pool, self._serial = None, True
        self._merge(*self._normalised(v, sums, where))

    def _normalised(self, v: np.ndarray, sums: np.ndarray, where: slice) -> tuple[dict, slice]:
        exact = normalise(v, self.probs[where], self.resid[where])
        self._ensemble(v, sums, where)
        if self.summary is not None:
            self.summary.add(where.start, self.probs[where], self.resid[where])
        return exact, where

    def _merge(self, exact: dict, where: slice) -> None:
        for i, values in exact.items():
            self.exact[where.start + i] = values

    def drain(self) -> None:
        """Waits for the block in flight, if any (its error, if any, raised here)."""
        pending, self._pending = self._pending, None
        if pending is not None:
            self._merge(*pending.result())

    def close(self) -> None:
        """Waits for the block in flight and stops the second thread."""
        try:
            self.drain()
        finally:
            if self._pool is not None:
                self._pool.shutdown()
            self._pool = None

    # --- one block --------------------------------------------------------------------

    def block(self, rows: Rows) -> None:
        if not rows.counts.size:
            return
        if self.classes is None:
            self._first_line(rows)
        if not self.classes:
            self._unknown_classes(rows)
        elif not self._valid_block(rows):
            self._careful(rows)

    def _first_line(self, rows: Rows) -> None:
        readable = np.flatnonzero(~rows.bad & (rows.counts > 0))
        if not readable.size:
            return
        count = int(rows.counts[readable[0]])
        if 2 <= count <= MAX_CLASSES:
            self.classes = count
            self.first_line = int(rows.lines[readable[0]])
            return
        self.classes = 0
        self.count_summary = hints.class_summary(hints.CLASS_COUNT_SINGLE, None)
        ensemble = " (an ensemble row? then give the number of classes)" if count > 1 else ""
        self.problems.add(
            int(rows.lines[readable[0]]),
            f"expected the probabilities of 2 to {MAX_CLASSES} classes on the first line, "
            f"found {count} number{'s' if count != 1 else ''}{ensemble}: the number of classes "
            "is not given, so the first line gives it",
            self.count_summary,
        )

    def _unknown_classes(self, rows: Rows) -> None:
        """No class count: only spec §1's bound is checked, and the class-label hint."""
        rows = check_range(rows, self.problems)
        good = ~rows.bad & (rows.counts > 0)
        self.span.add_counts(rows.counts[good])
        one = good & (rows.counts == 1)
        self.span.add_singles(rows.values[rows.offsets[one]])

    def _members(self, count: int) -> int:
        """M for a line of ``count`` numbers (1: a single row), 0 if no row has that count."""
        classes = self.classes
        if count == classes:
            return 1
        members = count // classes
        if self.allow and count % classes == 0 and 2 <= members <= MAX_MEMBERS:
            return members
        return 0

    def _valid_block(self, rows: Rows) -> bool:
        """A block of one count, every value in [0, 1] and every sum within the tolerance
        (the usual case): checked as one array and written. False: it needs the careful
        path (which reports its problems)."""
        uniform = rows.table.uniform
        counts, values = rows.counts, rows.values
        if uniform is None:
            count = int(counts[0])
            if rows.bad.any() or values.size != counts.size * count or (counts != count).any():
                return False
        else:
            count = uniform
        members = self._members(count)
        if not members:
            return False
        v = values.reshape(counts.size, members, self.classes)
        if not _in_unit_interval(v):  # (and so within spec §1's bound, ±1e100)
            return False
        sums = member_sums(v)
        within = 1 - SUM_TOLERANCE + SUM_MARGIN, 1 + SUM_TOLERANCE - SUM_MARGIN
        if sums.min() < within[0] or sums.max() > within[1]:
            return False
        self.span.add_counts(counts, count, count)
        self.span.add_values(0.0, 1.0)
        self._write(rows.first_index, v, sums)
        return True

    def _careful(self, rows: Rows) -> None:
        p, classes = self.problems, self.classes
        rows = check_range(rows, p)
        counts, good = rows.counts, ~rows.bad & (rows.counts > 0)
        self.span.add_counts(counts[good])
        one = good & (counts == 1)
        self.span.add_singles(rows.values[rows.offsets[one]])
        members = np.zeros(counts.size, dtype=np.int64)
        for count in _distinct(counts[good]):
            members[good & (counts == count)] = self._members(count)
        self._wrong_counts(rows, good & (members == 0))
        for m in _distinct(members[good & (members > 0)]):
            sel = good & (members == m)
            cols = rows.offsets[sel][:, None] + np.arange(m * classes)
            v = rows.values[cols].reshape(-1, m, classes)
            self._check_rows(v, rows.lines[sel], rows.index[sel])

    def _wrong_counts(self, rows: Rows, wrong: np.ndarray) -> None:
        if not wrong.any():
            return
        classes, found = self.classes, rows.counts[wrong]
        multiple = (found % classes == 0) & (found // classes >= 2)
        multiple &= found // classes <= MAX_MEMBERS
        if not self.allow:
            self.count_summary = hints.class_summary(hints.CLASS_COUNT_SINGLE, classes)
            forbidden = hints.class_summary(hints.ENSEMBLES_FORBIDDEN, classes)
            self.problems.add_lines(
                rows.lines[wrong][multiple],
                lambda i, k=found[multiple]: (
                    f"expected {classes} probabilities (one per class), found {k[i]}: is this "
                    f"a {k[i] // classes}-member ensemble? this dataset does not accept ensembles"
                ),
                forbidden,
            )
            self.problems.add_lines(
                rows.lines[wrong][~multiple],
                lambda i, k=found[~multiple]: (
                    f"expected {classes} probabilities (one per class), found {k[i]}"
                ),
                self.count_summary,
            )
            return
        self.count_summary = hints.class_summary(hints.CLASS_COUNT, classes)
        self.problems.add_lines(
            rows.lines[wrong],
            lambda i: (
                f"expected {classes} probabilities (one per class), or M·{classes} for an "
                f"ensemble of M members (2 ≤ M ≤ {MAX_MEMBERS}), found {found[i]}"
            ),
            self.count_summary,
        )

    def _check_rows(self, v: np.ndarray, lines: np.ndarray, index: np.ndarray) -> None:
        """Rows of one count (rows × M × L, within spec §1's bound): probabilities in
        [0, 1], then each member's sum; written while the file has no problem."""
        p, m = self.problems, v.shape[1]
        low, high = float(v.min()), float(v.max())
        sums = member_sums(v)
        self.span.add_values(low, high, sums if high > 1 else None)
        outside = ((v < 0) | (v > 1)).reshape(v.shape[0], -1)
        bad = outside.any(axis=1)
        if bad.any():
            which = np.flatnonzero(bad)
            first = outside[which].argmax(axis=1)
            flat = v.reshape(v.shape[0], -1)
            p.add_lines(
                lines[which],
                lambda i: (
                    "expected probabilities between 0 and 1, found "
                    f"{fmt(flat[which[i], first[i]])} ({_place(first[i], m, v.shape[2])})"
                ),
                hints.CLASS_PROBABILITY,
            )
        off = sums_off(v, sums) & ~bad[:, None]
        wrong = off.any(axis=1)
        if wrong.any():
            which = np.flatnonzero(wrong)
            member = off[which].argmax(axis=1)
            p.add_lines(
                lines[which],
                lambda i: (
                    sum_message(sums[which[i], member[i]], member[i], m)
                    + self._ensemble_guess(lines[which[i]], sums[which[i], member[i]])
                ),
                hints.CLASS_SUM,
            )
        if not p:
            self._write(0, v, sums, index)

    def _ensemble_guess(self, line: int, total: float) -> str:
        """When L was taken from this line and its sum is a whole number k ≥ 2 dividing
        L: an ensemble of k members, most likely."""
        k = round(total)
        if line != self.first_line or k < 2 or self.classes % k or abs(total - k) > 0.01 * k:
            return ""
        return (
            f"; is this line an ensemble of {k} members of {self.classes // k} classes? then "
            f"give the number of classes (without it, this line's count, {self.classes}, is "
            "taken for it)"
        )

    def finish(self) -> None:
        p = self.problems
        hints.hint_multiclass(p, self.span, self.classes or None, self.count_summary)
        if not p and self.n is not None and self.probs is None:
            self._allocate()  # (no row: check_count or the empty file said so)


def _cpus() -> int:
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return usable or 1


# Read as unsigned integers, non-negative doubles order as their values, and negative
# ones (the sign bit set) exceed them all.
_ONE_BITS = np.float64(1.0).view(np.uint64)


def _in_unit_interval(v: np.ndarray) -> bool:
    """Every value in [0, 1], in one pass (not a min and a max); -0.0 fails (the careful
    path takes it: it is a valid 0)."""
    if v.flags.c_contiguous:
        return bool(v.view(np.uint64).max() <= _ONE_BITS)
    return bool(v.min() >= 0 and v.max() <= 1)


def _place(flat_index: int, members: int, classes: int) -> str:
    member, k = divmod(int(flat_index), classes)
    return f"class {k}" if members == 1 else f"member {member + 1}, class {k}"


def _distinct(values: np.ndarray) -> list[int]:
    """The distinct small non-negative integers of ``values``, ascending."""
    return np.flatnonzero(np.bincount(values)).tolist() if values.size else []
