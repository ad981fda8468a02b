"""scoring.multiclass_ace: ace's ranges of each class's stable order, ties included, on both
paths, against the definition written out with a stable argsort and np.array_split."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest

from scoring import multiclass as mc
from scoring import multiclass_ace
from scoring.multiclass_ace import ace_gaps, ace_ranges


def _by_definition(probs, y) -> float:
    """Spec §7 as written: stable order by p_k, np.array_split into min(n, 15) ranges."""
    n, n_classes = probs.shape
    parts = []
    for k in range(n_classes):
        order = np.argsort(probs[:, k], kind="stable")
        for r in np.array_split(order, min(n, 15)):
            parts.append(abs(np.mean(y[r] == k) - np.mean(probs[r, k])))
    return math.fsum(parts) / len(parts)


@pytest.mark.parametrize("n", [1, 2, 14, 15, 16, 29, 31, 1000])
def test_the_ranges_are_array_splits(n):
    bounds = ace_ranges(n)
    sizes = [part.size for part in np.array_split(np.arange(n), min(n, 15))]
    assert np.diff(bounds).tolist() == sizes and bounds[0] == 0 and bounds[-1] == n


# Sixteen examples, L = 2: 16 = 15 + 1, so the first range of each order holds two examples
# and every other range one. p0 = 0.2 is held by lines 3, 7 and 12 (y = 1, 1, 0): in the
# stable order lines 3 and 7 fill the first range and line 12 is alone in the second.
P0 = [0.9, 0.8, 0.7, 0.2, 0.6, 0.55, 0.65, 0.2, 0.75, 0.85, 0.95, 0.4, 0.2, 0.3, 0.45, 0.35]
Y16 = [0, 0, 1, 1, 0, 1, 0, 1, 0, 1, 0, 0, 0, 1, 1, 0]
# Class 0, ranges in order: {3, 7}: |0 − 0.2|; {12}: |1 − 0.2|; then one line each:
# 13 .3, 15 .65, 11 .6, 14 .45, 5 .55, 4 .4, 6 .35, 2 .7, 8 .25, 1 .2, 9 .85, 0 .1, 10 .05
CLASS_0 = (
    0.2 + 0.8 + 0.3 + 0.65 + 0.6 + 0.45 + 0.55 + 0.4 + 0.35 + 0.7 + 0.25 + 0.2 + 0.85 + 0.1 + 0.05
)
# Class 1 (p1 = 1 − p0, so the reverse order): {10, 0}: |0 − (0.05 + 0.1)/2|; then
# 9 .85, 1 .2, 8 .25, 2 .7, 6 .35, 4 .4, 5 .55, 14 .45, 11 .6, 15 .65, 13 .3, and the tied
# 0.8 of lines 3, 7, 12 one range each: .2, .2, .8
CLASS_1 = (
    0.075 + 0.85 + 0.2 + 0.25 + 0.7 + 0.35 + 0.4 + 0.55 + 0.45 + 0.6 + 0.65 + 0.3 + 0.2 + 0.2 + 0.8
)


def test_ties_across_a_cut_are_taken_in_line_order_by_hand(no_native):
    probs = np.column_stack([P0, 1.0 - np.array(P0)])
    y = np.array(Y16)
    want = (CLASS_0 + CLASS_1) / 30  # (1/(R·L)), R = 15
    assert want == pytest.approx(13.025 / 30, rel=1e-15)
    assert mc.ace(probs, y) == pytest.approx(want, rel=1e-12)
    with no_native():
        assert mc.ace(probs, y) == pytest.approx(want, rel=1e-12)
    # Lines 12, 3, 7 in that order instead (as an unstable sort might leave them): the first
    # range would hold lines 12 and 3, |0.5 − 0.2| + |0 − 0.2| = 0.5 where line order gives 1.0.
    assert _by_definition(probs, y) == pytest.approx(want, rel=1e-12)


def _tied_case(rng, n: int, n_classes: int, digits: int):
    probs = np.round(rng.dirichlet(np.full(n_classes, 0.5), size=n), digits)
    probs[:, -1] = np.maximum(0.0, 1.0 - probs[:, :-1].sum(axis=1))
    probs /= probs.sum(axis=1, keepdims=True)
    return probs, rng.integers(0, n_classes, n)


@pytest.mark.parametrize("seed", range(40))
def test_ace_is_the_stable_sort_definition_on_both_paths(seed, no_native):
    rng = np.random.default_rng([seed, 15])
    n = int(rng.integers(1, 200))
    n_classes = int(rng.integers(1, 7))
    probs, y = _tied_case(rng, n, n_classes, digits=int(rng.integers(0, 4)))
    if seed % 4 == 0:
        probs = rng.dirichlet(np.ones(n_classes), size=n)  # no ties
    want = _by_definition(probs, y)
    assert mc.ace(probs, y) == pytest.approx(want, rel=1e-12, abs=1e-15)
    with no_native():
        assert mc.ace(probs, y) == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_negative_zero_is_zero(no_native):
    """-0.0 (a file may write "-0") ties with 0.0 in value and so in line order."""
    probs = np.array([[0.0, 1.0]] * 9 + [[-0.0, 1.0]] * 9 + [[0.5, 0.5]] * 2)
    y = np.array([0, 1] * 10)
    want = _by_definition(probs, y)
    assert mc.ace(probs, y) == pytest.approx(want, rel=1e-12)
    with no_native():
        assert mc.ace(probs, y) == pytest.approx(want, rel=1e-12)


def test_a_large_tied_file_over_threads(monkeypatch, no_native):
    """Past THREADED_SIZE the classes are shared out among threads: the same gaps."""
    rng = np.random.default_rng(7)
    probs, y = _tied_case(rng, 300_000, 4, digits=2)
    assert probs.size >= multiclass_ace.THREADED_SIZE
    threaded, sizes = ace_gaps(probs, y)
    monkeypatch.setattr(multiclass_ace, "MAX_THREADS", 1)
    alone, _ = ace_gaps(probs, y)
    with no_native():
        plain, _ = ace_gaps(probs, y)
    assert np.array_equal(threaded, alone)
    np.testing.assert_allclose(plain, alone, rtol=1e-12, atol=1e-15)
    # Class 0 by the definition: the stable order's ranges.
    order = np.argsort(probs[:, 0], kind="stable")
    parts = [abs(np.mean(y[r] == 0) - np.mean(probs[r, 0])) for r in np.array_split(order, 15)]
    np.testing.assert_allclose(alone[0], parts, rtol=1e-9, atol=1e-15)
    assert sizes.tolist() == [20_000] * 15


def test_parts_run_serially_when_no_thread_can_start(monkeypatch):
    """Near a worker's thread limit starting a thread raises RuntimeError: in_parts then
    runs the parts itself, one after another, with the same gaps."""
    started = []

    class NoThreads(multiclass_ace.ThreadPoolExecutor):
        def submit(self, fn, /, *args, **kwargs):
            if started:  # the first part starts, the second cannot
                raise RuntimeError("can't start new thread")
            started.append(args)
            return super().submit(fn, *args, **kwargs)

    rng = np.random.default_rng(8)
    probs, y = _tied_case(rng, 300_000, 4, digits=2)
    threaded, _ = ace_gaps(probs, y)
    monkeypatch.setattr(multiclass_ace.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(multiclass_ace, "ThreadPoolExecutor", NoThreads)
    serial, _ = ace_gaps(probs, y)
    assert started == [(0,)]
    assert np.array_equal(serial, threaded)
    started.clear()
    assert multiclass_ace.in_parts(lambda part: part * 10, 2, size=1 << 30) == [0, 10]
    assert started == [(0,)]


def _column_cases():
    rng = np.random.default_rng(26)
    yield "random", rng.random(10_000)
    yield "all equal", np.full(5_000, 0.1)
    yield "two values", rng.choice([0.25, 0.75], 7_001)
    yield "one bucket", 1.0 - rng.integers(1, 50, 20_000) * 2.0**-52  # (top bits all equal)
    yield "sorted", np.sort(rng.random(30_000))
    yield "reversed", np.sort(rng.random(30_000))[::-1].copy()
    yield "organ pipe", np.concatenate([np.arange(10_000), np.arange(10_000)[::-1]]) / 2e4
    yield "zeros of both signs", rng.choice([0.0, -0.0, 1.0, 0.5], 999)
    yield "subnormals", rng.choice([5e-324, 1e-310, 0.0, 1e-300], 3_333)
    for n in (1, 2, 15, 16, 29, 31):
        yield f"n={n}", np.round(rng.random(n), 1)


@pytest.mark.parametrize(
    ("name", "column"), list(_column_cases()), ids=lambda v: v if isinstance(v, str) else ""
)
def test_the_kernel_finds_the_cuts_counts_and_sums_of_the_sorted_order(name, column):
    """ace_column sorts nothing: the values at the cuts by radix selection, then one pass.
    Its values at ranks s_r − 1 and s_r are the sorted column's, its counts those of the
    stable order (ties by line), its sums those of each range of the sorted column — on
    inputs a quickselect meets badly (sorted, reversed, organ pipe, one value, one bucket)."""
    from scoring import _accel

    native = _accel.native()
    if native is None:
        pytest.skip("the C extension is not built")
    n = column.size
    rng = np.random.default_rng(n)
    labels = rng.integers(0, 3, n).astype(np.int32)
    bounds = ace_ranges(n)
    hits, sums = np.zeros(bounds.size - 1), np.zeros(bounds.size - 1)
    at = np.empty((bounds.size - 2, 2))
    native.ace_column(np.ascontiguousarray(column), labels, 1, bounds, hits, sums, at)
    order = np.argsort(column, kind="stable")
    ordered = column[order]
    cuts = bounds[1:-1]
    assert np.array_equal(at[:, 1], ordered[cuts]) and np.array_equal(at[:, 0], ordered[cuts - 1])
    want_hits = [np.count_nonzero(labels[r] == 1) for r in np.array_split(order, bounds.size - 1)]
    assert hits.tolist() == want_hits
    want_sums = [math.fsum(column[r]) for r in np.array_split(order, bounds.size - 1)]
    np.testing.assert_allclose(sums, want_sums, rtol=1e-15, atol=0)


def test_the_kernel_refuses_bad_buffers():
    from scoring import _accel

    native = _accel.native()
    if native is None:
        pytest.skip("the C extension is not built")
    column, labels = np.zeros(20), np.zeros(20, dtype=np.int32)
    bounds = ace_ranges(20)
    hits, sums, at = np.zeros(15), np.zeros(15), np.empty((14, 2))
    with pytest.raises(ValueError, match="buffers of the wrong size"):
        native.ace_column(column, labels, 0, bounds, hits, np.zeros(14), at)
    with pytest.raises(ValueError, match="bounds must"):
        native.ace_column(column, labels, 0, bounds[::-1].copy(), hits, sums, at)


@pytest.mark.parametrize("group_values", [1, 7 * 2_000, 1 << 20])
def test_columns_copied_in_groups_give_the_same_gaps(monkeypatch, group_values):
    """Wide rows' columns are copied out a group at a time (GROUP_VALUES values): one
    column, groups of 7 that do not divide L = 23 or a part's share of it, or every
    column at once, the gaps are the same, each class by the definition, and the same as
    those of the sweep straight from the rows (ace_columns) that narrow rows take."""
    rng = np.random.default_rng(23)
    probs, y = _tied_case(rng, 2_000, 23, digits=2)
    swept, _ = ace_gaps(probs, y)
    monkeypatch.setattr(multiclass_ace, "ROW_SWEEP_CLASSES", 0)
    monkeypatch.setattr(multiclass_ace, "GROUP_VALUES", group_values)
    grouped, _ = ace_gaps(probs, y)
    monkeypatch.setattr(multiclass_ace, "GROUP_VALUES", 1)
    alone, _ = ace_gaps(probs, y)
    assert np.array_equal(grouped, alone) and np.array_equal(swept, alone)
    assert grouped.mean() == pytest.approx(_by_definition(probs, y), rel=1e-12)


def _kernel():
    from scoring import _accel

    native = _accel.native()
    if native is None:
        pytest.skip("the C extension is not built")
    return native


def _one_column(native, column, labels, k, bounds):
    hits, sums = np.zeros(bounds.size - 1), np.zeros(bounds.size - 1)
    at = np.empty((bounds.size - 2, 2))
    native.ace_column(np.ascontiguousarray(column), labels, k, bounds, hits, sums, at)
    return hits, sums, at


@pytest.mark.parametrize("n", [1, 2, 16, 31, 5_000, 40_000])
def test_the_row_sweep_gives_each_column_bit_for_bit(n):
    """ace_columns reads classes first … first + count − 1 straight from the rows, all in
    each sweep: every class's hits, sums and values at the cuts are ace_column's on its
    own column, bit for bit, whichever classes it is taken with. The columns mix what the
    kernel meets: values tied across cuts, one-hot columns (every key kept, so the kept
    keys are taken a few classes at a time), one value, subnormals, sorted and spread."""
    native = _kernel()
    rng = np.random.default_rng(n)
    columns = [
        np.round(rng.random(n), 2),
        rng.choice([0.0, 1.0], n, p=[0.9, 0.1]),
        rng.random(n),
        np.full(n, 0.25),
        rng.choice([0.0, 1.0], n, p=[0.3, 0.7]),
        np.sort(rng.random(n)),
        rng.choice([5e-324, 1e-310, 0.0, -0.0, 1e-300], n),
        1.0 - rng.integers(1, 50, n) * 2.0**-52,
        rng.choice([0.0, 1.0], n, p=[0.5, 0.5]),
    ]
    probs = np.ascontiguousarray(np.stack(columns, axis=1))
    n_classes = probs.shape[1]
    labels = rng.integers(0, n_classes, n).astype(np.int32)
    bounds = ace_ranges(n)
    for first, count in [(0, n_classes), (2, 5), (8, 1), (1, 3)]:
        hits, sums = np.zeros((count, bounds.size - 1)), np.zeros((count, bounds.size - 1))
        at = np.empty((count, bounds.size - 2, 2))
        native.ace_columns(probs, first, count, labels, bounds, hits, sums, at)
        for c in range(count):
            want = _one_column(native, probs[:, first + c], labels, first + c, bounds)
            assert np.array_equal(hits[c], want[0]), (first, c)
            assert np.array_equal(sums[c], want[1]), (first, c)
            assert np.array_equal(at[c], want[2]), (first, c)


def test_the_row_sweep_is_the_stable_sort_definition():
    """The sweep's counts, sums and cut values against a stable argsort of each column."""
    native = _kernel()
    rng = np.random.default_rng(31)
    probs, y = _tied_case(rng, 20_000, 6, digits=3)
    labels = y.astype(np.int32)
    bounds = ace_ranges(y.size)
    hits, sums = np.zeros((6, 15)), np.zeros((6, 15))
    at = np.empty((6, 14, 2))
    native.ace_columns(probs, 0, 6, labels, bounds, hits, sums, at)
    _assert_stable_order(probs, y, bounds, hits, sums, at)


