"""Per-example statistics of the three regression row types, vectorised.

Every regression loss is built from four numbers per example, computed here
in closed form (no numerical integration, no sampling):

- ``logpdf``: natural log of the predictive density at the target,
- ``mean``: the mean of the predictive distribution,
- ``crps``: ∫ (F(u) − 1{u ≥ t})² du,
- ``pit``: F(t), the probability integral transform.

The quantile distribution is spec §2: uniform density between quantiles,
exponential tails carrying the rest of the mass (Quiñonero-Candela et al.,
"Evaluating Predictive Uncertainty Challenge", 2006, eqs. 4-10, with the
tail terms of eqs. 8-9 corrected).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .special import erf, norm_cdf

_LOG_2PI = float(np.log(2.0 * np.pi))
_INV_SQRT_PI = float(1.0 / np.sqrt(np.pi))


@dataclass
class Stats:
    """Per-example statistics for a set of rows (arrays of equal length)."""

    logpdf: np.ndarray
    mean: np.ndarray
    crps: np.ndarray
    pit: np.ndarray


def gaussian_stats(mean, variance, target) -> Stats:
    """Gaussian rows ``1 m v``; v = 0 is a point prediction (density +inf nowhere but at m).

    CRPS: σ[z(2Φ(z) − 1) + 2φ(z) − 1/√π], z = (t − m)/σ (Gneiting & Raftery 2007);
    a point prediction scores |t − m|.
    """
    m = np.asarray(mean, dtype=np.float64)
    v = np.asarray(variance, dtype=np.float64)
    t = np.asarray(target, dtype=np.float64)
    point = v == 0
    sigma = np.sqrt(np.where(point, 1.0, v))
    z = (t - m) / sigma
    logpdf = np.where(point, -np.inf, -0.5 * (_LOG_2PI + np.log(sigma * sigma) + z * z))
    pdf_term = 2.0 * np.exp(-0.5 * z * z) / np.sqrt(2.0 * np.pi)
    crps = sigma * (z * erf(z / np.sqrt(2.0)) + pdf_term - _INV_SQRT_PI)
    crps = np.where(point, np.abs(t - m), crps)
    pit = np.where(point, (t >= m).astype(np.float64), norm_cdf(z))
    return Stats(logpdf, m.copy(), crps, pit)


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
    """:func:`quantile_stats` with the bin widths ``da``, ``dq`` the validator already has."""
    t = np.asarray(target, dtype=np.float64)
    n_rows, n = a.shape
    rows = np.arange(n_rows)
    a1, an = a[:, 0], a[:, -1]
    q1, qn = q[:, 0], q[:, -1]
    # Log-densities as log Δa − log Δq and scale lengths b = a·Δq/Δa: a bin narrower
    # than ~1e-308 would make the density Δa/Δq overflow to inf (NLPD −inf, CRPS nan).
    log_z1 = np.log(da[:, 0]) - np.log(dq[:, 0])
    log_zn = np.log(da[:, -1]) - np.log(dq[:, -1])
    b1 = a1 / da[:, 0] * dq[:, 0]
    c = 1.0 - an
    bn = c / da[:, -1] * dq[:, -1]

    k = np.count_nonzero(q <= t[:, None], axis=1)  # targets on q_k take the right bin
    lower, upper = k == 0, k == n
    j = np.clip(k - 1, 0, n - 2)  # the bin holding t, when 1 <= k <= n-1
    a_j, a_next = a[rows, j], a[rows, j + 1]
    q_j, q_next = q[rows, j], q[rows, j + 1]
    da_j, dq_j = a_next - a_j, q_next - q_j

    below = np.maximum(q1 - t, 0.0)  # distance into the lower tail
    above = np.maximum(t - qn, 0.0)
    e_low = np.exp(-below / b1)
    e_up = np.exp(-above / bn)

    logpdf = np.where(
        lower,
        log_z1 - below / b1,
        np.where(upper, log_zn - above / bn, np.log(da_j) - np.log(dq_j)),
    )
    f_mid = a_j + (t - q_j) / dq_j * da_j
    pit = np.where(lower, a1 * e_low, np.where(upper, 1.0 - c * e_up, f_mid))

    lo, hi = a[:, :-1], a[:, 1:]
    mean = 0.5 * np.einsum("ij,ij->i", q[:, :-1] + q[:, 1:], da) + a1 * (q1 - b1) + c * (qn + bn)

    # CRPS bin by bin. F is linear on a bin, from lo to hi: left of t the bin
    # adds ∫F² = Δq·S/3 with S = lo² + lo·hi + hi², right of t ∫(1 − F)² =
    # Δq·(S + 3(1 − lo − hi))/3. So the middle is Σ Δq·S/3 plus Δq(1 − lo − hi)
    # summed over the bins right of t, and the bin holding t is split at t.
    u = lo + hi
    left_all = np.einsum("ij,ij->i", dq, u * u - lo * hi)
    extra = np.cumsum((dq * (1.0 - u))[:, ::-1], axis=1)[:, ::-1]  # Σ over bins s..N-2
    right_extra = np.where(k <= n - 2, extra[rows, np.minimum(k, n - 2)], 0.0)  # bins >= k
    inside = ~lower & ~upper
    f = f_mid
    split = (t - q_j) * (a_j * a_j + a_j * f + f * f) + (q_next - t) * (
        (1 - f) ** 2 + (1 - f) * (1 - a_next) + (1 - a_next) ** 2
    )
    bin_j_left = (q_next - q_j) * (a_j * a_j + a_j * a_next + a_next * a_next)
    middle = left_all + right_extra * 3.0
    middle = np.where(inside, middle - bin_j_left + split, middle) / 3.0
    tail_low = 0.5 * b1 * a1 * a1 + np.where(lower, below - 2.0 * a1 * b1 * (1.0 - e_low), 0.0)
    tail_up = 0.5 * bn * c * c + np.where(upper, above - 2.0 * c * bn * (1.0 - e_up), 0.0)
    crps = middle + tail_low + tail_up
    return Stats(logpdf, mean, crps, pit)


def sample_stats(samples, target) -> Stats:
    """Sample rows ``2 s1 … sK`` (rows × K): the empirical distribution of the sample.

    CRPS = (1/K)Σ|s_k − t| − (1/2K²)ΣΣ|s_j − s_k| (Gneiting & Raftery 2007, eq. 21),
    the pair sum taken in O(K log K) from the sorted sample. The density is not
    defined (``logpdf`` is nan: NLPD is n/a); PIT is the mid-point of the jump,
    (#{s < t} + #{s ≤ t}) / 2K.
    """
    s = np.sort(np.asarray(samples, dtype=np.float64), axis=1)
    t = np.asarray(target, dtype=np.float64)
    k = s.shape[1]
    spread = np.abs(s - t[:, None]).mean(axis=1)
    weights = 2.0 * np.arange(k) - k + 1.0  # ΣΣ|s_i − s_j| = 2 Σ_i (2i − K + 1) s_(i)
    pair = 2.0 * (s @ weights) / (2.0 * k * k)
    crps = spread - pair
    below = np.count_nonzero(s < t[:, None], axis=1)
    at_or_below = np.count_nonzero(s <= t[:, None], axis=1)
    pit = (below + at_or_below) / (2.0 * k)
    return Stats(np.full(t.shape, np.nan), s.mean(axis=1), crps, pit)
