"""Exact means and variances of quantile and sample rows (spec §2, §3 and §8).

The mean of a regression row feeds every squared error (nmse, the retention curves of §8),
where t − m may be far smaller than m: so the mean is computed as a double-double
``hi + lo`` within 2**-31 ≈ 4.7e-10 relative of the exact mean, and within
(N + 8)·ε of the row's spread and tails whatever m is (so t − m is exact where t ≈ m ≫ the
spread) (spec §3's exactness, the issue-27 cases: five copies
of 999999999.7013268 average to it exactly; ``0 0.5 0 0.5000000000001 1`` has two tail
terms of 2.5e12 that cancel).

Two paths. The fast one, for almost every row, is a plain sum with an error bound
E = (N + 8)·ε·(max|q| + tails). A row far from 0 for its width (a quantile row whose
max |q| passes 16 times its width, a sample likewise) is measured from a reference value r
of its own (its middle quantile or sample) instead, so that rounding errors scale with
the row's spread and tails, never with |m|: m = r + D, kept exactly as a double-double. A row whose E
exceeds 2**-31·|m| (its terms cancel) takes the exact path: every term split into exact
products (:func:`scoring.dd.two_prod`), the tails in double-double, and the whole row
summed by extraction (:func:`scoring.dd.exact_row_sums`).

Variances (§8) are sums of non-negative terms in the deviations q − m, computed from
differences of each row's own values (so that shifted copies of a row tie exactly): no
cancellation, relative error a few N·ε.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from .dd import dd_add, dd_div, dd_mul, exact_row_sums, two_prod, two_sum

_EPS = 2.0**-53
_ACCEPT = 2.0**-31  # the fast path's bound relative to |m| (4.7e-10)
_HUGE = 1e280  # a tail term this large dominates the row: no extraction needed
_KEY_BOUND = 2.0**-30  # a fast variance's error bound, relative, generously


def tail_scales(a, q, da, dq) -> tuple[np.ndarray, np.ndarray]:
    """§2's tail scales b1 = a1·Δq1/Δa1 and bN = (1 − aN)·ΔqN/ΔaN per row (rows × N
    arrays), relative error a few ε; bN is inf where it exceeds the largest double.

    a1/Δa1 ≤ 2**53 (a2 > a1 is at least an ulp above it), so b1 ≤ 2**53·2e100 never
    overflows; (1 − aN)/ΔaN may, and then bN comes from logarithms.
    """
    b1 = (a[:, 0] / da[:, 0]) * dq[:, 0]
    c = 1.0 - a[:, -1]
    with np.errstate(over="ignore"):
        ratio = c / da[:, -1]
        bn = ratio * dq[:, -1]
    far = ratio > 1e300
    if far.any():
        with np.errstate(over="ignore"):
            bn[far] = np.exp(np.log(c[far]) + np.log(dq[far, -1]) - np.log(da[far, -1]))
    return b1, bn


def quantile_mean(a, q, da, dq) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """§2's mean Σ_k (q_k + q_k+1)/2·Δa_k + a1(q1 − b1) + (1 − aN)(qN + bN) per row, as a
    double-double (hi, lo) and a bound on |hi + lo − mean| (0 for the exact path's rows:
    :func:`exact_quantile_mean` refines the others where t − m needs it); hi is +inf where
    the exact mean exceeds the largest double.

    Rows far from 0 for their width (max |q| > 16·(qN − q1)) are measured from their
    middle quantile, the others from 0 (no extra pass over the file's numbers)."""
    b1, bn = tail_scales(a, q, da, dq)
    hi, lo, bound = _plain_mean(a, q, da, b1, bn, None)
    with np.errstate(over="ignore"):
        offset = np.maximum(np.abs(q[:, 0]), np.abs(q[:, -1])) > 16.0 * (q[:, -1] - q[:, 0])
    if offset.any():
        ref = q[offset, a.shape[1] // 2]
        hi[offset], lo[offset], bound[offset] = _plain_mean(
            a[offset], q[offset], da[offset], b1[offset], bn[offset], ref
        )
    with np.errstate(invalid="ignore", divide="ignore"):
        # (bN from logarithms, relative error up to 745ε: such rows take the exact path)
        far = ~(1.0 - a[:, -1] <= 1e300 * da[:, -1])
    redo = ~(bound <= _ACCEPT * np.abs(hi)) | ~np.isfinite(hi) | far
    if redo.any():
        hi[redo], lo[redo] = exact_quantile_mean(a[redo], q[redo])
        bound[redo] = 0.0
    lo[~np.isfinite(hi)] = 0.0
    return hi, lo, bound


def _plain_mean(a, q, da, b1, bn, ref):
    """The mean as ref + D, D summed plainly from the deviations q − ref (ref None: 0),
    kept exactly as (hi, lo), and the bound on D's error: (N + 8)ε·max|q − ref| for the
    body and the tails' a1·(q1 − ref), (1 − aN)·(qN − ref), 8ε·(a1·b1 + (1 − aN)·bN)."""
    n = a.shape[1]
    d = q if ref is None else q - ref[:, None]
    c = 1.0 - a[:, -1]
    with np.errstate(over="ignore", invalid="ignore"):
        body = 0.5 * np.einsum("ij,ij->i", d[:, :-1] + d[:, 1:], da)
        tails = a[:, 0] * (d[:, 0] - b1) + c * (d[:, -1] + bn)
        if ref is None:
            hi, lo = body + tails, np.zeros(a.shape[0])
        else:
            hi, lo = two_sum(ref, body + tails)
        spread = np.maximum(np.abs(d[:, 0]), np.abs(d[:, -1]))
        bound = _EPS * ((n + 8) * spread + 8.0 * (a[:, 0] * b1 + c * bn))
    return hi, lo, bound


def exact_quantile_mean(a, q) -> tuple[np.ndarray, np.ndarray]:
    """The mean as ½Σ_j q_j·w_j − a1²Δq1/Δa1 + (1 − aN)²ΔqN/ΔaN with w_j = a_j+1 − a_j−1
    (a_0 = −a1, a_N+1 = 2 − aN: §2's body and the a1·q1 and (1 − aN)·qN terms regrouped),
    every product split exactly and the row summed by extraction."""
    rows, n = a.shape
    pad = np.empty((rows, n + 2))
    pad[:, 1:-1] = a
    pad[:, 0] = -a[:, 0]
    pad[:, -1] = 2.0  # (2 − aN is not always a double: −aN is subtracted in two_sum below)
    w_hi, w_lo = two_sum(pad[:, 2:], -pad[:, :-2])
    wn_hi, wn_lo = dd_add(w_hi[:, -1], w_lo[:, -1], -a[:, -1], np.zeros(rows))
    w_hi[:, -1], w_lo[:, -1] = wn_hi, wn_lo
    p, e = two_prod(q, w_hi)
    low_t1 = _tail_term(a[:, 0], np.zeros(rows), a[:, :2], q[:, :2])
    c = two_sum(np.ones(rows), -a[:, -1])
    up_t = _tail_term(c[0], c[1], a[:, -2:], q[:, -2:])
    huge = ~(np.abs(up_t[0]) <= _HUGE)
    terms = np.concatenate(
        [0.5 * p, 0.5 * e, 0.5 * (q * w_lo), np.stack([-low_t1[0], -low_t1[1]], axis=1)],
        axis=1,
    )
    up = np.where(huge, 0.0, np.stack([up_t[0], up_t[1]]))
    terms = np.concatenate([terms, up.T], axis=1)
    hi, lo = exact_row_sums(terms)
    if huge.any():  # the upper tail dwarfs every other term (at most 1e116 each)
        hi[huge], lo[huge] = up_t[0][huge] + hi[huge], 0.0
    return hi, lo


def _tail_term(mass_hi, mass_lo, a2, q2) -> tuple[np.ndarray, np.ndarray]:
    """mass²·Δq/Δa for the bin (a2, q2) (rows × 2), mass = a1 or 1 − aN, as a
    double-double: mass·(mass/Δa)·Δq. Where mass/Δa or mass·Δq/Δa passes 2**900 (a
    subnormal Δa) Δa is scaled up by a power of two first and the result back at the
    end, where only a true overflow gives inf."""
    dah, dal = two_sum(a2[:, 1], -a2[:, 0])
    dqh, dql = two_sum(q2[:, 1], -q2[:, 0])
    # Binary exponents of mass/Δa and of mass·Δq/Δa, free of overflow.
    e_ratio = np.frexp(mass_hi)[1] - np.frexp(dah)[1]
    e_scale = e_ratio + np.frexp(dqh)[1]
    scale = np.maximum(0, np.maximum(e_ratio, e_scale) - 900)
    rh, rl = dd_div(mass_hi, mass_lo, np.ldexp(dah, scale), np.ldexp(dal, scale))
    rh, rl = dd_mul(rh, rl, dqh, dql)
    th, tl = dd_mul(rh, rl, mass_hi, mass_lo)
    with np.errstate(over="ignore"):
        return np.ldexp(th, scale), np.ldexp(tl, scale)


def sample_mean(s) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(1/K)Σ s_k per row of a sorted sample (rows × K), as a double-double (hi, lo), and
    a bound on its error (0 where exact; :func:`exact_sample_mean` refines the others).

    A plain mean first; rows far from 0 for their width (max |s| > 16·(s_K − s_1): five
    copies of one value) again from their middle value, whose deviations sum without
    rounding for identical values; rows whose sum may have cancelled (bound (K + 4)ε·max|s|
    above 2**-31·|m|) by extraction."""
    n_rows, k = s.shape
    hi = s.sum(axis=1) / k
    lo = np.zeros(n_rows)
    size = np.maximum(np.abs(s[:, 0]), np.abs(s[:, -1]))
    spread = s[:, -1] - s[:, 0]
    offset = size > 16.0 * spread
    if offset.any():
        ref = s[offset, k // 2]
        d = s[offset] - ref[:, None]
        hi[offset], lo[offset] = two_sum(ref, d.sum(axis=1) / k)
        size[offset] = np.maximum(np.abs(d[:, 0]), np.abs(d[:, -1]))
    bound = (k + 4) * _EPS * size
    redo = ~(bound <= _ACCEPT * np.abs(hi))
    if redo.any():
        hi[redo], lo[redo] = exact_sample_mean(s[redo])
    bound[redo | (size == 0)] = 0.0
    return hi, lo, bound


def exact_sample_mean(s) -> tuple[np.ndarray, np.ndarray]:
    """(1/K)Σ s_k per row by extraction, to about 2**-104 relative."""
    sh, sl = exact_row_sums(s)
    kk = np.full(sh.shape, float(s.shape[1]))
    return dd_div(sh, sl, kk, np.zeros(sh.shape))


def sample_variance(s) -> np.ndarray:
    """Population variance (1/K)Σ(s_k − m)² per row of a sorted sample (rows × K).

    Measured from the middle value r: x = (s − r) − mean(s − r). Only differences of the
    row's own values enter, so a row shifted by a constant that its values carry exactly
    gets the very same double (§8's ties between equal keys survive), and an error δ in
    the mean changes Σx² only by Kδ² (Σx = 0 at the exact mean)."""
    k = s.shape[1]
    d = s - s[:, k // 2][:, None]
    x = d - (d.sum(axis=1) / k)[:, None]
    return np.einsum("ij,ij->i", x, x) / k


def quantile_variance(a, q) -> np.ndarray:
    """§8's variance of §2's distribution, per row (rows × N levels a and values q):

    Σ_k Δa_k·(x_k² + x_k·x_k+1 + x_k+1²)/3 + a1·((x1 − b1)² + b1²) + (1 − aN)·((xN + bN)² + bN²)

    with x = q − m: every term non-negative, so nothing cancels. As for samples, x is
    (q − r) − (m − r) from the middle quantile r, m − r summed from those differences:
    a shifted copy of a row gets the same double, and the mean's rounding enters only
    squared. inf where the exact variance exceeds the largest double (a near-infinite
    upper tail)."""
    n = a.shape[1]
    d = q - q[:, n // 2][:, None]
    da, dq = np.diff(a, axis=1), np.diff(q, axis=1)
    b1, bn = tail_scales(a, q, da, dq)
    c = 1.0 - a[:, -1]
    with np.errstate(over="ignore", invalid="ignore"):
        shift = 0.5 * np.einsum("ij,ij->i", d[:, :-1] + d[:, 1:], da)
        shift += a[:, 0] * (d[:, 0] - b1) + c * (d[:, -1] + bn)
        finite = np.isfinite(shift)
        x = d - np.where(finite, shift, 0.0)[:, None]
        square = x * x
        pieces = square[:, :-1] + square[:, 1:]
        pieces += x[:, :-1] * x[:, 1:]
        body = np.einsum("ij,ij->i", da, pieces) / 3.0
        y1, yn = x[:, 0] - b1, x[:, -1] + bn
        tails = (a[:, 0] * y1) * y1 + (a[:, 0] * b1) * b1 + (c * yn) * yn + (c * bn) * bn
        var = body + tails
    var[~finite | np.isnan(var)] = np.inf
    return var


def exact_sample_variance(row) -> Fraction:
    """A sample row's population variance (1/K)Σ(s_k − m)² as an exact rational:
    (KΣs² − (Σs)²)/K² with the values as integers over one power of two (fast)."""
    ratios = [x.as_integer_ratio() for x in map(float, row)]
    scale = max(d for _, d in ratios)
    ints = [n * (scale // d) for n, d in ratios]
    k, total = len(ints), sum(ints)
    return Fraction(k * sum(i * i for i in ints) - total * total, k * k * scale * scale)


def exact_sample_mean_fraction(row) -> Fraction:
    """A sample row's mean as an exact rational."""
    return sum((Fraction(float(x)) for x in row), Fraction(0)) / len(row)


def _exact_quantile_row(a_row, q_row):
    """A quantile row's levels, values, b1, 1 − aN, bN and §2's mean, as exact rationals."""
    a = [Fraction(float(x)) for x in a_row]
    q = [Fraction(float(x)) for x in q_row]
    b1 = a[0] * (q[1] - q[0]) / (a[1] - a[0])
    c = 1 - a[-1]
    bn = c * (q[-1] - q[-2]) / (a[-1] - a[-2])
    m = sum(((q[k] + q[k + 1]) / 2 * (a[k + 1] - a[k]) for k in range(len(a) - 1)), Fraction(0))
    m += a[0] * (q[0] - b1) + c * (q[-1] + bn)
    return a, q, b1, c, bn, m


def exact_quantile_mean_fraction(a_row, q_row) -> Fraction:
    """§2's mean of a quantile row as an exact rational."""
    return _exact_quantile_row(a_row, q_row)[-1]


def exact_quantile_variance(a_row, q_row) -> Fraction:
    """§8's variance of §2's distribution (:func:`quantile_variance`'s formula) as an exact
    rational: b1, bN, the mean and every term are rationals of the row's doubles."""
    a, q, b1, c, bn, m = _exact_quantile_row(a_row, q_row)
    x = [v - m for v in q]
    body = sum(
        (
            (a[k + 1] - a[k]) * (x[k] * x[k] + x[k] * x[k + 1] + x[k + 1] * x[k + 1])
            for k in range(len(a) - 1)
        ),
        Fraction(0),
    )
    y1, yn = x[0] - b1, x[-1] + bn
    return body / 3 + a[0] * (y1 * y1 + b1 * b1) + c * (yn * yn + bn * bn)


def term_scale(kind_is_sample: bool, first, second) -> np.ndarray:
    """The size of a row's largest mean term (rows × width arrays): max|s| of a sample
    (0 where all its values are equal: its mean is then exact), max|q| + a1·b1 + (1 − aN)·bN
    of a quantile row. The exact path's means are good to ~2**-100 of it."""
    if kind_is_sample:
        return np.where(
            first[:, 0] == first[:, -1], 0.0, np.maximum(np.abs(first[:, 0]), np.abs(first[:, -1]))
        )
    a, q = first, second
    with np.errstate(over="ignore", invalid="ignore"):
        b1 = (a[:, 0] / (a[:, 1] - a[:, 0])) * (q[:, 1] - q[:, 0])
        bn = ((1.0 - a[:, -1]) / (a[:, -1] - a[:, -2])) * (q[:, -1] - q[:, -2])
        return np.maximum(np.abs(q[:, 0]), np.abs(q[:, -1])) + a[:, 0] * b1 + (1.0 - a[:, -1]) * bn


def split_exact(value: Fraction) -> tuple[float, float]:
    """An exact non-negative rational as (hi, lo): hi its nearest double, lo the nearest
    double to the remainder (equal rationals give equal pairs; distinct ones ordered
    unless they agree to ~2**-106 relative); (inf, 0) past the largest double."""
    try:
        hi = float(value)
    except OverflowError:
        return np.inf, 0.0
    if hi == np.inf:
        return np.inf, 0.0
    return hi, float(value - Fraction(hi))


def ambiguous(v, exact) -> np.ndarray:
    """Which rows' variance keys must be made exact: rows (not ``exact`` already) whose
    fast value ``v`` lies within its error bound (2**-30 relative, far above the few
    N·ε of :func:`sample_variance` and :func:`quantile_variance`) of another row's, so that
    a double could tie or misorder them; elsewhere the doubles order the rows exactly."""
    n = v.size
    exact = np.broadcast_to(np.asarray(exact, dtype=bool), (n,))
    if n < 2 or exact.all():  # (Gaussian rows: every variance is exact already)
        return np.zeros(n, dtype=bool)
    err = np.where(exact, 0.0, np.abs(v) * _KEY_BOUND)
    with np.errstate(invalid="ignore"):
        lower, upper = v - err, v + err
    lower[np.isinf(v)] = np.inf
    upper[np.isinf(v)] = np.inf
    order = np.argsort(lower, kind="stable")
    reach = np.maximum.accumulate(upper[order])
    starts = np.concatenate([[True], reach[:-1] < lower[order][1:]])
    cluster = np.cumsum(starts) - 1
    sizes = np.bincount(cluster)
    shared = np.empty(n, dtype=bool)
    shared[order] = sizes[cluster] > 1
    return shared & ~exact


__all__ = [
    "ambiguous",
    "exact_quantile_mean",
    "exact_quantile_mean_fraction",
    "exact_quantile_variance",
    "exact_sample_mean_fraction",
    "exact_sample_variance",
    "exact_sample_mean",
    "quantile_mean",
    "quantile_variance",
    "sample_mean",
    "sample_variance",
    "split_exact",
    "tail_scales",
    "term_scale",
]
