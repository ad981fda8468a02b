"""Validating readers for target, input and prediction files (spec §1).

Each reader goes through the whole file once, block by block, collects every
problem as ``PATH:LINE: message`` and raises :class:`~scoring.errors.ScoringError`
at the end if there was any. Nothing is returned for a file with problems.

Every reader checks the bound of spec §1 on each block first
(:func:`scoring.rows.check_range`), before any target is used.
"""

from __future__ import annotations

import numpy as np

from . import _accel, hints
from .column import read_column
from .distributions import Stats, gaussian_stats, quantile_stats_from_diffs, sample_stats
from .errors import Problems, fmt
from .options import MAX_LINE_NUMBERS, MAX_QUANTILES, MAX_SAMPLES, ScoringOptions
from .quantile_gap import exact_gap_below, gap_hint
from .regression_rows import GAUSSIAN, QUANTILES, SAMPLE, Arena, Group, RegressionRows
from .rows import MAX_VALUE, RowReader, Rows, check_range
from .taskspec import get_task

ROW_KINDS = {QUANTILES: "quantiles", GAUSSIAN: "Gaussian", SAMPLE: "sample"}


def _single_numbers(rows: Rows, problems: Problems, what: str) -> tuple[np.ndarray, np.ndarray]:
    """Rows that must hold exactly one number: returns (good mask, values)."""
    if rows.one_number_each:
        return np.ones(rows.counts.size, dtype=bool), rows.values
    ok = ~rows.bad
    wrong = ok & (rows.counts != 1)
    counts = rows.counts[wrong]
    problems.add_lines(
        rows.lines[wrong],
        lambda i: f"expected 1 number ({what}), found {counts[i]}",
        hints.ONE_NUMBER,
    )
    ok &= ~wrong
    values = np.full(rows.counts.size, np.nan)
    values[ok] = rows.values[rows.offsets[ok]]
    return ok, values


def read_targets(
    source, *, path: str, task: str | None = None, options: ScoringOptions | None = None
) -> np.ndarray:
    """Target file: one number per line, and what ``task`` asks of it besides (±1 for
    classification); no task, any numbers. Returns a 1-D array."""
    spec = None if task is None else get_task(task)
    options = options or ScoringOptions()
    values = read_column(source, low=-MAX_VALUE, high=MAX_VALUE)
    if values is not None and (spec is None or spec.target_error(values, options) is None):
        return values  # a valid file, read in one pass; else the careful reader's messages
    reader = RowReader(source, path)
    parts = []
    for rows in reader.rows():
        rows = check_range(rows, reader.problems)
        ok, values = _single_numbers(rows, reader.problems, "the target")
        if spec is not None:
            spec.check_target_lines(rows.lines, ok, values, reader.problems, options)
        parts.append(values)
    reader.problems.raise_if_any()
    return np.concatenate(parts)


def is_labels(t: np.ndarray) -> bool:
    """Every target +1 or −1."""
    t = np.ascontiguousarray(t, dtype=np.float64)
    native = _accel.native()
    if native is not None:
        return native.all_labels(t)  # one pass, no temporary arrays
    return bool((np.abs(t) == 1).all())


def read_probabilities(source, n_expected: int) -> np.ndarray | None:
    """A valid classification file of ``n_expected`` rows read in one pass, or None when
    it needs :func:`read_classification` (its messages)."""
    p = read_column(source, low=0.0, high=1.0, capacity=n_expected)
    return p if p is not None and p.size == n_expected else None


def read_inputs(source, *, path: str) -> np.ndarray:
    """Input file: a matrix, the same count of numbers on every line. Returns (rows, dim)."""
    reader = RowReader(source, path)
    parts, width = [], None
    for rows in reader.rows():
        rows = check_range(rows, reader.problems)
        good = ~rows.bad
        if width is None and good.any():
            width = int(rows.counts[good][0])
            first = int(rows.lines[good][0])
        if width is None:
            continue
        wrong = good & (rows.counts != width)
        counts = rows.counts[wrong]
        reader.problems.add_lines(
            rows.lines[wrong],
            lambda i, first=first, width=width, counts=counts: (
                f"expected {width} numbers (as on line {first}), found {counts[i]}"
            ),
            hints.INPUT_WIDTH,
        )
        if not reader.problems:
            parts.append(rows.values)
    reader.problems.raise_if_any()
    return np.concatenate(parts).reshape(-1, width)