def _assert_stable_order(probs, labels, bounds, hits, sums, at) -> None:
    """Each class's cut values, counts and sums are those of its stable argsort, cut as
    np.array_split cuts it."""
    cuts = bounds[1:-1]
    for k in range(probs.shape[1]):
        order = np.argsort(probs[:, k], kind="stable")
        ordered = probs[order, k]
        assert np.array_equal(at[k, :, 1], ordered[cuts])
        assert np.array_equal(at[k, :, 0], ordered[cuts - 1])
        parts = np.array_split(order, bounds.size - 1)
        assert hits[k].tolist() == [np.count_nonzero(labels[r] == k) for r in parts]
        want = [math.fsum(probs[r, k]) for r in parts]
        np.testing.assert_allclose(sums[k], want, rtol=1e-15, atol=0)


def test_the_row_sweep_refuses_bad_buffers():
    native = _kernel()
    probs, labels = np.zeros((20, 4)), np.zeros(20, dtype=np.int32)
    bounds = ace_ranges(20)
    hits, sums, at = np.zeros((2, 15)), np.zeros((2, 15)), np.empty((2, 14, 2))
    with pytest.raises(ValueError, match="buffers of the wrong size"):
        native.ace_columns(probs, 3, 2, labels, bounds, hits, sums, at)  # (past L)
    for first, count in ((1, sys.maxsize), (sys.maxsize, 2), (-1, 2)):  # first + count wraps
        with pytest.raises(ValueError, match="buffers of the wrong size"):
            native.ace_columns(probs, first, count, labels, bounds, hits, sums, at)
    with pytest.raises(ValueError, match="buffers of the wrong size"):
        native.ace_columns(probs, 0, 2, labels, bounds, hits[:1], sums, at)
    with pytest.raises(ValueError, match="buffers of the wrong size"):
        native.ace_columns(probs, 0, 2, labels[:19], bounds, hits, sums, at)
    with pytest.raises(ValueError, match="bounds must"):
        native.ace_columns(probs, 0, 2, labels, bounds[::-1].copy(), hits, sums, at)


