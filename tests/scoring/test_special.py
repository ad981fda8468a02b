"""scoring.special: erf and erfc, checked against the C library (math) and scipy.

Every test runs twice: with the C extension (the C library's erf and erfc) and with
the numpy expansions that serve when the extension is not built.
"""

import math

import numpy as np
import pytest
from scipy import special as sp
from scipy import stats

from scoring import _accel
from scoring.special import erf, erfc, norm_cdf, norm_pdf


@pytest.fixture(autouse=True, params=["C library", "numpy expansions"])
def implementation(request, no_native):
    if request.param == "C library":
        assert _accel.native() is not None
        yield request.param
        return
    with no_native():
        yield request.param


def test_erf_matches_math_erf_to_a_few_ulps():
    rng = np.random.default_rng(11)
    x = np.r_[
        np.linspace(-7, 7, 4001),
        rng.uniform(-30, 30, 2000),
        np.geomspace(1e-300, 1.0, 301),
        -np.geomspace(1e-300, 1.0, 301),
        2.5,
        np.nextafter(2.5, 0),
        -2.5,
        np.nextafter(-2.5, 0),
    ]
    got = erf(x)
    want = np.array([math.erf(v) for v in x])
    # The series carries exp(-x²) and sums ~60 terms: ten-odd ulps near x = 2.2.
    assert np.all(np.abs(got - want) <= 16 * np.spacing(np.abs(want)) + 1e-300)


def test_erf_special_values_and_odd_symmetry():
    got = erf(np.array([0.0, -0.0, np.inf, -np.inf, 40.0, -40.0]))
    assert got.tolist() == [0.0, 0.0, 1.0, -1.0, 1.0, -1.0]
    assert math.copysign(1.0, got[1]) == -1.0  # erf(-0) = -0
    x = np.linspace(0, 6, 601)
    assert np.array_equal(erf(-x), -erf(x))
    assert erf(np.array(0.5)).shape == ()
    assert erf(np.zeros((2, 3))).shape == (2, 3)


def test_erfc_relative_accuracy_in_the_right_tail():
    # Where 1 - erf would cancel: erfc must keep its relative precision.
    x = np.linspace(2.5, 26.0, 4001)
    got = erfc(x)
    want = np.array([math.erfc(v) for v in x])
    assert want.min() > 1e-300
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)


def test_erfc_elsewhere():
    x = np.linspace(-8, 2.49, 3001)
    np.testing.assert_allclose(erfc(x), [math.erfc(v) for v in x], rtol=2e-12, atol=0)
    assert erfc(np.array([np.inf, -np.inf, 0.0])).tolist() == [0.0, 2.0, 1.0]


def test_erf_and_erfc_agree_with_scipy():
    rng = np.random.default_rng(12)
    x = rng.normal(0, 3, 5000)
    np.testing.assert_allclose(erf(x), sp.erf(x), rtol=1e-14, atol=1e-16)
    np.testing.assert_allclose(erfc(x), sp.erfc(x), rtol=2e-12, atol=0)


def test_normal_cdf_and_pdf():
    z = np.linspace(-37, 8, 2001)
    np.testing.assert_allclose(norm_cdf(z), stats.norm.cdf(z), rtol=1e-12, atol=0)
    np.testing.assert_allclose(norm_pdf(z), stats.norm.pdf(z), rtol=1e-14, atol=0)
    assert norm_cdf(np.array(0.0)) == 0.5
    assert norm_cdf(np.array(-37.0)) == pytest.approx(stats.norm.cdf(-37.0), rel=1e-12)


@pytest.mark.parametrize("x", [0.1, 1.0, 2.4999, 2.5, 3.0, 5.5])
def test_erf_plus_erfc_is_one(x):
    assert erf(np.array(x)) + erfc(np.array(x)) == pytest.approx(1.0, abs=2e-16)


def test_norm_ppf_is_the_normal_quantile_to_1e_15():
    """Wichura's AS241 against mpmath at 40 digits, from 1e-300 to 1 − 2**-53 (where
    1 − p is exact), and symmetric: Φ⁻¹(1 − p) = −Φ⁻¹(p) when 1 − p is a double."""
    import mpmath

    from scoring.special import norm_ppf

    mpmath.mp.dps = 40
    p = np.concatenate(
        [np.linspace(0.001, 0.999, 499), 10.0 ** -np.arange(1.0, 300.0, 3.7), [0.025, 0.975]]
    )
    p = np.concatenate([p, 1.0 - p[(p < 2**-10) & (p > 2**-50)], [1 - 2**-53]])
    z = norm_ppf(p)
    for pi, zi in zip(p, z, strict=True):
        if pi == 0.5:
            continue  # (checked below: exactly 0)
        level = mpmath.mpf(pi)
        want = mpmath.findroot(lambda x, a=level: mpmath.ncdf(x) - a, stats.norm.ppf(pi))
        assert abs((zi - want) / want) < 1e-15, pi
    assert norm_ppf(0.5) == 0.0
    assert norm_ppf(np.array([0.0, 1.0])).tolist() == [-np.inf, np.inf]
    q = np.array([0.1, 0.25, 0.01])
    assert (norm_ppf(1.0 - q) == -norm_ppf(q)).all()
