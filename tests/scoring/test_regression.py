"""scoring.regression: nlpd, nmse and crps from per-example statistics (spec §3)."""

import math

import numpy as np
import pytest

from scoring import gaussian_stats
from scoring.regression import crps, nlpd, nlpd_terms, nmse

from .util import arr


def test_nlpd_by_hand_for_gaussians():
    # t = m: -log N(0; 0, v) = ½ log(2πv); t = m + 2σ adds ½·4.
    s = gaussian_stats(arr(0.0, 1.0), arr(1.0, 4.0), arr(0.0, 5.0))
    want = (0.5 * math.log(2 * math.pi) + 0.5 * math.log(2 * math.pi * 4) + 2) / 2
    assert nlpd(s.logpdf) == pytest.approx(want, rel=1e-15)
    assert nlpd(s.logpdf, base=10) == pytest.approx(want / math.log(10), rel=1e-15)
    assert nlpd(s.logpdf, base=2) == pytest.approx(want / math.log(2), rel=1e-15)


def test_nlpd_infinite_for_a_zero_density_and_none_for_samples():
    assert nlpd(arr(-1.0, -np.inf, -2.0)) == math.inf
    assert nlpd(arr(-1.0, np.nan, -2.0)) is None
    assert nlpd(arr(-1.0, np.nan, -np.inf)) is None  # any sample row: n/a
    assert nlpd(arr(-1e6, -3e6)) == 2e6  # large, finite


def test_nlpd_of_a_positive_density_whose_log_overflows_needs_the_rows():
    # −ln p of row 1 is 2e308 − 344 (logpdf −inf), of row 2 ½ln(2π): the mean is 1e308.
    m, v, t = arr(0.0, 0.0), arr(1e-300, 1.0), arr(2e4, 0.0)
    s = gaussian_stats(m, v, t)
    assert s.logpdf[0] == -np.inf
    assert nlpd(s.logpdf) == math.inf  # without the rows: zero density assumed
    got = nlpd(s.logpdf, targets=t, mean=s.mean, variance=v)
    assert got == pytest.approx(1e308, rel=1e-14)  # (the log terms are below an ulp)
    assert nlpd(s.logpdf, base=2, targets=t, mean=s.mean, variance=v) == pytest.approx(
        got / math.log(2), rel=1e-14
    )
    assert nlpd_terms(s.logpdf)[0] == math.inf  # the term itself exceeds the largest double
    # A zero-variance row (density 0 at its target) keeps the loss infinite; so does a
    # −inf with no variance (nan: not a Gaussian row).
    both = np.append(s.logpdf, -np.inf)
    t3, m3 = arr(2e4, 0.0, 1.0), arr(0.0, 0.0, 0.0)
    assert nlpd(both, targets=t3, mean=m3, variance=arr(1e-300, 1.0, 0.0)) == math.inf
    assert nlpd(both, targets=t3, mean=m3, variance=arr(1e-300, 1.0, np.nan)) == math.inf


def test_nmse_by_hand():
    t = arr(1.0, 2.0, 3.0, 6.0)  # mean 3, var (ddof 0) = (4 + 1 + 0 + 9)/4 = 3.5
    m = arr(1.5, 2.0, 2.0, 5.0)  # squared errors 0.25, 0, 1, 1
    assert nmse(m, t) == pytest.approx(2.25 / 4 / 3.5, rel=1e-15)
    assert nmse(np.full(4, 3.0), t) == pytest.approx(1.0, rel=1e-15)  # predicting the mean
    assert nmse(m, t, variance=2.0) == pytest.approx(2.25 / 4 / 2.0, rel=1e-15)
    assert nmse(t, t) == 0.0


def test_nmse_uses_population_variance():
    rng = np.random.default_rng(80)
    t = rng.normal(3, 2, 7)
    m = rng.normal(3, 2, 7)
    want = np.sum((t - m) ** 2) / (7 * np.var(t, ddof=0))
    assert nmse(m, t) == pytest.approx(want, rel=1e-14)
    assert nmse(m, t) != pytest.approx(np.sum((t - m) ** 2) / (7 * np.var(t, ddof=1)), rel=1e-6)


def test_nmse_not_available_when_the_variance_is_zero():
    assert nmse(arr(1.0, 2.0), arr(5.0, 5.0)) is None
    assert nmse(arr(1.0, 2.0), arr(5.0, 6.0), variance=0.0) is None
    assert nmse(arr(1.0), arr(5.0)) is None


def test_crps_is_the_mean():
    assert crps(arr(0.5, 1.5, 4.0)) == 2.0
    assert isinstance(crps(arr(1.0)), float)
