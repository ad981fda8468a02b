"""The adaptive calibration error's ranges (spec §7 ``ace``; Nixon et al., "Measuring
Calibration in Deep Learning", CVPR Workshops 2019), without a per-class argsort.

For class k the examples are ordered by p_ik, stably (by line on ties), and the order is
cut into R = min(n, 15) ranges as ``np.array_split`` cuts it. A stable argsort per class
would cost about 0.1 s per million examples; what the loss needs is less: the sum of p_k
over each range, which ties cannot change (equal values are equal), so it comes from the
column sorted by value; and the number of class-k examples in each range, which follows
from the values at the cuts for every example except those holding a value that runs
across a cut. Only there does line order decide, and only the examples holding that value
are looked at. The tests check the result against the stable argsort, ties included.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction
from typing import TypeVar

import numpy as np

from . import _accel
from .classification import ECE_BINS

# Work on this many probabilities or more is spread over up to MAX_THREADS threads (the
# bandwidth of memory, not the processors, bounds what more threads would give).
THREADED_SIZE = 1 << 20
MAX_THREADS = 2
# Up to this many classes (rows of up to 256 bytes), a thread's classes are read straight
# from the rows, all in each sweep (``ace_columns``): copying each column out first read
# every row's cache lines once per class, which cost as much as the kernel at a million
# rows of 10 classes. Wider rows are read faster column by column: a sweep of a few values
# of each wide row waits on memory at every row, so their columns are copied out in groups.
ROW_SWEEP_CLASSES = 32
GROUP_VALUES = 1 << 20  # columns copied out at once by one thread, in values
T = TypeVar("T")


def ace_ranges(n: int, *, n_ranges: int = ECE_BINS) -> np.ndarray:
    """The R + 1 bounds of the ranges of a sorted order of n ≥ 1 examples, R = min(n,
    n_ranges): sizes that differ by at most one, the larger first (``np.array_split``)."""
    count = min(n, n_ranges)
    size, extra = divmod(n, count)
    sizes = np.full(count, size, dtype=np.intp)
    sizes[:extra] += 1
    return np.concatenate([[0], np.cumsum(sizes)])


def ace_gaps(probs: np.ndarray, y: np.ndarray, *, n_ranges: int = ECE_BINS, resid=None, exact=None):
    """(gaps, sizes): gaps[k, r] = |mean 1{y = k} − mean p_k| over range r of class k's
    stable order by p_k, and the R range sizes; ACE is the mean of the L × R gaps.

    ``probs`` n × L float64 (C order) and ``y`` n int64 class indices, both already checked
    (scoring.multiclass.ace checks them). With the C kernels built, no column is sorted:
    the values at the cuts are order statistics (radix selection), and one pass puts every
    example in its range (its count and its compensated sum of p_k): ``ace_columns``
    reads a thread's classes straight from the rows (up to ROW_SWEEP_CLASSES classes),
    ``ace_column`` a column copied out (wider rows); without them, each column is sorted
    and the counts come from :func:`_hits`.
    Classes are spread over a few threads on a large file (sorting and the kernels
    release the GIL); each class's result is the same whichever thread computes it.
    ``resid`` (n × L float32, scoring.multiclass_rows.ClassRows): equal doubles are
    ordered by their exact values, then by line (:func:`_exact_hits`); ``exact`` (row →
    its L fractions) the exact values of the rows holding values below 2^-900.
    """
    n, n_classes = probs.shape
    bounds = ace_ranges(n, n_ranges=n_ranges)
    gaps = np.empty((n_classes, bounds.size - 1))
    native = _accel.native() if bounds.size <= 1 << 15 else None  # (the kernels: R < 2^15)
    parts = min(MAX_THREADS, n_classes)
    if native is not None:
        labels = y.astype(np.int32)  # (read once per class: the narrower the quicker)
        at = np.empty((n_classes, bounds.size - 2, 2))
        hits, sums = np.empty(gaps.shape), np.empty(gaps.shape)
        sweep = n_classes <= ROW_SWEEP_CLASSES

        def share(part: int) -> None:
            classes = range(part * n_classes // parts, (part + 1) * n_classes // parts)
            mine = slice(classes.start, classes.stop)
            hits[mine], sums[mine] = 0.0, 0.0  # (the kernels add: a part may run again)
            if sweep:  # (a part's classes at once, straight from the rows)
                native.ace_columns(
                    probs, mine.start, len(classes), labels, bounds, hits[mine], sums[mine],
                    at[mine],
                )  # fmt: skip
            else:
                _ace_copied(native, probs, labels, classes, bounds, hits, sums, at)
            for k in classes:
                own = hits[k]
                if resid is not None:
                    own = _exact_hits(
                        probs, y, resid, exact, k, at[k, :, 1], at[k, :, 0], bounds, own
                    )
                np.abs(own - sums[k], out=gaps[k])

    else:
        # The true class's probability of every example, grouped by class: for class k
        # these are the p_k of its own examples, the only ones that count in 1{y = k}.
        order = np.argsort(y.astype(np.int16 if n_classes < 2**15 else np.int32), kind="stable")
        members = probs[order, y[order]]
        starts = np.concatenate([[0], np.cumsum(np.bincount(y, minlength=n_classes))])

        def share(part: int) -> None:
            column = np.empty(n)
            for k in range(part, n_classes, parts):
                np.copyto(column, probs[:, k])
                column.sort()
                mine = members[starts[k] : starts[k + 1]]
                mine.sort()
                hits = _hits(probs[:, k], y == k, column=column, members=mine, bounds=bounds)
                if resid is not None:
                    cuts = bounds[1:-1]
                    hits = _exact_hits(
                        probs, y, resid, exact, k, column[cuts], column[cuts - 1], bounds, hits
                    )
                np.abs(hits - np.add.reduceat(column, bounds[:-1]), out=gaps[k])

    in_parts(share, parts, size=probs.size)
    _accel.release_memory()  # (the threads' scratch: kept by their arenas otherwise)
    gaps /= np.diff(bounds)
    return gaps, np.diff(bounds)


def _ace_copied(native, probs, labels, classes: range, bounds, hits, sums, at) -> None:
    """``ace_column`` on each of ``classes``, their columns copied out a group at a time:
    neighbouring columns together, a group per read of the rows (reading a column at a
    time reads every row's cache lines once per class: at L = 100, a hundred passes over
    the file's probabilities); a group holds up to GROUP_VALUES values, so a thread's
    scratch stays that of one column of 2^20."""
    n = probs.shape[0]
    group = max(1, min(len(classes), GROUP_VALUES // n))
    line_order = np.empty((group, n))
    for first in range(classes.start, classes.stop, group):
        count = min(group, classes.stop - first)
        native.columns_copy(probs, first, count, line_order[:count])
        for k in range(first, first + count):
            native.ace_column(line_order[k - first], labels, k, bounds, hits[k], sums[k], at[k])


def _exact_hits(
    probs, y, resid, exact, k: int, values, before, bounds, hits, line_order=None
) -> np.ndarray:
    """``hits`` (equal doubles counted in line order), moved where a value running across a
    cut is held by examples whose exact values differ (``resid``, ``exact``): those
    holders in the order of their exact values, then line (spec §7). ``values`` and
    ``before``: the values at the ranks of the cuts and just before them; ``line_order``:
    the p_k in line order, if at hand."""
    cuts = bounds[1:-1]
    if not cuts.size:
        return hits
    spanning = np.unique(values[before == values])
    if not spanning.size:
        return hits
    line_order = probs[:, k] if line_order is None else line_order
    holders = np.flatnonzero(np.isin(line_order, spanning))
    held = line_order[holders]
    for v in spanning.tolist():
        mine = holders[held == v]  # (by line)
        special = [i for i in mine.tolist() if i in exact] if exact else []
        sides = resid[mine, k]
        if (sides == sides[0]).all() and not special:
            continue
        if special:
            order = np.array(
                sorted(range(mine.size), key=lambda j: (_exact(probs, resid, exact, mine[j], k), j))
            )
        else:
            order = np.argsort(sides, kind="stable")
        own = y[mine] == k
        lo = int(np.count_nonzero(line_order < v))  # the first rank holding v
        ranks = lo + np.arange(mine.size)
        moved = np.empty(mine.size, dtype=np.intp)
        moved[order] = ranks
        hits = hits - np.bincount(np.searchsorted(cuts, ranks[own], "right"), minlength=hits.size)
        hits = hits + np.bincount(np.searchsorted(cuts, moved[own], "right"), minlength=hits.size)
    return hits


def _exact(probs, resid, exact, i: int, k: int) -> Fraction:
    if i in exact:
        return exact[i][k]
    p = Fraction(float(probs[i, k]))
    return p + p * Fraction(float(resid[i, k])) / 2**180  # (multiclass_rows.SIDE_SCALE)


def in_parts(work: Callable[[int], T], parts: int, *, size: int) -> list[T]:
    """[work(0), …, work(parts − 1)], on up to MAX_THREADS threads for an input of at least
    THREADED_SIZE values (numpy's sorts and copies and the C kernels release the GIL;
    below that a thread costs more than it saves). A caller's result depends on how it
    cuts its work into parts, never on how many threads run them."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    threads = min(MAX_THREADS, parts, usable or 1) if size >= THREADED_SIZE else 1
    if threads > 1:
        with ThreadPoolExecutor(threads) as pool:
            try:
                futures = [pool.submit(work, part) for part in range(parts)]
            except RuntimeError:
                # Near a worker's thread or memory limit a thread cannot start ("can't
                # start new thread"): the parts run here, one after another (the same
                # result), once any part already started has finished.
                futures = None
            if futures is not None:
                return [future.result() for future in futures]
    return [work(part) for part in range(parts)]


def _hits(values_k, own, *, column, members, bounds) -> np.ndarray:
    """#{y_i = k} in each range of class k's stable order, with numpy: ``values_k`` the p_k
    of every example (line order), ``own`` whether each is of class k, ``column`` p_k
    sorted, ``members`` the p_k of the class-k examples sorted.

    Range r starts at rank s_r, whose value is v_r = column[s_r]. An example whose value
    x is not in a run of equal values spanning a cut (v_r at ranks s_r − 1 and s_r) lies
    in range #{r : v_r ≤ x}, so #{members in ranges before r} = #{members < v_r}. The j-th
    example (by line) holding a spanning value v has rank lo + j, lo = #{p_k < v}.
    """
    cuts = bounds[1:-1]
    values = column[cuts]
    below = np.searchsorted(members, values, side="left")
    hits = np.diff(np.concatenate([[0], below, [members.size]])).astype(np.float64)
    spanning = np.unique(values[column[cuts - 1] == values]) if cuts.size else values
    if not spanning.size:
        return hits
    # The members holding a spanning value were counted by the rule above: take them out,
    # then place every holder of a spanning value by its rank (one pass over the column).
    held = np.searchsorted(members, spanning, "right") - np.searchsorted(members, spanning)
    np.subtract.at(hits, np.searchsorted(values, spanning, side="right"), held)
    group = np.minimum(np.searchsorted(spanning, values_k), spanning.size - 1)
    lines = np.flatnonzero(spanning[group] == values_k)
    group = group[lines].astype(np.int16 if spanning.size <= 2**15 else np.intp)
    order = np.argsort(group, kind="stable")  # by value, then by line
    before = np.cumsum(np.bincount(group, minlength=spanning.size)) - np.bincount(
        group, minlength=spanning.size
    )
    within = np.empty(lines.size, dtype=np.intp)
    within[order] = np.arange(lines.size) - before[group[order]]
    ranks = np.searchsorted(column, spanning)[group] + within
    ranks = ranks[own[lines]]
    hits += np.bincount(np.searchsorted(cuts, ranks, side="right"), minlength=hits.size)
    return hits
