"""Per-example statistics (logpdf, mean, CRPS, PIT) of the three row types, spec §2-§3.

Hand-computed tables for the chapter's Fig. 4 example, and numerical integration
with scipy.integrate.quad of the implementation's own density and CDF on seeded
random quantile rows, tails included.
"""

import math

import numpy as np
import pytest
from properscoring import crps_ensemble, crps_gaussian
from scipy import integrate, stats

from scoring import gaussian_stats, quantile_stats, sample_stats

E = math.e

# The chapter's Fig. 4: q0.2 = -2, q0.3 = -1, q0.8 = 1, q0.9 = 3.
FIG4_A = [0.2, 0.3, 0.8, 0.9]
FIG4_Q = [-2.0, -1.0, 1.0, 3.0]
# z1 = 0.1/1 = 0.1, b1 = 0.2/0.1 = 2; zN = 0.1/2 = 0.05, bN = 0.1/0.05 = 2.
# Bin densities 0.1, 0.5/2 = 0.25, 0.1/2 = 0.05.
FIG4_TABLE = [
    # target, density, CDF
    (-6.0, 0.1 * E**-2, 0.2 * E**-2),
    (-4.0, 0.1 * E**-1, 0.2 * E**-1),
    (-2.0, 0.1, 0.2),  # on q1: the bin to its right (same density as the tail's edge)
    (-1.5, 0.1, 0.25),
    (-1.0, 0.25, 0.3),  # on q2: the bin to its right, 0.25 not 0.1
    (0.0, 0.25, 0.55),
    (1.0, 0.05, 0.8),  # on q3: 0.05 not 0.25
    (2.0, 0.05, 0.85),
    (3.0, 0.05, 0.9),  # on qN: the upper tail, zN
    (5.0, 0.05 * E**-1, 1 - 0.1 * E**-1),
    (9.0, 0.05 * E**-3, 1 - 0.1 * E**-3),
]


def fig4(targets):
    t = np.asarray(targets, dtype=float)
    return quantile_stats(np.tile(FIG4_A, (t.size, 1)), np.tile(FIG4_Q, (t.size, 1)), t)


@pytest.mark.parametrize("target, density, cdf", FIG4_TABLE)
def test_fig4_density_and_cdf_by_hand(target, density, cdf):
    s = fig4([target])
    assert s.logpdf[0] == pytest.approx(math.log(density), rel=1e-14)
    assert s.pit[0] == pytest.approx(cdf, rel=1e-14)


def test_fig4_mean_is_minus_a_quarter():
    s = fig4([0.0, 100.0, -100.0])
    # 0.05 from the bins, 0.2·(-2 - 2) = -0.8 and 0.1·(3 + 2) = 0.5 from the tails.
    assert s.mean.tolist() == pytest.approx([-0.25] * 3, abs=1e-15)
    # The chapter's printed tail terms, eqs. (8)-(9), would give -0.11 (spec §2).
    misprint = 0.05 + 0.2 * (-2 - 0.2**2 / 0.1) + 0.1 * (3 + 0.1**2 / 0.05)
    assert misprint == pytest.approx(-0.11)
    assert abs(s.mean[0] - misprint) > 0.1


# CRPS of Fig. 4 piece by piece: ∫F² = a1²b1/2 below q1, Δq(lo² + lo·hi + hi²)/3 on a
# linear piece, (1 - aN)²bN/2 above qN (and the same with 1 - F right of the target).
FIG4_CRPS = [
    (0.0, 0.04 + (0.19 + 0.5575 + 0.3325 + 0.14) / 3 + 0.01),
    (-1.0, 0.04 + 0.19 / 3 + 2 * (0.49 + 0.14 + 0.04) / 3 + 0.14 / 3 + 0.01),
    (
        2.0,
        0.04
        + 0.19 / 3
        + 2 * (0.09 + 0.24 + 0.64) / 3
        + (0.64 + 0.68 + 0.7225) / 3
        + (0.0225 + 0.015 + 0.01) / 3
        + 0.01,
    ),
    (
        -4.0,
        # below -4: ∫F² = 0.04·e⁻²; from -4 to -2: ∫(1 - F)² with F = 0.2·e^((y+2)/2).
        0.04 * E**-2
        + (2 - 0.8 * (1 - E**-1) + 0.04 * (1 - E**-2))
        + (1.69 + 2 * 0.67 + 0.14) / 3
        + 0.01,
    ),
    (
        5.0,
        0.04
        + (0.19 + 2 * (0.09 + 0.24 + 0.64) + 2 * (0.64 + 0.72 + 0.81)) / 3
        # from 3 to 5: ∫F² with F = 1 - 0.1·e^(-(y-3)/2); above 5: ∫(1 - F)² = 0.01·e⁻².
        + (2 - 0.4 * (1 - E**-1) + 0.01 * (1 - E**-2))
        + 0.01 * E**-2,
    ),
]


