"""scoring.regression_rows: a file's rows kept as written, read back as variances, quantiles
and CDFs that agree with the per-type readers and with exact arithmetic, kept by subset;
and the issue-27 nmse cases whose means used to be inexact."""

from fractions import Fraction

import numpy as np
import pytest

import scoring
from scoring import moments, row_quantiles
from scoring.distributions import Stats, gaussian_stats
from scoring.parse import GAUSSIAN, QUANTILES, SAMPLE, RegressionRows, read_regression

from . import reference

LINES = [
    "1 0.5 2.0",
    "0 0.25 -1 0.75 1",
    "2 3 1 2",
    "1 -4 0",  # a point prediction
    "0 0.1 -1e100 0.5 0 0.9 1e100",
    "2 999999999.7013268 999999999.7013268 999999999.7013268 999999999.7013268 999999999.7013268",
    "0 0.5 0 0.5000000000001 1",
    "2 5",
]
TARGETS = np.array([0.0, 0.5, 2.0, -4.0, 1.0, 999999999.7013269, 0.3, 4.0])
LEVELS = np.array([0.05, 0.25, 0.5, 0.75, 0.95])


@pytest.fixture
def rows() -> RegressionRows:
    return read_regression("\n".join(LINES).encode(), path="p", targets=TARGETS)


def _numbers(i):
    return [float(x) for x in LINES[i].split()[1:]]


def test_rows_keep_what_each_line_was(rows):
    assert rows.kind.tolist() == [
        GAUSSIAN,
        QUANTILES,
        SAMPLE,
        GAUSSIAN,
        QUANTILES,
        SAMPLE,
        QUANTILES,
        SAMPLE,
    ]
    seen = np.zeros(rows.n, dtype=int)
    for group in rows.groups:
        seen[group.index] += 1
        assert group.first.shape[0] == group.index.size
    assert (seen == 1).all()


def test_means_are_exact(rows):
    m = rows.stats.mean
    assert m[5] == 999999999.7013268  # five copies: numpy's mean gives …7013267
    for i in (1, 4, 6):
        x = _numbers(i)
        want = reference.quantile_mean(x[0::2], x[1::2])
        assert abs(Fraction(m[i]) + Fraction(rows.mean_lo[i]) - want) <= abs(want) * 2**-31
    assert m[2] == 2.0 and m[3] == -4.0 and m[7] == 5.0


def test_residuals_use_the_double_double_mean(rows):
    r = rows.residuals(TARGETS)
    assert r[5] == 999999999.7013269 - 999999999.7013268  # exact: Sterbenz
    x = _numbers(6)
    want = Fraction(0.3) - reference.quantile_mean(x[0::2], x[1::2])
    assert abs(Fraction(r[6]) - want) <= abs(want) * 2**-50


def test_predictive_variance_of_every_row_type(rows):
    v = rows.predictive_variance()
    assert v[0] == 2.0 and v[3] == 0.0 and v[7] == 0.0 and v[5] == 0.0
    assert v[2] == pytest.approx(2 / 3, rel=1e-15)  # population variance of 1, 2, 3
    for i in (1, 4, 6):
        x = np.array([_numbers(i)])
        a, q = x[:, 0::2], x[:, 1::2]
        assert v[i] == moments.quantile_variance(a, q)[0]


def test_quantiles_and_cdf_agree_with_the_row_readers(rows):
    got = rows.quantiles(LEVELS)
    assert got.shape == (rows.n, LEVELS.size)
    assert (got[3] == -4.0).all()  # a point prediction gives m at every level
    np.testing.assert_array_equal(
        got[0], row_quantiles.gaussian_quantiles(np.array([0.5]), np.array([2.0]), LEVELS)[0]
    )
    np.testing.assert_allclose(got[2], np.quantile([1.0, 2.0, 3.0], LEVELS), rtol=1e-15)
    assert (got[7] == 5.0).all() and (got[5] == 999999999.7013268).all()
    for i in (1, 4, 6):
        x = np.array([_numbers(i)])
        want = row_quantiles.quantile_row_quantiles(x[:, 0::2], x[:, 1::2], LEVELS)[0]
        np.testing.assert_array_equal(got[i], want)
    assert got[1, 1] == -1.0 and got[1, 3] == 1.0  # at a row's own levels: its quantiles
    f = rows.cdf(TARGETS)
    assert f[3] == 1.0 and f[7] == 0.0 and f[2] == 2 / 3 and f[5] == 1.0
    assert f[1] == pytest.approx(0.625, rel=1e-15)  # halfway up the middle piece
    with pytest.raises(ValueError):
        rows.quantiles([0.0, 0.5])
    with pytest.raises(ValueError):
        rows.cdf(TARGETS[:3])


