"""scoring.corp_pool: PAV on many resamples at once, and the groups it runs on."""

import numpy as np
import pytest

from scoring import corp_pool
from scoring.corp_bands import pool
from scoring.decomposition import pav


def _fitted(lo, count, total, size):
    """Each group's value from :func:`pool`'s blocks."""
    return np.repeat(total / count, np.diff(lo, append=size))


def test_pool_of_two_rows_by_hand():
    # Row 1: outcomes 1, 0, 1 → PAV 1/2, 1/2, 1; row 2: 0 then two groups' 2 of 2 → 0, 1.
    lo, count, total = pool([1, 1, 1, 1, 2], [1, 0, 1, 0, 2], [1, 0, 0, 1, 0])
    assert lo.tolist() == [0, 2, 3, 4]
    assert count.tolist() == [2, 1, 1, 2] and total.tolist() == [1, 1, 0, 2]


@pytest.mark.parametrize("passes", [corp_pool.MAX_PASSES, 1])
def test_pool_is_pav_on_every_row(monkeypatch, passes):
    # passes = 1 leaves violators after numpy's pass: the stack PAV finishes those rows.
    monkeypatch.setattr(corp_pool, "MAX_PASSES", passes)
    rng = np.random.default_rng(31)
    rows = [rng.integers(0, 2, size=40).astype(float) for _ in range(30)]
    rows.append(np.r_[np.ones(10), np.zeros(5)])  # one chain, pooled in one pass
    rows.append(np.r_[0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0])
    flat = np.concatenate(rows)
    first = np.concatenate([np.r_[True, np.zeros(r.size - 1, dtype=bool)] for r in rows])
    got = _fitted(*pool(np.ones(flat.size), flat, first), flat.size)
    want = np.concatenate([pav(np.arange(r.size), r) for r in rows])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)


def test_groups_never_split_ties_and_are_bounded():
    rng = np.random.default_rng(6)
    xs = np.sort(np.r_[np.zeros(7), np.round(rng.uniform(0.01, 0.99, size=200_000), 4), np.ones(3)])
    starts = corp_pool.group_starts(xs, limit=1000)
    assert starts[0] == 0 and starts.size <= 1000 + 2
    assert (xs[starts[1:]] > xs[starts[1:] - 1]).all()  # every group starts a new value
    sizes = np.diff(starts, append=xs.size)
    assert sizes[0] == 7 and sizes[-1] == 3  # the forecasts 0 and 1 are groups apart
    assert sizes.max() <= 200_000 / 1000 + 2 * np.unique(xs, return_counts=True)[1].max()
    # At most ``limit`` distinct values: the tie groups themselves.
    assert corp_pool.group_starts(xs, limit=20_000).size == np.unique(xs).size