@pytest.mark.parametrize("target, crps", FIG4_CRPS)
def test_fig4_crps_by_hand(target, crps):
    assert fig4([target]).crps[0] == pytest.approx(crps, rel=1e-13)


def test_fig4_crps_at_zero_is_137_over_300():
    assert fig4([0.0]).crps[0] == pytest.approx(1.37 / 3, rel=1e-14)


# --- numerical integration of the implementation's own density --------------------------------


def _one(a, q, t):
    return quantile_stats(np.array([a]), np.array([q]), np.array([float(t)]))


def _density(a, q):
    return lambda y: math.exp(_one(a, q, y).logpdf[0])


def _cdf(a, q):
    return lambda y: _one(a, q, y).pit[0]


def _quad(f, points, lower=-np.inf, upper=np.inf):
    """∫ f from lower to upper, split at the sorted breakpoints, infinite ends included."""
    edges = [lower, *sorted({x for x in points if lower < x < upper}), upper]
    total = 0.0
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        if lo < hi:
            total += integrate.quad(f, lo, hi, epsabs=1e-13, epsrel=1e-12, limit=200)[0]
    return total


def random_quantile_rows(seed, count=8):
    rng = np.random.default_rng(seed)
    rows = []
    while len(rows) < count:
        n = int(rng.integers(2, 9))
        a = np.sort(rng.uniform(0.02, 0.98, n))
        q = np.sort(rng.normal(rng.normal(0, 5), rng.uniform(0.5, 4), n))
        if np.diff(a).min() > 1e-3 and np.diff(q).min() > 1e-3:
            rows.append((a.tolist(), q.tolist()))
    return rows


