"""scoring.row_quantiles: every row type read at quantile levels and its CDF, against
fractions.Fraction (linear pieces, samples) and mpmath at 40 digits (Φ⁻¹, the tails' logs)."""

import warnings
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from scipy import stats

from scoring.row_quantiles import (
    gaussian_cdf,
    gaussian_quantiles,
    quantile_row_cdf,
    quantile_row_quantiles,
    sample_cdf,
    sample_quantiles,
)

from . import reference

mpmath.mp.dps = 40
LEVELS = np.array([1e-300, 1e-10, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 1 - 2**-53])


def _close(got, want, rel=1e-12) -> bool:
    want = mpmath.mpf(want) if not isinstance(want, mpmath.mpf) else want
    if want == 0:
        return got == 0
    return abs((mpmath.mpf(float(got)) - want) / want) < rel


def _exact_quantile(levels, values, alpha) -> mpmath.mpf:
    """§2's CDF inverted from its definition (Fractions, mpmath's log in the tails)."""
    a, q, _, b1, _, bn = reference._tail_parameters(levels, values)
    al = Fraction(alpha)
    if al < a[0]:
        return mpmath.mpf(q[0]) + mpmath.mpf(b1) * mpmath.log(mpmath.mpf(al / a[0]))
    if al >= a[-1]:
        ratio = (1 - a[-1]) / (1 - al)
        return mpmath.mpf(q[-1]) + mpmath.mpf(bn) * mpmath.log(mpmath.mpf(ratio))
    k = max(i for i in range(len(a)) if a[i] <= al)
    piece = q[k] + (al - a[k]) * (q[k + 1] - q[k]) / (a[k + 1] - a[k])
    return mpmath.mpf(piece.numerator) / piece.denominator


def test_gaussian_quantiles_are_m_plus_sigma_times_the_normal_quantile():
    m = np.array([0.0, 3.0, -1e100, 1e9, 2.5])
    v = np.array([1.0, 1e-200, 1e200, 4.0, 0.0])
    got = gaussian_quantiles(m, v, LEVELS)
    for i in range(m.size):
        for j, alpha in enumerate(LEVELS):
            if v[i] == 0:
                assert got[i, j] == m[i]  # a point prediction
                continue
            a = mpmath.mpf(alpha)
            z = mpmath.findroot(lambda x, a=a: mpmath.ncdf(x) - a, stats.norm.ppf(alpha))
            want = mpmath.mpf(m[i]) + mpmath.sqrt(mpmath.mpf(v[i])) * z
            assert _close(got[i, j], want, 1e-14), (i, alpha)


def test_gaussian_quantile_near_zero_keeps_its_digits():
    """m + σz with m ≈ −σz: the sum is taken in double-double, so only Φ⁻¹'s own error
    (below 1e-15 of z) remains, not a rounding of m + σz at m's scale."""
    m = np.array([-1.6448536, -1e6 * 1.6448536269514722])
    v = np.array([1.0, 1e12])
    got = gaussian_quantiles(m, v, np.array([0.95]))[:, 0]
    z = mpmath.sqrt(2) * mpmath.erfinv(2 * mpmath.mpf(0.95) - 1)
    for i in range(2):
        want = mpmath.mpf(m[i]) + mpmath.sqrt(v[i]) * z
        assert abs(mpmath.mpf(got[i]) - want) < 1e-15 * abs(mpmath.sqrt(v[i]) * z)


QUANTILE_ROWS = [
    ([0.2, 0.3, 0.8, 0.9], [-2.0, -1.0, 1.0, 3.0]),
    ([0.05, 0.25, 0.5, 0.75, 0.95], [-1e100, -1.0, 0.0, 1e-300, 1e100]),
    ([0.5, 0.5000000000001], [0.0, 1.0]),
    ([1e-300, 0.5, 1 - 2**-53], [1e9, 1e9 + 1, 1e9 + 2]),
]


@pytest.mark.parametrize("levels, values", QUANTILE_ROWS)
def test_quantile_rows_read_at_levels_invert_the_spec_cdf(levels, values):
    a, q = np.array([levels]), np.array([values])
    alphas = np.unique(np.concatenate([LEVELS, levels]))  # the levels themselves too
    got = quantile_row_quantiles(a, q, alphas)[0]
    for j, alpha in enumerate(alphas):
        assert _close(got[j], _exact_quantile(levels, values, alpha), 1e-12), alpha
        if alpha in levels:
            assert got[j] == values[levels.index(alpha)]  # a_k gives q_k exactly


