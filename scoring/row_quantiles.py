"""Quantiles and CDFs of the three regression row types (spec §2, §8 and §9).

Every row is read at quantile levels 0 < α < 1 as spec §8 says:

- a Gaussian ``1 m v`` at m + σΦ⁻¹(α) (Φ⁻¹ from :func:`scoring.special.norm_ppf`); a point
  prediction (v = 0) at m;
- a quantile row ``0 a1 q1 … aN qN`` at the inverse of §2's CDF: for a_k ≤ α < a_k+1 the
  linear piece q_k + (α − a_k)·Δq_k/Δa_k (α = a_k gives q_k, the bins being half-open);
  below a1 the exponential tail's inverse q1 − b1·log(a1/α); from aN on
  qN + bN·log((1 − aN)/(1 − α));
- a sample ``2 s1 … sK`` at numpy's default (linear) quantile of the sorted sample:
  numpy's virtual index h = fl((K − 1)α), s_(⌊h⌋) + (h − ⌊h⌋)(s_(⌊h⌋+1) − s_(⌊h⌋)).

The sums that can cancel (a negative q_k plus a positive step, m + σz near 0) are taken in
double-double (:mod:`scoring.dd`), and the logarithms of ratios near 1 as log1p of an exact
difference, so every quantile of a row of exact inputs is within a few ε of its value
(Φ⁻¹ itself within 1e-15).

CDFs (§9's ``view.cdf``): Φ((x − m)/σ), 1{x ≥ m} for a point prediction, §2's CDF for
quantile rows, and the empirical F(x) = #{s ≤ x}/K for samples.
"""

from __future__ import annotations

import numpy as np

from .dd import dd_add, dd_div, dd_mul, two_prod, two_sum
from .distributions import _scale_lengths
from .moments import tail_scales
from .special import norm_cdf, norm_ppf

# below 2**997 / (2**27 + 1): dd.two_prod splits its arguments without overflow
_SPLIT_SAFE = 2.0**960


def gaussian_quantiles(m, v, levels) -> np.ndarray:
    """m + √v·Φ⁻¹(α) per row and level (rows × K); m where v = 0."""
    sigma = np.sqrt(v)[:, None]
    z = norm_ppf(levels)[None, :]
    p, e = two_prod(sigma, z)
    mm = np.broadcast_to(m[:, None], p.shape)
    hi, lo = dd_add(mm, np.zeros(p.shape), p, e)
    return np.where(sigma == 0, mm, hi + lo)


def sample_quantiles(s, levels) -> np.ndarray:
    """numpy's default quantile of each sorted sample (rows × K): at numpy's virtual index
    h = fl((K − 1)α), one rounding as numpy makes it (so which two values are interpolated,
    and whether α falls exactly on a value, is numpy's decision), then
    s_(j) + (h − j)(s_(j+1) − s_(j)) with j = ⌊h⌋, in double-double."""
    n_rows, k = s.shape
    h = (k - 1) * levels
    j = np.floor(h)
    g = h - j  # exact
    if k == 1:
        return np.repeat(s, levels.size, axis=1)
    j = j.astype(np.intp)
    top = j >= k - 1
    j = np.minimum(j, k - 2)
    left, right = s[:, j], s[:, j + 1]
    dh, dl = two_sum(right, -left)
    ph, pl = dd_mul(dh, dl, np.broadcast_to(g, dh.shape), np.zeros(dh.shape))
    hi, lo = dd_add(left, np.zeros(left.shape), ph, pl)
    return np.where(top[None, :], s[:, -1:], hi + lo)