def targets_for(a, q, rng):
    """Both tails, far tails, on a quantile, between quantiles."""
    return [
        q[0] - 3 * rng.uniform(0.5, 2),
        q[0] - 0.01,
        q[0],
        q[len(q) // 2],
        0.5 * (q[0] + q[1]),
        rng.uniform(q[0], q[-1]),
        q[-1],
        q[-1] + 0.3,
        q[-1] + 10 * rng.uniform(0.5, 2),
    ]


@pytest.mark.parametrize("seed", range(4))
def test_quantile_density_integrates_to_one_and_gives_the_mean(seed):
    for a, q in random_quantile_rows(seed, 4):
        p = _density(a, q)
        assert _quad(p, q) == pytest.approx(1.0, abs=1e-9)
        mean = _quad(lambda y, p=p: y * p(y), q)
        assert _one(a, q, 0.0).mean[0] == pytest.approx(mean, rel=1e-8, abs=1e-9)
        # The density is continuous at q1 and qN (the tails start at the bins' density).
        for edge in (q[0], q[-1]):
            assert p(np.nextafter(edge, -np.inf)) == pytest.approx(p(edge), rel=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_quantile_cdf_and_crps_against_quad(seed):
    rng = np.random.default_rng(100 + seed)
    for a, q in random_quantile_rows(seed, 2):
        p, F = _density(a, q), _cdf(a, q)
        # The CDF passes through every (qk, ak).
        assert [F(v) for v in q] == pytest.approx(a, abs=1e-15)
        for t in targets_for(a, q, rng):
            s = _one(a, q, t)
            assert s.pit[0] == pytest.approx(_quad(p, q, upper=t), abs=1e-10)
            crps = _quad(lambda u, t=t, F=F: (F(u) - (u >= t)) ** 2, [*q, t])
            assert s.crps[0] == pytest.approx(crps, rel=1e-8, abs=1e-10), (a, q, t)


def test_quantile_density_matches_the_spec_formula_pointwise():
    rng = np.random.default_rng(7)
    for a, q in random_quantile_rows(7, 10):
        a_, q_ = np.array(a), np.array(q)
        z1 = (a_[1] - a_[0]) / (q_[1] - q_[0])
        zn = (a_[-1] - a_[-2]) / (q_[-1] - q_[-2])
        b1, bn = a_[0] / z1, (1 - a_[-1]) / zn
        y = rng.uniform(q_[0] - 5 * b1, q_[-1] + 5 * bn, 200)
        s = quantile_stats(np.tile(a_, (y.size, 1)), np.tile(q_, (y.size, 1)), y)
        for yi, lp, pit in zip(y, s.logpdf, s.pit, strict=True):
            if yi < q_[0]:
                want, cdf = z1 * math.exp(-(q_[0] - yi) / b1), a_[0] * math.exp(-(q_[0] - yi) / b1)
            elif yi >= q_[-1]:
                want = zn * math.exp(-(yi - q_[-1]) / bn)
                cdf = 1 - (1 - a_[-1]) * math.exp(-(yi - q_[-1]) / bn)
            else:
                k = int(np.searchsorted(q_, yi, side="right")) - 1
                want = (a_[k + 1] - a_[k]) / (q_[k + 1] - q_[k])
                cdf = a_[k] + (yi - q_[k]) * want
            assert lp == pytest.approx(math.log(want), rel=1e-12, abs=1e-12)
            assert pit == pytest.approx(cdf, rel=1e-12, abs=1e-15)


def test_quantile_mean_closed_form():
    for a, q in random_quantile_rows(8, 10):
        a_, q_ = np.array(a), np.array(q)
        z1 = (a_[1] - a_[0]) / (q_[1] - q_[0])
        zn = (a_[-1] - a_[-2]) / (q_[-1] - q_[-2])
        b1, bn = a_[0] / z1, (1 - a_[-1]) / zn
        want = (
            sum((q_[k] + q_[k + 1]) / 2 * (a_[k + 1] - a_[k]) for k in range(len(a) - 1))
            + a_[0] * (q_[0] - b1)
            + (1 - a_[-1]) * (q_[-1] + bn)
        )
        assert _one(a, q, 0.0).mean[0] == pytest.approx(want, rel=1e-12, abs=1e-12)


def test_quantile_rows_vectorised_equal_one_at_a_time():
    rng = np.random.default_rng(9)
    a = np.sort(rng.uniform(0.01, 0.99, (300, 6)), axis=1)
    q = np.sort(rng.normal(0, 2, (300, 6)), axis=1)
    t = np.r_[rng.normal(0, 4, 294), q[294:, 0], q[295:296, 3], q[296:, -1][:4]]
    t = t[:300]
    s = quantile_stats(a, q, t)
    for i in range(0, 300, 7):
        one = quantile_stats(a[i : i + 1], q[i : i + 1], t[i : i + 1])
        for name in ("logpdf", "mean", "crps", "pit"):
            assert getattr(s, name)[i] == pytest.approx(getattr(one, name)[0], rel=1e-13, abs=1e-15)


def test_far_tail_targets_give_large_finite_log_densities():
    # 1e4 scale lengths into a tail: exp() would underflow to 0 and log() give -inf.
    s = fig4([-2 - 2e4, 3 + 2e4])
    assert np.isfinite(s.logpdf).all()
    assert s.logpdf.tolist() == pytest.approx(
        [math.log(0.1) - 1e4, math.log(0.05) - 1e4], rel=1e-14
    )
    assert s.pit[0] == 0.0 and s.pit[1] == 1.0
    # CRPS in the far tail: the distance beyond the quantiles plus the bulk's part.
    assert np.isfinite(s.crps).all()
    assert s.crps[0] == pytest.approx(2e4 + fig4([-2.0]).crps[0] - 2 * 0.2 * 2, rel=1e-12)
    g = gaussian_stats([0.0], [1e-4], [1e3])
    assert np.isfinite(g.logpdf).all()
    assert g.logpdf[0] == pytest.approx(-0.5 * (math.log(2 * math.pi) + math.log(1e-4) + 1e10))


def test_bins_narrower_than_the_smallest_normal_double():
    # A valid row (values strictly increasing) whose density Δa/Δq exceeds the largest
    # double: the log density must still be finite, and CRPS and PIT numbers.
    # Regression test: it gave NLPD -inf, CRPS nan, and nan log densities (NLPD "n/a").
    a, q = [0.2, 0.8], [0.0, 1e-320]
    s = quantile_stats([a] * 4, [q] * 4, [0.0, 5e-321, 1e-300, -1e-300])
    assert s.logpdf[:2].tolist() == pytest.approx([math.log(0.6) - math.log(1e-320)] * 2, rel=1e-12)
    assert s.pit.tolist() == pytest.approx([0.2, 0.5, 1.0, 0.0], abs=1e-3)
    for name in ("logpdf", "mean", "crps", "pit"):
        assert np.isfinite(getattr(s, name)).all(), name
    assert s.crps[2] == pytest.approx(1e-300, rel=1e-12)  # a point mass at 0, seen from afar
    assert s.mean[0] == pytest.approx(0.0, abs=1e-319)
    inner = quantile_stats([[0.2, 0.5, 0.8]], [[0.0, 5e-324, 1.0]], [0.0])
    assert inner.logpdf[0] == pytest.approx(math.log(0.3) - math.log(5e-324), rel=1e-12)
    assert np.isfinite(inner.crps[0]) and inner.crps[0] == pytest.approx(0.43 / 3, rel=1e-12)


# --- Gaussian rows --------------------------------------------------------------------------


def test_gaussian_stats_against_scipy():
    rng = np.random.default_rng(20)
    m = rng.normal(0, 3, 500)
    v = rng.gamma(1.0, 2.0, 500) + 1e-3
    t = m + rng.normal(0, 1, 500) * np.sqrt(v) * rng.choice([0.1, 1, 5, 30], 500)
    s = gaussian_stats(m, v, t)
    sd = np.sqrt(v)
    np.testing.assert_allclose(s.logpdf, stats.norm.logpdf(t, m, sd), rtol=1e-12)
    np.testing.assert_allclose(s.pit, stats.norm.cdf(t, m, sd), rtol=1e-11, atol=1e-300)
    np.testing.assert_allclose(s.crps, crps_gaussian(t, m, sd), rtol=1e-12)
    assert np.array_equal(s.mean, m)


@pytest.mark.parametrize(
    "m, v, t", [(0.0, 1.0, 0.0), (1.0, 4.0, -2.5), (-3.0, 0.01, -2.9), (2.0, 9.0, 14.0)]
)
def test_gaussian_crps_against_quad(m, v, t):
    sd = math.sqrt(v)
    want = _quad(lambda u: (stats.norm.cdf(u, m, sd) - (u >= t)) ** 2, [m, t])
    assert gaussian_stats([m], [v], [t]).crps[0] == pytest.approx(want, rel=1e-9)


def test_gaussian_by_hand():
    s = gaussian_stats([1.0], [4.0], [1.0])
    # z = 0: CRPS = σ(2φ(0) - 1/√π) = 2(2/√(2π) - 1/√π)
    assert s.crps[0] == pytest.approx(
        2 * (2 / math.sqrt(2 * math.pi) - 1 / math.sqrt(math.pi)), rel=1e-15
    )
    assert s.logpdf[0] == pytest.approx(-0.5 * math.log(2 * math.pi * 4), rel=1e-15)
    assert s.pit[0] == 0.5


def test_point_predictions():
    s = gaussian_stats([1.0, 1.0, -2.0], [0.0, 0.0, 0.0], [3.5, 1.0, -2.25])
    assert s.logpdf.tolist() == [-np.inf] * 3
    assert s.crps.tolist() == [2.5, 0.0, 0.25]
    assert s.mean.tolist() == [1.0, 1.0, -2.0]
    assert s.pit.tolist() == [1.0, 1.0, 0.0]
    # The limit of a shrinking Gaussian's CRPS is |t - m|.
    assert gaussian_stats([1.0], [1e-20], [3.5]).crps[0] == pytest.approx(2.5, rel=1e-9)


# --- sample rows ----------------------------------------------------------------------------


def _empirical_crps(s, t):
    """∫ (F(u) - 1{u >= t})² du for the empirical CDF, exactly: F is a step function."""
    s = np.sort(s)
    k = s.size
    points = np.sort(np.r_[s, t])
    total = 0.0
    for lo, hi in zip(points[:-1], points[1:], strict=True):
        f = np.count_nonzero(s <= lo) / k
        total += (hi - lo) * (f - (lo >= t)) ** 2
    return total


def test_sample_crps_by_hand():
    s = sample_stats(np.array([[1.0, 3.0]]), np.array([2.0]))
    # (1/2)(1 + 1) - (1/8)(2 + 2) = 0.5
    assert s.crps[0] == pytest.approx(0.5, rel=1e-15)
    assert s.mean[0] == 2.0
    # t is between the members: verification rank 1 of {0, 1, 2}, PIT uniform on [1/3, 2/3]
    assert (s.pit_low[0], s.pit[0]) == (1 / 3, 2 / 3)
    assert np.isnan(s.logpdf[0])
    one = sample_stats(np.array([[4.0]]), np.array([1.5]))
    assert one.crps[0] == 2.5  # one value: a point prediction


def test_sample_crps_against_definition_and_properscoring():
    rng = np.random.default_rng(30)
    for k in (1, 2, 3, 10, 57, 1000):
        n = 40 if k < 100 else 8
        s = rng.normal(0, 2, (n, k))
        s[:5] = np.round(s[:5])  # ties
        t = rng.normal(0, 3, n)
        t[5] = s[5, 0]  # a target on a sample value
        got = sample_stats(s, t)
        pair = np.abs(s[:, :, None] - s[:, None, :]).sum(axis=(1, 2))
        want = np.abs(s - t[:, None]).mean(axis=1) - pair / (2 * k * k)
        np.testing.assert_allclose(got.crps, want, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(got.crps, crps_ensemble(t, s), rtol=1e-12, atol=1e-14)
        if k <= 10:
            exact = [_empirical_crps(s[i], t[i]) for i in range(n)]
            np.testing.assert_allclose(got.crps, exact, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(got.mean, s.mean(axis=1), rtol=1e-14, atol=1e-15)
