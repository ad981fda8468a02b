"""Regression losses from per-example statistics (see :mod:`scoring.distributions`).

References: Quiñonero-Candela et al., "Evaluating Predictive Uncertainty
Challenge" (2006), §4.2, eqs. (17)-(18); Kohonen & Suomela, "Lessons learned in
the challenge" (2006), §4.2 (CRPS); spec §3.
"""

from __future__ import annotations

import math

import numpy as np

_LOG_2PI = math.log(2.0 * math.pi)


def nlpd(
    logpdf,
    *,
    base: float = math.e,
    targets=None,
    mean=None,
    variance=None,
) -> float | None:
    """L = −(1/n) Σ log_b p(t_i | x_i). +inf if any density is 0; None if undefined (samples).

    A term may be near the largest double (a target 1e154 standard deviations off):
    the mean is then taken without overflowing the sum. A Gaussian row of variance
    v > 0 has a positive density even where its −log p = ½log(2πv) + ½(t − m)²/v
    exceeds the largest double (``logpdf`` is −inf there): given the ``targets``, the
    rows' ``mean`` and ``variance`` (nan for rows that are not Gaussian), the mean over
    the rows is then taken in units of 2**1000 and is +inf only if it really exceeds
    the largest double (spec §3). Without them such a row gives +inf.
    """
    logpdf = np.asarray(logpdf, dtype=np.float64)
    if np.isnan(logpdf).any():
        return None
    zero = np.isneginf(logpdf)
    if not zero.any():
        return -_mean(logpdf) / math.log(base)  # (a Python float: inf, not an error, beyond)
    if targets is None or mean is None or variance is None:
        return math.inf
    variance = np.asarray(variance, dtype=np.float64)
    if not (variance[zero] > 0).all():  # a zero-variance row: density 0 at the target
        return math.inf
    return _scaled_nlpd(logpdf, zero, targets, mean, variance, base)


_SCALE_EXP = 1000  # terms in units of 2**1000: every valid row's −log p fits (at most ~1e524)


def _scaled_nlpd(logpdf, over, targets, mean, variance, base) -> float:
    """The mean −log_b p when the rows ``over`` (variance > 0) have a −log p beyond the
    largest double: every term times 2**-1000 (exact), the mean, then scaled back.

    A valid row has |t − m| ≤ 2e100 and σ ≥ 2.2e-162, so z = (t − m)/σ ≤ 1e262 is finite
    and (z·2**-500)² ≤ 2**741; where ½z² overflowed, z·2**-500 ≥ 2**12.
    """
    t = np.asarray(targets, dtype=np.float64)[over]
    m = np.asarray(mean, dtype=np.float64)[over]
    v = variance[over]
    z = (t - m) / np.sqrt(v) * math.ldexp(1.0, -_SCALE_EXP // 2)
    log_term = 0.5 * (_LOG_2PI + np.log(v))
    scaled = np.empty_like(logpdf)
    with np.errstate(under="ignore"):  # (tiny terms may underflow: far below the total)
        scaled[over] = 0.5 * z * z + log_term * math.ldexp(1.0, -_SCALE_EXP)
        scaled[~over] = -logpdf[~over] * math.ldexp(1.0, -_SCALE_EXP)
    value = float(np.mean(scaled)) / math.log(base)
    try:
        return math.ldexp(value, _SCALE_EXP)
    except OverflowError:  # the exact mean is beyond the largest double
        return math.copysign(math.inf, value)


def nlpd_terms(logpdf, *, base: float = math.e) -> np.ndarray | None:
    """Per-example terms of :func:`nlpd`: −log_b p(t_i | x_i), +inf where the density is 0;
    None when any is undefined (a sample row)."""
    logpdf = np.asarray(logpdf, dtype=np.float64)
    if np.isnan(logpdf).any():
        return None
    zero = np.isneginf(logpdf)
    with np.errstate(over="ignore"):  # +inf only beyond the largest double
        terms = -np.where(zero, 0.0, logpdf) / math.log(base) + 0.0  # (+ 0.0: no −0.0)
    terms[zero] = math.inf
    return terms


def squared_errors(mean, t) -> np.ndarray:
    """(t_i − m_i)² per example: nmse is their mean over var(t)."""
    mean = np.asarray(mean, dtype=np.float64)
    t = np.asarray(t, dtype=np.float64)
    with np.errstate(over="ignore"):  # (|t − m| is far below 1e154 for every valid file)
        return (t - mean) ** 2


def nmse(mean, t, *, variance: float | None = None, residuals=None) -> float | None:
    """Σ (t_i − m_i)² / (n · var), var of ``t`` (ddof 0) unless given; None when var = 0.
    ``residuals``: t − m where known more exactly than its rounding (a regression file's
    :meth:`~scoring.regression_rows.RegressionRows.residuals`, from its exact means).

    Both sums are taken in units of a power of two near the largest |t_i − t_1|
    (exact scaling), and var after subtracting t_1 (spec §3): equal targets give a
    variance of exactly 0 (n/a), and targets 5e-324 apart neither underflow to it.
    """
    mean = np.asarray(mean, dtype=np.float64)
    t = np.asarray(t, dtype=np.float64)
    if variance is None:
        d, scale = _from_first(t)
        if scale == 0:
            return None
        var = float(np.var(d / scale))
    else:
        scale, var = 1.0, float(variance)
        if var == 0:
            return None
    r = t - mean if residuals is None else np.asarray(residuals, dtype=np.float64)
    with np.errstate(over="ignore"):  # +inf only beyond the largest double
        squares = (r / scale) ** 2
    return _mean(squares) / var


def variance(t) -> float:
    """var(t), ddof 0, after subtracting t_1 so that equal targets give exactly 0."""
    d, scale = _from_first(np.asarray(t, dtype=np.float64))
    return 0.0 if scale == 0 else float(np.var(d / scale)) * scale * scale


def _from_first(t: np.ndarray) -> tuple[np.ndarray, float]:
    """t − t_1 and the power of two at or above its largest magnitude (0 if none)."""
    if not t.size:
        return t, 0.0
    d = t - t[0]
    largest = float(np.max(np.abs(d)))
    return d, 0.0 if largest == 0 else math.ldexp(1.0, math.frexp(largest)[1])


def _mean(x: np.ndarray) -> float:
    """The mean of finite terms, also when their sum would overflow."""
    with np.errstate(over="ignore"):
        total = np.mean(x)
    if np.isinf(total) and np.isfinite(x).all():
        total = np.sum(x / x.size)
    return float(total)


def crps(values) -> float:
    """Mean continuous ranked probability score, (1/n) Σ ∫ (F_i(u) − 1{u ≥ t_i})² du.

    A quantile row's tail can make a term near the largest double: no overflowing sum.
    """
    return _mean(np.asarray(values, dtype=np.float64))