@pytest.mark.parametrize(
    "take",
    [
        np.array([True, False, True, True, False, True, False, True]),
        np.array([6, 6, 0, 2, 5, 1]),  # an index array with repeats (a resample)
        np.zeros(8, dtype=bool),
    ],
)
def test_subset_keeps_every_reading(rows, take):
    part = rows.subset(take)
    idx = np.flatnonzero(take) if take.dtype == bool else take
    assert part.n == idx.size
    assert part.kind.tolist() == rows.kind[idx].tolist()
    np.testing.assert_array_equal(part.stats.mean, rows.stats.mean[idx])
    np.testing.assert_array_equal(part.mean_lo, rows.mean_lo[idx])
    np.testing.assert_array_equal(part.predictive_variance(), rows.predictive_variance()[idx])
    np.testing.assert_array_equal(part.quantiles(LEVELS), rows.quantiles(LEVELS)[idx])
    np.testing.assert_array_equal(part.cdf(TARGETS[idx]), rows.cdf(TARGETS)[idx])
    again = part.subset(np.ones(part.n, dtype=bool))
    np.testing.assert_array_equal(again.quantiles(LEVELS), part.quantiles(LEVELS))


def test_gaussian_rows_without_groups_are_the_baseline():
    m, v, t = np.array([1.0, 2.0]), np.array([4.0, 0.0]), np.array([0.0, 2.0])
    rows = RegressionRows(np.full(2, GAUSSIAN, dtype=np.int8), v, gaussian_stats(m, v, t))
    assert rows.predictive_variance().tolist() == [4.0, 0.0]
    assert rows.quantiles([0.5]).tolist() == [[1.0], [2.0]]
    assert rows.subset(np.array([False, True])).cdf(np.array([2.0])).tolist() == [1.0]
    stats = Stats(*(np.zeros(1) for _ in range(4)))
    with pytest.raises(ValueError):
        RegressionRows(np.full(1, SAMPLE, dtype=np.int8), np.full(1, np.nan), stats)


def _exact_nmse(means, targets) -> Fraction:
    t = [Fraction(x) for x in targets]
    mean_t = sum(t) / len(t)
    var = sum((x - mean_t) ** 2 for x in t) / len(t)
    return sum((x - m) ** 2 for x, m in zip(t, means, strict=True)) / (len(t) * var)


def test_the_issue_nmse_cases_are_exact():
    """Five copies of 999999999.7013268 (nmse was 7.7e-7 off) and the quantile row whose
    two 2.5e12 tail terms cancel (nmse 55.09 for 54.50 before)."""
    sample = "2 " + " ".join(["999999999.7013268"] * 5)
    targets = [999999999.7013268 + k * 2**-23 for k in (1, 3, -2)]
    lines = [sample] * 3
    got = scoring.evaluate("\n".join(lines).encode(), np.array(targets)).scores["nmse"]
    want = _exact_nmse([Fraction(999999999.7013268)] * 3, targets)
    assert abs(Fraction(got) - want) <= want * Fraction(1, 10**12)
    row = "0 0.5 0 0.5000000000001 1"
    m = reference.quantile_mean([0.5, 0.5000000000001], [0.0, 1.0])
    targets = [0.0, 1.0, 0.25]
    got = scoring.evaluate("\n".join([row] * 3).encode(), np.array(targets)).scores["nmse"]
    assert abs(Fraction(got) - _exact_nmse([m] * 3, targets)) <= _exact_nmse(
        [m] * 3, targets
    ) * Fraction(1, 10**12)


def test_a_target_close_to_a_mean_of_much_larger_terms_gets_its_exact_residual():
    """A tail of 5.4e12 puts the mean there; the target 5.27 from it needs the mean to
    1e-21 of itself: the row's mean is recomputed exactly for that residual."""
    line = (
        "0 4.488096201843625e-26 3.0806817 8.441764945293863e-17 3.1290606 "
        "9.303209216693358e-17 5.1153924 2.3514178338732977e-12 17.95736"
    )
    sample = "2 1e100 1 -1e100 3 4"
    t = np.array([5461588118437.068, 1.6 + 2**-40])
    rows = read_regression(f"{line}\n{sample}".encode(), path="p", targets=t)
    r = rows.residuals(t)
    x = [float(v) for v in line.split()[1:]]
    want = Fraction(t[0]) - reference.quantile_mean(x[0::2], x[1::2])
    assert abs(Fraction(r[0]) - want) <= abs(want) * 2**-50
    want = Fraction(t[1]) - Fraction(8, 5)
    assert abs(Fraction(r[1]) - want) <= abs(want) * 2**-50


