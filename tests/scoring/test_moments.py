"""scoring.moments: the mean and §8's variance of quantile and sample rows against exact
rational arithmetic (fractions.Fraction), on the issue's cases, on rows that cancel and on
random rows of every scale."""

from fractions import Fraction

import numpy as np
import pytest

from scoring import moments
from scoring.moments import quantile_mean, quantile_variance, sample_mean, sample_variance

from . import reference


def _variance(levels, values) -> Fraction:
    """§8: Σ Δa((q_k − m)² + (q_k − m)(q_k+1 − m) + (q_k+1 − m)²)/3 + tails, exactly."""
    a, q, _, b1, _, bn = reference._tail_parameters(levels, values)
    m = reference.quantile_mean(levels, values)
    v = a[0] * ((q[0] - b1 - m) ** 2 + b1**2) + (1 - a[-1]) * ((q[-1] + bn - m) ** 2 + bn**2)
    for k in range(len(a) - 1):
        x, y = q[k] - m, q[k + 1] - m
        v += (a[k + 1] - a[k]) * (x * x + x * y + y * y) / 3
    return v


def _q(rows):
    a = np.array([r[0] for r in rows], dtype=np.float64)
    q = np.array([r[1] for r in rows], dtype=np.float64)
    hi, lo, _ = quantile_mean(a, q, np.diff(a, axis=1), np.diff(q, axis=1))
    return a, q, hi, lo


def _relative(got, want: Fraction) -> float:
    return float(abs(Fraction(got) - want) / abs(want)) if want else abs(float(got))


CANCELLING = [
    # the issue's rows: two tail terms of 2.5e12 that cancel; ±1e100 with tails
    ([0.5, 0.5000000000001], [0.0, 1.0]),
    ([0.1, 0.9], [-1e100, 1e100]),
    ([0.25, 0.75], [-1.0, 1.0]),  # mean exactly 0
    ([0.05, 0.5, 0.95], [1e9, 1e9 + 1, 1e9 + 3]),
    ([1e-300, 0.5, 1 - 2**-53], [-1e100, 0.0, 1e-300]),
    ([0.3, 0.3 + 2**-54, 0.7], [-5.0, 2.0, 3.0]),
    ([2**-1074, 0.5], [-1e100, 1e100]),  # a subnormal level
    ([0.5, 0.5 + 2**-53], [0.0, 1e100]),  # b1, bN near 1e116
]


@pytest.mark.parametrize("levels, values", CANCELLING)
def test_quantile_mean_and_variance_are_exact_on_rows_that_cancel(levels, values):
    a, q, hi, lo = _q([(levels, values)])
    want = reference.quantile_mean(levels, values)
    assert _relative(hi[0], want) < 5e-10
    assert abs(Fraction(hi[0]) + Fraction(lo[0]) - want) <= abs(want) * Fraction(2) ** -31
    var = quantile_variance(a, q)
    assert _relative(var[0], _variance(levels, values)) < 1e-12


def test_the_issue_quantile_row_gives_its_exact_mean():
    """`0 0.5 0 0.5000000000001 1`: mean −0.49999999999995 (the old sum gave a mean
    2.5e12 off in its last bits, nmse 55.09 where 54.50 is exact)."""
    _, _, hi, _ = _q([([0.5, 0.5000000000001], [0.0, 1.0])])
    assert Fraction(hi[0]) == reference.quantile_mean([0.5, 0.5000000000001], [0.0, 1.0])


def test_random_quantile_rows_of_every_scale():
    rng = np.random.default_rng(27)
    rows = []
    for _ in range(400):
        n = int(rng.integers(2, 12))
        a = np.sort(rng.uniform(0, 1, n))
        q = np.cumsum(rng.exponential(1.0, n)) * 10.0 ** rng.integers(-5, 6)
        q += rng.normal() * 10.0 ** rng.integers(-3, 12)  # far from 0 or across it
        if len(set(a)) == n and (np.diff(q) > 0).all():
            rows.append((a.tolist(), q.tolist()))
    by_size = {}
    for r in rows:
        by_size.setdefault(len(r[0]), []).append(r)
    for group in by_size.values():
        a, q, hi, lo = _q(group)
        var = quantile_variance(a, q)
        for i, (levels, values) in enumerate(group):
            want = reference.quantile_mean(levels, values)
            assert _relative(hi[i], want) < 5e-10, (levels, values)
            assert _relative(var[i], _variance(levels, values)) < 1e-12