def test_sample_quantiles_are_numpys_linear_interpolation_exactly():
    """At numpy's virtual index fl((K − 1)α); the interpolation itself exact."""
    rng = np.random.default_rng(8)
    s = np.sort(np.r_[rng.normal(size=(30, 7)) * 1e3 - 1e3 * rng.uniform(size=(30, 1))], axis=1)
    s = np.vstack([s, np.full((1, 7), 999999999.7013268)])
    got = sample_quantiles(s, LEVELS)
    assert np.allclose(got, np.quantile(s, LEVELS, axis=1).T, rtol=1e-14, atol=0)
    for i in range(s.shape[0]):
        for j, alpha in enumerate(LEVELS):
            h = Fraction(6 * float(alpha))  # numpy's virtual index, a double
            lo = int(h)
            lo = min(lo, 5)
            want = Fraction(s[i, lo]) + (h - lo) * (Fraction(s[i, lo + 1]) - Fraction(s[i, lo]))
            assert (
                got[i, j] == float(want)
                or abs(Fraction(got[i, j]) - want) <= abs(want) * Fraction(2) ** -52
            )
    single = sample_quantiles(np.array([[4.0]]), LEVELS)
    assert (single == 4.0).all()


def test_cdfs_of_every_row_type():
    m, v = np.array([0.0, 1.0, 5.0]), np.array([1.0, 4.0, 0.0])
    x = np.array([1.0, -30.0, 5.0])
    got = gaussian_cdf(m, v, x)
    assert _close(got[0], mpmath.ncdf(1.0), 1e-14)
    assert _close(got[1], mpmath.ncdf(-15.5), 1e-12)
    assert got[2] == 1.0 and gaussian_cdf(m[2:], v[2:], np.array([4.999]))[0] == 0.0
    s = np.array([[1.0, 2.0, 2.0, 3.0]])
    assert sample_cdf(np.repeat(s, 4, axis=0), np.array([0.5, 1.0, 2.0, 3.0])).tolist() == [
        0.0,
        0.25,
        0.75,
        1.0,
    ]
    levels, values = [0.2, 0.3, 0.8, 0.9], [-2.0, -1.0, 1.0, 3.0]
    points = np.array([-1e3, -2.0, -1.5, -1.0, 0.0, 3.0, 50.0])
    a, q = np.repeat([levels], points.size, axis=0), np.repeat([values], points.size, axis=0)
    got = quantile_row_cdf(a, q, points)
    for i, t in enumerate(points):
        want = (
            reference.quantile_cdf(levels, values, t)
            if hasattr(reference, "quantile_cdf")
            else _exact_cdf(levels, values, t)
        )
        # (far in a tail the exponent r = (q1 − t)/b1 comes from logs: about |r|·ε)
        assert _close(got[i], want, 1e-12), t


def _exact_cdf(levels, values, t):
    a, q, _, b1, _, bn = reference._tail_parameters(levels, values)
    t = Fraction(t)
    if t < q[0]:
        return mpmath.mpf(a[0]) * mpmath.exp(-mpmath.mpf(q[0] - t) / mpmath.mpf(b1))
    if t >= q[-1]:
        return 1 - mpmath.mpf(1 - a[-1]) * mpmath.exp(-mpmath.mpf(t - q[-1]) / mpmath.mpf(bn))
    k = max(i for i in range(len(q)) if q[i] <= t)
    f = a[k] + (t - q[k]) * (a[k + 1] - a[k]) / (q[k + 1] - q[k])
    return mpmath.mpf(f.numerator) / f.denominator


def test_a_tail_near_the_largest_double_is_finite_without_warnings():
    """aN ≈ 3e-210 makes bN ≈ 2e303: the readings are finite (≈ 1e303), those past the
    largest double +inf, never NaN, and no numpy warning."""
    levels = [1.5291440615775928e-282, 1.0548400215451085e-210, 2.9708949439426278e-210]
    values = [-8.841468999147238e96, 8.885833014420837e97, 8.886237510934287e97]
    alphas = np.array([0.38, 0.5, 0.62])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = quantile_row_quantiles(np.array([levels]), np.array([values]), alphas)[0]
        far = quantile_row_quantiles(np.array([levels]), np.array([values[:2] + [1e100]]), alphas)[
            0
        ]
    for g, alpha in zip(got, alphas, strict=True):
        assert _close(g, _exact_quantile(levels, values, float(alpha)), rel=1e-12)
    assert (far == np.inf).all()