def test_more_ranges_than_the_kernels_take_go_to_numpy(monkeypatch):
    """The kernels keep a bucket's range in 16 bits: R ≥ 2^15 is refused by them, and
    ace_gaps then takes the numpy path, with the same gaps as that path gives."""
    native = _kernel()
    n = 40_000
    rng = np.random.default_rng(40)
    probs, y = _tied_case(rng, n, 3, digits=3)
    bounds = ace_ranges(n, n_ranges=33_000)
    hits, sums = np.zeros((1, bounds.size - 1)), np.zeros((1, bounds.size - 1))
    at = np.empty((1, bounds.size - 2, 2))
    with pytest.raises(ValueError, match="at most 32767 ranges"):
        native.ace_columns(probs, 0, 1, y.astype(np.int32), bounds, hits, sums, at)
    wide, _ = ace_gaps(probs, y, n_ranges=33_000)
    monkeypatch.setattr(multiclass_ace._accel, "native", lambda: None)
    by_numpy, _ = ace_gaps(probs, y, n_ranges=33_000)
    assert wide.shape == (3, 33_000) and np.array_equal(wide, by_numpy)


def test_keys_outside_the_sampled_range_go_to_the_end_buckets():
    """The buckets span the keys of about 4,096 evenly spread rows; here those rows all
    hold 0.5 and every other row a value spread over [0, 1], ties included: the keys below
    and above the sample's range fall in the first and last buckets, and the counts, sums
    and cut values are still those of the stable order."""
    native = _kernel()
    n = 100_000
    rng = np.random.default_rng(41)
    column = np.round(rng.random(n), 3)
    column[:: n // 4096] = 0.5
    probs = np.ascontiguousarray(np.stack([column, 1.0 - column], axis=1))
    labels = rng.integers(0, 2, n).astype(np.int32)
    bounds = ace_ranges(n)
    hits, sums, at = np.zeros((2, 15)), np.zeros((2, 15)), np.empty((2, 14, 2))
    native.ace_columns(probs, 0, 2, labels, bounds, hits, sums, at)
    _assert_stable_order(probs, labels, bounds, hits, sums, at)


def test_numpy_path_takes_more_spanning_values_than_16_bits_hold():
    """R ≥ 2^15 goes to numpy (above): there a value tied across every one of 32,999 cuts
    makes 32,999 spanning values, more than a 16-bit index holds; ace still equals the
    definition written with a stable argsort and np.array_split."""
    ranges = 33_000
    n = 2 * ranges
    values = np.concatenate([[0], np.repeat(np.arange(1, ranges), 2), [ranges]]) / 1e5
    rng = np.random.default_rng(0)
    column = rng.permutation(values)
    probs = np.ascontiguousarray(np.stack([column, 1 - column], axis=1))
    y = rng.integers(0, 2, n)
    parts = []
    for k in range(2):
        order = np.argsort(probs[:, k], kind="stable")
        for r in np.array_split(order, ranges):
            parts.append(
                abs(np.count_nonzero(y[r] == k) / r.size - math.fsum(probs[r, k]) / r.size)
            )
    assert mc.ace(probs, y, n_ranges=ranges) == pytest.approx(
        math.fsum(parts) / len(parts), rel=1e-12
    )