def quantile_row_quantiles(a, q, levels) -> np.ndarray:
    """The inverse of §2's CDF per row (rows × N levels a and values q) and level."""
    n_rows, n = a.shape
    da, dq = np.diff(a, axis=1), np.diff(q, axis=1)
    b1, bn = tail_scales(a, q, da, dq)
    c = 1.0 - a[:, -1]
    with np.errstate(divide="ignore"):
        log_bn = np.log(c) + np.log(dq[:, -1]) - np.log(da[:, -1])
    rows = np.arange(n_rows)
    out = np.empty((n_rows, levels.size))
    for col, alpha in enumerate(levels.tolist()):
        k = np.count_nonzero(a <= alpha, axis=1)  # a_k ≤ α: the bin to the right of a_k
        result = np.empty(n_rows)
        inside = (k >= 1) & (k < n)
        if inside.any():
            r, j = rows[inside], k[inside] - 1
            result[inside] = _linear_piece(a[r, j], a[r, j + 1], q[r, j], q[r, j + 1], alpha)
        at_top = (k == n) & (a[:, -1] == alpha)
        result[at_top] = q[at_top, -1]
        low = k == 0
        if low.any():
            a1 = a[low, 0]
            length = _log_ratio(a1, np.full(a1.shape, alpha))  # log(a1/α) > 0
            ph, pl = two_prod(b1[low], length)
            result[low] = _rounded(dd_add(q[low, 0], np.zeros(a1.shape), -ph, -pl))
        up = (k == n) & ~at_top
        if up.any():
            length = _log_ratio(c[up], np.full(c[up].shape, 1.0 - alpha), alpha - a[up, -1])
            step = bn[up] * length
            with np.errstate(over="ignore"):
                # a scale this large would overflow two_prod's splitting (2**997): the
                # quantile is then the step itself to a few ε (qN is ≤ 2e100), and a
                # step beyond the largest double is +inf
                wide = ~np.isfinite(step) | ~(np.abs(bn[up]) < _SPLIT_SAFE)
                far = ~np.isfinite(step)
                step[far] = np.exp(log_bn[up][far] + np.log(length[far]))
            ph, pl = two_prod(np.where(wide, 0.0, bn[up]), length)
            exact = _rounded(dd_add(q[up, -1], np.zeros(ph.shape), ph, pl))
            result[up] = np.where(wide, q[up, -1] + step, exact)
        out[:, col] = result
    return out


def _rounded(pair) -> np.ndarray:
    """A double-double rounded to the nearest double."""
    return pair[0] + pair[1]


def _linear_piece(a0, a1, q0, q1, alpha) -> np.ndarray:
    """q0 + (α − a0)·(q1 − q0)/(a1 − a0) in double-double, rounded once."""
    zeros = np.zeros(a0.shape)
    nh, nl = two_sum(np.full(a0.shape, alpha), -a0)
    dah, dal = two_sum(a1, -a0)
    dqh, dql = two_sum(q1, -q0)
    rh, rl = dd_div(nh, nl, dah, dal)
    ph, pl = dd_mul(rh, rl, dqh, dql)
    hi, lo = dd_add(q0, zeros, ph, pl)
    return hi + lo


def _log_ratio(top, bottom, diff=None) -> np.ndarray:
    """log(top/bottom) > 0 for 0 < bottom < top, as log1p((top − bottom)/bottom) when the
    ratio is below 2 (``diff`` = top − bottom if known more exactly than its rounding)."""
    diff = top - bottom if diff is None else diff
    with np.errstate(divide="ignore"):
        near = np.log1p(diff / bottom)
        far = np.log(top / bottom)
    return np.where(top < 2.0 * bottom, near, far)


def gaussian_cdf(m, v, x) -> np.ndarray:
    """Φ((x − m)/√v); 1{x ≥ m} for a point prediction."""
    point = v == 0
    z = (x - m) / np.sqrt(np.where(point, 1.0, v))
    return np.where(point, (x >= m).astype(np.float64), norm_cdf(z))


def sample_cdf(s, x) -> np.ndarray:
    """#{s ≤ x}/K per row."""
    return np.count_nonzero(s <= x[:, None], axis=1) / s.shape[1]


def quantile_row_cdf(a, q, x) -> np.ndarray:
    """§2's CDF at x per row: a1·e^(−(q1 − x)/b1), the linear pieces (a target on q_k in
    the bin to its right), 1 − (1 − aN)·e^(−(x − qN)/bN)."""
    n_rows, n = a.shape
    da, dq = np.diff(a, axis=1), np.diff(q, axis=1)
    a1, c = a[:, 0], 1.0 - a[:, -1]
    log_b1 = np.log(a1) - (np.log(da[:, 0]) - np.log(dq[:, 0]))
    log_bn = np.log(c) - (np.log(da[:, -1]) - np.log(dq[:, -1]))
    k = np.count_nonzero(q <= x[:, None], axis=1)
    lower, upper = k == 0, k == n
    r = _scale_lengths(q[:, 0] - x, lower, log_b1)
    s = _scale_lengths(x - q[:, -1], upper, log_bn)
    rows = np.arange(n_rows)
    j = np.clip(k - 1, 0, n - 2)
    a_j, q_j = a[rows, j], q[rows, j]
    xc = np.clip(x, q_j, q[rows, j + 1])
    inside = a_j + (xc - q_j) / dq[rows, j] * da[rows, j]
    return np.where(lower, a1 * np.exp(-r), np.where(upper, 1.0 - c * np.exp(-s), inside))
