"""Per-example statistics of the three regression row types, vectorised.

Every regression loss is built from four numbers per example, computed here
in closed form (no numerical integration, no sampling):

- ``logpdf``: natural log of the predictive density at the target,
- ``mean``: the mean of the predictive distribution,
- ``crps``: ∫ (F(u) − 1{u ≥ t})² du,
- ``pit``: F(t), the probability integral transform, with ``pit_low`` = F(t−) where
  the row is discrete (:class:`Stats`): a point prediction's atom, a sample's
  verification rank (:func:`sample_stats`).

The quantile distribution is spec §2: uniform density between quantiles,
exponential tails carrying the rest of the mass (Quiñonero-Candela et al.,
"Evaluating Predictive Uncertainty Challenge", 2006, eqs. 4-10, with the
tail terms of eqs. 8-9 corrected).

Every formula holds for any valid row (values within ±1e100, variances within
[0, 1e200], widths down to 5e-324) without overflow, cancellation or NaN (spec §3):
tail scales and log-densities are taken in log space, and every CRPS is a sum of
non-negative pieces. A statistic is ±inf only where its exact value is beyond the
largest double (the CRPS of a tail scale of 1e400, the NLPD of a subnormal variance
far from its target); those overflows are expected and silent.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .moments import quantile_mean, sample_mean
from .special import erf, norm_cdf

_LOG_2PI = float(np.log(2.0 * np.pi))
_INV_SQRT_PI = float(1.0 / np.sqrt(np.pi))


@dataclass
class Stats:
    """Per-example statistics for a set of rows (arrays of equal length).

    The PIT is an interval [``pit_low``, ``pit``] on which it is uniform: the
    non-randomised PIT of Czado, Gneiting & Held (2009, Biometrics 65, "Predictive model
    assessment for count data"), [F(t−), F(t)], a single value F(t) for a continuous
    distribution; a sample row's is that of its verification rank (:func:`sample_stats`).
    ``pit_low`` None means equal to ``pit`` (every row continuous).
    """

    logpdf: np.ndarray
    mean: np.ndarray
    crps: np.ndarray
    pit: np.ndarray  # the PIT interval's upper end: F(t)
    mean_lo: np.ndarray | None = None  # mean + mean_lo: the exact mean (scoring.moments)
    mean_err: np.ndarray | None = None  # a bound on |mean + mean_lo − exact mean| (None: 0)
    pit_low: np.ndarray | None = None  # its lower end F(t−) (None: equal to pit)

    def pit_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(F(t−), F(t)) per example: the interval the non-randomised PIT is uniform on."""
        return (self.pit if self.pit_low is None else self.pit_low), self.pit

    def take(self, index) -> Stats:
        """The statistics of the examples at ``index`` (a boolean mask or positions)."""

        def pick(values):
            return None if values is None else values[index]

        return Stats(
            self.logpdf[index],
            self.mean[index],
            self.crps[index],
            self.pit[index],
            pick(self.mean_lo),
            pick(self.mean_err),
            pick(self.pit_low),
        )


def gaussian_stats(mean, variance, target) -> Stats:
    """Gaussian rows ``1 m v``; v = 0 is a point prediction (density +inf nowhere but at m).

    CRPS: σ[z(2Φ(z) − 1) + 2φ(z) − 1/√π], z = (t − m)/σ (Gneiting & Raftery 2007);
    a point prediction scores |t − m|, the limit as σ → 0 (σ·z·erf(z/√2) → |t − m|).
    log p(t) = −½(log 2π + log v + z²).

    With σ ≥ √5e-324 ≈ 2.2e-162 and |t − m| ≤ 2e100, z stays finite; ½z² may not, and
    then the density is 0 in double precision (−log p beyond the largest double).

    PIT: Φ(z); a point prediction is a distribution with one atom, at m, whose PIT
    interval [F(t−), F(t)] = [1{t > m}, 1{t ≥ m}] (Czado et al. 2009): 0 or 1 off the
    mark, and uniform on [0, 1] for t = m, as a calibrated point forecast of an outcome
    it always hits would be.
    """
    m = np.asarray(mean, dtype=np.float64)
    v = np.asarray(variance, dtype=np.float64)
    t = np.asarray(target, dtype=np.float64)
    point = v == 0
    v = np.where(point, 1.0, v)
    sigma = np.sqrt(v)
    z = (t - m) / sigma
    with np.errstate(over="ignore"):
        half_z2 = (0.5 * z) * z  # (z² itself overflows from z = 1.3e154, ½z² only at 1.9e154)
    logpdf = np.where(point, -np.inf, -(0.5 * (_LOG_2PI + np.log(v)) + half_z2))
    pdf_term = 2.0 * np.exp(-half_z2) / np.sqrt(2.0 * np.pi)
    crps = sigma * (z * erf(z / np.sqrt(2.0)) + pdf_term - _INV_SQRT_PI)
    crps = np.where(point, np.abs(t - m), crps)
    pit = np.where(point, (t >= m).astype(np.float64), norm_cdf(z))
    pit_low = np.where(point, (t > m).astype(np.float64), pit) if point.any() else None
    return Stats(logpdf, m.copy(), crps, pit, pit_low=pit_low)


def quantile_stats(levels, values, target) -> Stats:
    """Quantile rows ``0 a1 q1 … aN qN`` as 2-D arrays (rows × N), spec §2.

    Between q_k and q_{k+1} the CDF is linear; below q1 it is a1·exp(−(q1 − y)/b1),
    above qN it is 1 − (1 − aN)·exp(−(y − qN)/bN), with b1 = a1/z1, bN = (1 − aN)/zN
    and z1, zN the densities of the first and last bins. A target exactly on q_k
    falls in the bin to its right.
    """
    a = np.ascontiguousarray(levels, dtype=np.float64)
    q = np.ascontiguousarray(values, dtype=np.float64)
    return quantile_stats_from_diffs(a, q, np.diff(a, axis=1), np.diff(q, axis=1), target)


def quantile_stats_from_diffs(a, q, da, dq, target) -> Stats:
    """:func:`quantile_stats` with the bin widths ``da``, ``dq`` the validator already has.

    With r = (q1 − t)/b1 below q1 and x = (t − qN)/bN above qN:

    - log p(t) = log z1 − r, log z_k = log Δa_k − log Δq_k, log zN − x;
    - F(t) = a1·e^(−r), a_k + (t − q_k)·z_k, 1 − (1 − aN)·e^(−x);
    - mean = Σ_k (q_k + q_k+1)/2·Δa_k + a1(q1 − b1) + (1 − aN)(qN + bN), exact in
      double-double (:func:`scoring.moments.quantile_mean`);
    - CRPS = Σ over the bins of Δq·(g0² + g0·g1 + g1²)/3, g = F − 1{u ≥ t} at the
      bin's ends (F linear; the bin holding t split at t), plus the tails
      ½a1²b1 + (q1 − t)(1 − 2a1·φ(r)) and ½(1 − aN)²bN + (t − qN)(1 − 2(1 − aN)·φ(x)),
      the second terms only for a target in that tail, φ(r) = (1 − e^(−r))/r.

    b1 = a1·Δq/Δa ranges from below 5e-324 to 2e116 and bN up to 1e400, so the scales
    and r, x are taken in log space; φ(r)·(q1 − t) replaces b1·(1 − e^(−r)), which
    is inf·0 for an infinite bN. Every bin term is a sum of non-negative products
    (1 − F is computed from the right end of its bin), so nothing cancels.
    """
    t = np.asarray(target, dtype=np.float64)
    n_rows, n = a.shape
    rows = np.arange(n_rows)
    a1, an = a[:, 0], a[:, -1]
    q1, qn = q[:, 0], q[:, -1]
    c = 1.0 - an
    log_z1 = np.log(da[:, 0]) - np.log(dq[:, 0])
    log_zn = np.log(da[:, -1]) - np.log(dq[:, -1])
    log_b1 = np.log(a1) - log_z1
    log_bn = np.log(c) - log_zn
    with np.errstate(over="ignore"):
        b1 = np.exp(log_b1)  # at most 2**53·2e100
        bn = np.exp(log_bn)  # inf when the exact scale is beyond the largest double

    k = np.count_nonzero(q <= t[:, None], axis=1)  # targets on q_k take the right bin
    lower, upper = k == 0, k == n
    inside = ~lower & ~upper
    r = _scale_lengths(q1 - t, lower, log_b1)
    x = _scale_lengths(t - qn, upper, log_bn)

    j = np.clip(k - 1, 0, n - 2)  # the bin holding t, when 1 <= k <= n-1
    a_j, a_next = a[rows, j], a[rows, j + 1]
    q_j, q_next = q[rows, j], q[rows, j + 1]
    da_j, dq_j = a_next - a_j, q_next - q_j
    tc = np.clip(t, q_j, q_next)  # (t itself for the rows it matters to)
    f = a_j + (tc - q_j) / dq_j * da_j  # F(t), from the left end of the bin
    g = (1.0 - a_next) + (q_next - tc) / dq_j * da_j  # 1 − F(t), from the right end

    logpdf = np.where(lower, log_z1 - r, np.where(upper, log_zn - x, np.log(da_j) - np.log(dq_j)))
    pit = np.where(lower, a1 * np.exp(-r), np.where(upper, 1.0 - c * np.exp(-x), f))
    mean, mean_lo, mean_err = quantile_mean(a, q, da, dq)  # (scoring.moments)

    # Bins wholly right of t contribute ∫(1 − F)², with 1 − F at the ends in place of F.
    right = np.arange(n - 1) >= k[:, None]
    lo = np.abs(np.subtract(right, a[:, :-1]))
    hi = np.abs(np.subtract(right, a[:, 1:]))
    terms = lo + hi
    terms *= lo
    hi *= hi
    terms += hi  # lo² + lo·hi + hi²
    terms[rows[inside], j[inside]] = 0.0  # the bin holding t is split below
    c_next = 1.0 - a_next
    split = (tc - q_j) * (a_j * a_j + a_j * f + f * f) + (q_next - tc) * (
        g * g + g * c_next + c_next * c_next
    )
    middle = (np.einsum("ij,ij->i", dq, terms) + np.where(inside, split, 0.0)) / 3.0
    tail_low = 0.5 * a1 * a1 * b1 + np.where(lower, (q1 - t) * (1.0 - 2.0 * a1 * _phi(r)), 0.0)
    with np.errstate(over="ignore"):
        tail_up = 0.5 * c * c * bn
        # bN beyond the largest double (a near-zero last density) while ½(1 − aN)²bN is
        # not: that product in log space (only there, so that no other value moves).
        wide = np.isinf(tail_up)
        if wide.any():
            tail_up[wide] = np.exp(np.log(0.5) + 2.0 * np.log(c[wide]) + log_bn[wide])
    tail_up = tail_up + np.where(upper, (t - qn) * (1.0 - 2.0 * c * _phi(x)), 0.0)
    crps = middle + tail_low + tail_up
    return Stats(logpdf, mean, crps, pit, mean_lo, mean_err)


def _scale_lengths(distance, mask, log_scale) -> np.ndarray:
    """distance/scale where ``mask`` (0 elsewhere), from log(scale): no under- or overflow
    of the scale itself; inf only when the exact ratio is beyond the largest double."""
    d = np.where(mask, distance, 0.0)
    positive = d > 0
    log_ratio = np.log(np.where(positive, d, 1.0)) - log_scale
    with np.errstate(over="ignore"):
        return np.where(positive, np.exp(log_ratio), 0.0)


def _phi(r) -> np.ndarray:
    """(1 − e^(−r))/r, with φ(0) = 1 and φ(inf) = 0; expm1 keeps small r exact."""
    small = r == 0
    safe = np.where(small, 1.0, r)
    return np.where(small, 1.0, -np.expm1(-safe) / safe)


def sample_stats(samples, target, *, presorted: bool = False) -> Stats:
    """Sample rows ``2 s1 … sK`` (rows × K): the empirical distribution of the sample.

    CRPS = (1/K)Σ|s_k − t| − (1/2K²)ΣΣ|s_j − s_k| (Gneiting & Raftery 2007, eq. 21),
    computed as the integral it equals, with no difference of large sums: on the
    gap between the sorted s_(i) and s_(i+1) the CDF is i/K, so

        CRPS = (1/K²) Σ_i [L_i·i² + R_i·(K − i)²] + max(s_(1) − t, 0) + max(t − s_(K), 0)

    where L_i and R_i are the parts of gap i left and right of t. (Its pair term
    alone would be (1/K²)·Σ_i i(K − i)(s_(i+1) − s_(i)).) The density is not defined
    (``logpdf`` is nan: NLPD is n/a). The mean is exact (:func:`scoring.moments.sample_mean`).
    ``presorted``: the rows are sorted already.

    PIT: the non-randomised PIT (Czado, Gneiting & Held 2009) of the verification rank
    (Anderson 1996, J. Climate 9; Hamill 2001, Mon. Wea. Rev. 129), uniform on

        [below/(K + 1), (at_or_below + 1)/(K + 1)],  below = #{s < t}, at_or_below = #{s ≤ t}.

    A sample is judged as a draw from the forecast: when the forecast is calibrated the
    outcome and the K members are exchangeable, so the outcome's rank among the K + 1
    values (ties broken at random) is uniform on {0, …, K}, and the non-randomised PIT
    of that rank, [r/(K + 1), (r + 1)/(K + 1)], mixed over the tied ranks r = below, …,
    at_or_below, is the interval above: uniform on [0, 1] for a calibrated ensemble,
    with or without ties (integer counts). [F(t−), F(t)] of the empirical CDF instead is
    the single point j/K for a continuous outcome (no member equals it): its histogram
    has K + 1 spikes and no flat part, and the 1/(K+1) chance of falling below every
    member lands on PIT 0 of width 0, so a calibrated ensemble fails the uniformity test
    (issue 28: p = 1e-144 at K = 10, n = 20,000). A sample of equal values is not made a
    point prediction here: its members are still exchangeable with a calibrated outcome
    (Poisson ensembles of a small mean are often all 0), and the rank interval
    [K·1{t > m}/(K + 1), (K·1{t ≥ m} + 1)/(K + 1)] keeps them calibrated.
    """
    s = np.asarray(samples, dtype=np.float64)
    s = s if presorted else np.sort(s, axis=1)
    t = np.asarray(target, dtype=np.float64)
    k = s.shape[1]
    lo, hi = s[:, :-1], s[:, 1:]
    cut = np.clip(t[:, None], lo, hi)  # where t splits each gap
    i = np.arange(1.0, k)
    crps = ((cut - lo) * (i * i)).sum(axis=1) + ((hi - cut) * ((k - i) * (k - i))).sum(axis=1)
    crps /= k * k
    crps += np.maximum(s[:, 0] - t, 0.0) + np.maximum(t - s[:, -1], 0.0)
    # (sorted rows: the counts are two binary searches' worth, but a count over K ≤ 1000
    # columns is as quick as a per-row searchsorted in numpy)
    below = np.count_nonzero(s < t[:, None], axis=1)
    at_or_below = np.count_nonzero(s <= t[:, None], axis=1)
    pit = (at_or_below + 1.0) / (k + 1.0)
    pit_low = below / (k + 1.0)
    mean, mean_lo, mean_err = sample_mean(s)
    return Stats(np.full(t.shape, np.nan), mean, crps, pit, mean_lo, mean_err, pit_low)