def test_the_arena_puts_a_files_rows_in_few_allocations():
    from scoring.regression_rows import Arena

    arena = Arena(1000)
    parts = [arena.take("a", 4, 100, 100) for _ in range(10)]  # ten blocks of one layout
    assert all(p.base is parts[0].base for p in parts)  # one allocation for the file
    assert parts[0].base.shape[0] <= 1100
    for k, p in enumerate(parts):
        p[:] = k
    assert [int(p[0, 0]) for p in parts] == list(range(10))  # views that do not overlap
    mixed = [arena.take("s", 7, 10, 100) for _ in range(3)]  # a tenth of each block
    assert mixed[0].base is mixed[2].base and mixed[0].base.shape[0] == 110
    assert arena.take("s", 7, 500, 100).shape == (500, 7)  # more than predicted: a new array


def test_variance_keys_carry_the_exact_remainder():
    """`1 1e100 1e200` and the sample ±1e100 (variance the double 1e100 squared, 1e200 +
    6.2e183) round to one double: the remainder orders them; shifted copies of a quantile
    row (equal exact variances) stay equal pairs."""
    text = (
        "1 1e100 1e200\n2 -1e100 1e100\n"
        "0 0.11 -4.935 0.58 -3.524 0.61 -1.424\n"
        "0 0.11 -3.9349999999999996 0.58 -2.524 0.61 -0.42399999999999993\n"
        "2 3 1 2\n"
    )
    rows = read_regression(text.encode(), path="p", targets=np.zeros(5))
    hi, lo = rows.predictive_variance(remainder=True)
    assert hi[0] == hi[1] == 1e200 and lo[0] == 0 and lo[1] > 0
    exact = Fraction(1e100) ** 2
    assert Fraction(hi[1]) + Fraction(lo[1]) - exact <= exact * 2**-100
    assert (hi[2], lo[2]) == (hi[3], lo[3])
    assert moments.exact_quantile_variance(
        [0.11, 0.58, 0.61], [-4.935, -3.524, -1.424]
    ) == moments.exact_quantile_variance(
        [0.11, 0.58, 0.61], [-3.9349999999999996, -2.524, -0.42399999999999993]
    )
    assert (hi[4], lo[4]) == (2 / 3, 0.0)  # alone: its double, no remainder needed


def test_a_residual_below_the_double_double_mean_is_exact():
    """`0 0.1 -1e100 0.9 1e100`'s mean is −4.16e83 from terms of 1e100; a target on the
    double nearest it is 1.25e67 away, beyond a double-double mean (spec §3)."""
    line = "0 0.1 -1e100 0.9 1e100"
    t = np.array([-4.163336342344337e83, 1.0])
    rows = read_regression(f"{line}\n2 1 2 3\n".encode(), path="p", targets=t)
    want = Fraction(t[0]) - reference.quantile_mean([0.1, 0.9], [-1e100, 1e100])
    r = rows.residuals(t)
    assert abs(Fraction(r[0]) - want) <= abs(want) * Fraction(1, 10**12)
    assert r[1] == -1.0


def test_quantiles_read_scaled_are_the_readings_times_the_scale():
    text = "1 3 4\n0 0.1 -1e100 0.9 1e100\n2 5 -1 2\n0 1e-300 0 1e-210 1e99 2e-210 1e100\n"
    rows = read_regression(text.encode(), path="p", targets=np.zeros(4))
    levels = np.array([0.05, 0.5, 0.95])
    plain, scaled = rows.quantiles(levels), rows.quantiles(levels, scale=2.0**-64)
    assert (plain[3] == np.inf).all()  # bN = 9e309: every reading in the upper tail
    assert (scaled[:3] == plain[:3] * 2.0**-64).all()
    assert np.isfinite(scaled[3]).all()
    b_scaled = 9e99 * 2.0**-64 / 1e-210  # bN·2**-64 (1 − aN = 1 to 2e-210)
    assert scaled[3, 1] == pytest.approx(1e100 * 2.0**-64 + b_scaled * np.log(2.0), rel=1e-12)
