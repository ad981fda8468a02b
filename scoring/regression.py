"""Regression losses from per-example statistics (see :mod:`scoring.distributions`).

References: Quiñonero-Candela et al., "Evaluating Predictive Uncertainty
Challenge" (2006), §4.2, eqs. (17)-(18); Kohonen & Suomela, "Lessons learned in
the challenge" (2006), §4.2 (CRPS); spec §3.
"""

from __future__ import annotations

import math

import numpy as np


def nlpd(logpdf, *, base: float = math.e) -> float | None:
    """L = −(1/n) Σ log_b p(t_i | x_i). +inf if any density is 0; None if undefined (samples)."""
    logpdf = np.asarray(logpdf, dtype=np.float64)
    if np.isnan(logpdf).any():
        return None
    if np.isneginf(logpdf).any():
        return math.inf
    return float(-np.mean(logpdf) / math.log(base))


def nmse(mean, t, *, variance: float | None = None) -> float | None:
    """Σ (t_i − m_i)² / (n · var), var of ``t`` (ddof 0) unless given; None when var = 0."""
    mean = np.asarray(mean, dtype=np.float64)
    t = np.asarray(t, dtype=np.float64)
    var = float(np.var(t)) if variance is None else float(variance)
    if var == 0:
        return None
    return float(np.mean((t - mean) ** 2) / var)


def crps(values) -> float:
    """Mean continuous ranked probability score, (1/n) Σ ∫ (F_i(u) − 1{u ≥ t_i})² du."""
    return float(np.mean(np.asarray(values, dtype=np.float64)))