def read_classification(
    source, *, path: str, n_expected: int | None = None, reader: RowReader | None = None
) -> np.ndarray:
    """Classification predictions: p(y = +1 | x) in [0, 1], one per line."""
    if reader is None and n_expected is not None:
        p = read_probabilities(source, n_expected)
        if p is not None:
            return p
    reader = reader or RowReader(source, path, max_numbers=MAX_LINE_NUMBERS)
    parts = []
    span = hints.ValueSpan()  # percentages? labels? (hints.hint_probabilities)
    for rows in reader.rows(n_expected):
        v = rows.values
        if rows.one_number_each and v.size and v.min() >= 0 and v.max() <= 1:
            span.add(v)
            parts.append(v)  # one probability on every line: nothing to report
            continue
        rows = check_range(rows, reader.problems)
        ok, values = _single_numbers(rows, reader.problems, "p(y = +1)")
        span.add(values[ok])
        wrong = ok & ((values < 0) | (values > 1))
        found = values[wrong]
        reader.problems.add_lines(
            rows.lines[wrong],
            lambda i, found=found: f"expected a probability between 0 and 1, found {fmt(found[i])}",
            hints.PROBABILITY,
        )
        parts.append(values)
    if n_expected is not None:
        reader.check_count(n_expected, "target")
    hints.hint_probabilities(reader.problems, span)
    reader.problems.raise_if_any()
    return np.concatenate(parts)


def read_regression(
    source, *, path: str, targets: np.ndarray, options: ScoringOptions | None = None
) -> RegressionRows:
    """Regression predictions of the three row types, validated and reduced to statistics."""
    options = options or ScoringOptions()
    targets = np.asarray(targets, dtype=np.float64)
    n = targets.size
    kind = mean = mean_lo = mean_err = variance = None  # allocated with the first valid rows
    stats = []  # the other statistics, per group
    groups = []  # the rows themselves (regression_rows.Group)
    reader = RowReader(source, path, max_numbers=MAX_LINE_NUMBERS)
    check = _RegressionChecks(reader.problems, options, Arena(n))
    for rows in reader.rows(n):
        # (Only while the file has no problem: a file with problems gets no scores.)
        for group, group_stats in check.block(rows, targets):
            if kind is None:
                kind, variance = np.full(n, -1, dtype=np.int8), np.full(n, np.nan)
                mean, mean_lo, mean_err = np.full(n, np.nan), np.zeros(n), np.zeros(n)
            idx = group.index
            kind[idx] = group.kind
            if group.kind == GAUSSIAN:
                variance[idx] = group.second
            mean[idx] = group_stats.mean
            if group_stats.mean_lo is not None:
                mean_lo[idx] = group_stats.mean_lo
                mean_err[idx] = group_stats.mean_err
            groups.append(group)
            stats.append(group_stats)
    reader.check_count(n, "target")
    hints.hint_levels(reader.problems, check.levels)
    reader.problems.raise_if_any()
    if kind is None:
        return _empty_rows(n)
    other = []
    for name in ("logpdf", "crps", "pit"):
        values = np.full(n, np.nan)
        for group, group_stats in zip(groups, stats, strict=True):
            values[group.index] = getattr(group_stats, name)
        other.append(values)
    pit_low = None  # the PIT intervals' lower ends, when some row is discrete (a point, a sample)
    if any(group_stats.pit_low is not None for group_stats in stats):
        pit_low = other[2].copy()
        for group, group_stats in zip(groups, stats, strict=True):
            if group_stats.pit_low is not None:
                pit_low[group.index] = group_stats.pit_low
    return RegressionRows(
        kind,
        variance,
        Stats(other[0], mean, other[1], other[2], pit_low=pit_low),
        groups,
        mean_lo,
        mean_err,
    )


def check_regression(
    source,
    *,
    path: str,
    options: ScoringOptions | None = None,
    n_expected: int | None = None,
    reader: RowReader | None = None,
) -> None:
    """Validate regression predictions on their own, with no targets: every check of
    :func:`read_regression`, the same messages, the row count only if ``n_expected`` is
    given (spec §1 checks no line against a target)."""
    reader = reader or RowReader(source, path, max_numbers=MAX_LINE_NUMBERS)
    check = _RegressionChecks(reader.problems, options or ScoringOptions())
    no_targets = np.empty(0)
    for rows in reader.rows(n_expected):
        for _ in check.block(rows, no_targets):  # (nothing to score: no row has a target)
            pass
    if n_expected is not None:
        reader.check_count(n_expected, "target")
    hints.hint_levels(reader.problems, check.levels)
    reader.problems.raise_if_any()