def test_a_near_infinite_upper_tail_gives_inf_never_nan():
    # ΔaN = 5e-324: bN ≈ 2e333, the mean and the variance beyond the largest double
    a, q, hi, lo = _q(
        [([2**-1074, 2**-1073], [0.0, 1e10]), ([2**-1074, 2**-1073], [-1e100, 1e100])]
    )
    assert (hi == np.inf).all() and (quantile_variance(a, q) == np.inf).all()
    # (1 − aN)/ΔaN = 1e310 is scaled in the exact path; bN = 2e300 stays finite
    a, q, hi, lo = _q([([0.5, 1 - 2**-53], [0.0, 1e-290]), ([1e-310, 2e-310], [-1e-10, 1e-10])])
    for i in range(2):
        assert _relative(hi[i], reference.quantile_mean(a[i], q[i])) < 5e-10
    assert not np.isnan(quantile_variance(a, q)).any()
    big = _q([([5e-324, 1e-300], [0.0, 1.0])])
    assert big[2][0] == pytest.approx(float(reference.quantile_mean([5e-324, 1e-300], [0.0, 1.0])))
    assert quantile_variance(big[0], big[1]) == np.inf


def test_identical_samples_average_exactly():
    """The issue's case: five copies of 999999999.7013268 (numpy's mean gives …7013267)."""
    s = np.full((1, 5), 999999999.7013268)
    hi, lo, _ = sample_mean(s)
    assert hi[0] == 999999999.7013268 and lo[0] == 0.0
    assert sample_variance(s)[0] == 0.0


def test_sample_means_and_variances_against_fractions():
    rng = np.random.default_rng(3290)
    cases = [
        [1e100, 1.0, -1e100, 3.0, 4.0],
        [1e-300, -1e100, 1e100, 0.0, 0.0],
        [0.1, 0.2, 0.3, -0.6, 0.0],
    ]
    for _ in range(200):
        centre = rng.normal() * 10.0 ** rng.integers(-5, 12)
        cases.append((centre + rng.normal(size=5) * 10.0 ** rng.integers(-8, 3)).tolist())
    s = np.sort(np.array(cases), axis=1)
    hi, lo, _ = sample_mean(s)
    var = sample_variance(s)
    for i, row in enumerate(s):
        exact = [Fraction(x) for x in row]
        m = sum(exact) / len(exact)
        assert _relative(hi[i], m) < 5e-10
        v = sum((x - m) ** 2 for x in exact) / len(exact)
        assert _relative(var[i], v) < 1e-12


def test_shifted_copies_of_a_row_get_the_same_variance():
    """§8's tie rule needs equal keys to compare equal: a row shifted by a constant its
    values carry exactly has the same variance, and so the very same double."""
    rng = np.random.default_rng(17)
    for _ in range(50):
        a = np.sort(rng.uniform(0, 1, (1, 6)), axis=1)
        q = np.round(np.sort(rng.normal(size=(1, 6)) * 100, axis=1), 6)
        shifted = q + 1.0
        if not (shifted - 1.0 == q).all():
            continue  # (the shift was not exact for these values)
        assert quantile_variance(a, q)[0] == quantile_variance(a, shifted)[0]
        s = np.sort(np.round(rng.normal(size=(1, 9)) * 10, 5), axis=1)
        if ((s + 16.0) - 16.0 == s).all():
            assert sample_variance(s)[0] == sample_variance(s + 16.0)[0]


@pytest.mark.parametrize("levels, values", CANCELLING)
def test_exact_quantile_variance_is_the_spec_formula(levels, values):
    assert moments.exact_quantile_variance(levels, values) == _variance(levels, values)


def test_exact_sample_variance_and_its_double_double_split():
    s = [1e100, -1e100, 3.0, 2**-1074]
    xs = [Fraction(x) for x in s]
    m = sum(xs) / 4
    want = sum((x - m) ** 2 for x in xs) / 4
    assert moments.exact_sample_variance(s) == want
    hi, lo = moments.split_exact(want)
    assert hi == float(want) and lo == float(want - Fraction(hi))
    assert moments.split_exact(Fraction(10**400)) == (np.inf, 0.0)


def test_ambiguous_marks_rows_whose_double_could_tie_or_misorder():
    v = np.array([1.0, 1.0 + 2**-40, 2.0, 1e200, 1e200, 5.0, np.inf, np.inf, 0.0])
    exact = np.array([False, False, False, False, True, True, False, False, False])
    got = moments.ambiguous(v, exact)
    # a pair 2**-40 apart, a row beside an exact Gaussian's value, two infinities
    assert got.tolist() == [True, True, False, True, False, False, True, True, False]
    assert not moments.ambiguous(np.array([3.0]), np.array([False])).any()