def _empty_rows(n: int) -> RegressionRows:
    """No valid row (an empty file of an empty split)."""
    stats = Stats(*(np.full(n, np.nan) for _ in range(4)))
    return RegressionRows(np.full(n, -1, dtype=np.int8), np.full(n, np.nan), stats, [])


class _RegressionChecks:
    def __init__(self, problems: Problems, options: ScoringOptions, arena: Arena | None = None):
        self.problems = problems
        self.options = options
        self.arena = arena  # where the kept rows go (read_regression); None: nothing kept
        self.levels = hints.ValueSpan()  # quantile levels in percent? (hints.hint_levels)

    def block(self, rows: Rows, targets: np.ndarray):
        """Yield (:class:`~scoring.regression_rows.Group`, Stats) for each valid group.

        Every check runs; groups are scored only while the file has no problem.
        """
        p = self.problems
        good = ~rows.bad & (rows.counts > 0)
        flag = np.full(rows.counts.size, np.nan)
        flag[good] = rows.values[rows.offsets[good]]
        rows = check_range(rows, p, gaussian=(flag == 1) & (rows.counts == 3))
        good = ~rows.bad
        lines, counts, offsets, values = rows.lines, rows.counts, rows.offsets, rows.values
        flag[rows.bad] = np.nan
        bad_flag = good & (flag != 0) & (flag != 1) & (flag != 2)
        found = flag[bad_flag]
        p.add_lines(
            lines[bad_flag],
            lambda i: (
                "expected a row type flag of 0 (quantiles), 1 (Gaussian) or "
                f"2 (sample) first, found {fmt(found[i])}"
            ),
            hints.FLAG,
        )
        in_range = rows.index < targets.size

        gauss = good & (flag == 1)
        wrong = gauss & (counts != 3)
        c = counts[wrong]
        p.add_lines(
            lines[wrong],
            lambda i: f"a Gaussian row '1 m v' has 3 numbers, found {c[i]}",
            hints.GAUSSIAN_COUNT,
        )
        gauss &= ~wrong
        var = np.zeros(counts.size)
        var[gauss] = values[offsets[gauss] + 2]
        negative = gauss & (var < 0)
        v = var[negative]
        p.add_lines(
            lines[negative],
            lambda i: f"expected a variance of at least 0, found {fmt(v[i])}",
            hints.NEGATIVE_VARIANCE,
        )
        gauss &= ~negative
        sel = gauss & in_range
        if sel.any() and not p:
            idx = rows.index[sel]
            m = values[offsets[sel] + 1]
            v = var[sel]
            yield Group(GAUSSIAN, idx, m, v), gaussian_stats(m, v, targets[idx])

        yield from self._samples(rows, good & (flag == 2), in_range, targets)
        yield from self._quantiles(rows, good & (flag == 0), in_range, targets)

    def _samples(self, rows: Rows, mask, in_range, targets):
        p, lines = self.problems, rows.lines
        k = rows.counts - 1
        wrong = mask & ((k < 1) | (k > MAX_SAMPLES))
        kk = k[wrong]
        p.add_lines(
            lines[wrong],
            lambda i: (
                f"a sample row '2 s1 ... sK' has 1 to {MAX_SAMPLES} values after the flag, "
                f"found {kk[i]}"
            ),
            hints.SAMPLE_COUNT,
        )
        mask = mask & ~wrong
        if not self.options.allow_samples:
            p.add_lines(
                lines[mask],
                lambda i: (
                    "sample rows ('2 s1 ... sK') are not allowed for this dataset; "
                    "use a Gaussian ('1 m v') or quantile ('0 a1 q1 ... aN qN') row"
                ),
                hints.SAMPLES_FORBIDDEN,
            )
            return
        if p:
            return
        for size in _distinct(k[mask & in_range]):
            sel = mask & in_range & (k == size)
            idx = rows.index[sel]
            cols = rows.offsets[sel][:, None] + 1 + np.arange(size)
            if self.arena is None:
                s = np.sort(rows.values[cols], axis=1)
            else:
                s = self.arena.take("s", int(size), idx.size, rows.counts.size)
                np.take(rows.values, cols, out=s)
                s.sort(axis=1)
            yield Group(SAMPLE, idx, s, None), sample_stats(s, targets[idx], presorted=True)

    def _quantiles(self, rows: Rows, mask, in_range, targets):
        p, lines = self.problems, rows.lines
        after = rows.counts - 1
        odd = mask & (after % 2 == 1)
        na = after[odd]
        p.add_lines(
            lines[odd],
            lambda i: (
                "a quantile row '0 a1 q1 ... aN qN' has pairs of numbers after the flag, "
                f"found {na[i]} numbers"
            ),
            hints.QUANTILE_PAIRS,
        )
        pairs = after // 2
        few = mask & ~odd & ((pairs < 2) | (pairs > MAX_QUANTILES))
        npairs = pairs[few]
        p.add_lines(
            lines[few],
            lambda i: f"a quantile row has 2 to {MAX_QUANTILES} pairs (a q), found {npairs[i]}",
            hints.QUANTILE_COUNT,
        )
        mask = mask & ~odd & ~few
        for size in _distinct(pairs[mask]):
            sel = mask & (pairs == size)
            a, q = _pairs(rows, sel, size, self.arena)
            da, dq = np.diff(a, axis=1), np.diff(q, axis=1)
            ok = self._check_quantiles(a, q, da, dq, lines[sel])
            keep = ok & in_range[sel]
            if p:
                continue
            if keep.all():
                idx = rows.index[sel]
                stats = quantile_stats_from_diffs(a, q, da, dq, targets[idx])
                yield Group(QUANTILES, idx, a, q), stats
            elif keep.any():
                idx = rows.index[sel][keep]
                a, q = a[keep], q[keep]
                stats = quantile_stats_from_diffs(a, q, da[keep], dq[keep], targets[idx])
                yield Group(QUANTILES, idx, a, q), stats

    def _check_quantiles(self, a, q, da, dq, lines) -> np.ndarray:
        p = self.problems
        ok = np.ones(a.shape[0], dtype=bool)
        self.levels.add(a)

        def first_violation(bad, message, summary):
            rows_bad = bad.any(axis=1)
            if not rows_bad.any():
                return
            which = np.flatnonzero(rows_bad)
            col = bad[which].argmax(axis=1)
            p.add_lines(lines[which], lambda i: message(which[i], col[i]), summary)
            ok[which] = False

        # Levels increase strictly, so only the first and last can leave (0, 1).
        ends = np.stack([a[:, 0] <= 0, a[:, -1] >= 1], axis=1)
        first_violation(
            ends,
            lambda r, k: (
                "quantile levels must lie strictly between 0 and 1, found "
                f"{fmt(a[r, 0] if k == 0 else a[r, -1])} (pair {1 if k == 0 else a.shape[1]})"
            ),
            hints.LEVELS,
        )
        first_violation(
            da <= 0,
            lambda r, k: (
                f"quantile levels must increase strictly ({fmt(a[r, k + 1])} after {fmt(a[r, k])})"
            ),
            hints.LEVEL_ORDER,
        )
        first_violation(
            dq <= 0,
            lambda r, k: (
                f"quantile values must increase strictly ({fmt(q[r, k + 1])} after {fmt(q[r, k])})"
            ),
            hints.VALUE_ORDER,
        )
        gap = self.options.min_quantile_gap
        if gap > 0:
            first_violation(
                (dq > 0) & exact_gap_below(q, dq, gap),
                lambda r, k: (
                    f"quantile values must be at least {fmt(gap)} apart, found "
                    f"{fmt(q[r, k])} then {fmt(q[r, k + 1])}{gap_hint(q[r, k], q[r, k + 1], gap)}"
                ),
                hints.GAP,
            )
        return ok


def _distinct(sizes: np.ndarray) -> list[int]:
    """The distinct row sizes, ascending (small non-negative integers: a bincount, not
    np.unique, whose first call imports numpy.ma, 40 ms)."""
    return np.flatnonzero(np.bincount(sizes)).tolist() if sizes.size else []


def _pairs(
    rows: Rows, sel: np.ndarray, size: int, arena: Arena | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Levels and values (rows × size) of the selected quantile rows, as contiguous arrays
    (in ``arena`` when the rows are kept)."""
    width = 2 * size + 1
    if sel.all() and rows.values.size == rows.counts.size * width:
        block = rows.values.reshape(-1, width)  # every line alike: no gather needed
        a_part, q_part = block[:, 1::2], block[:, 2::2]
    else:
        cols = rows.offsets[sel][:, None] + 1 + np.arange(2 * size)
        block = rows.values[cols]
        a_part, q_part = block[:, 0::2], block[:, 1::2]
    if arena is None:
        return np.ascontiguousarray(a_part), np.ascontiguousarray(q_part)
    m, total = a_part.shape[0], rows.counts.size
    a, q = arena.take("a", size, m, total), arena.take("q", size, m, total)
    np.copyto(a, a_part)
    np.copyto(q, q_part)
    return a, q
