"""Quantile scores of regression predictions at a dataset's levels (spec §8).

A dataset may set quantile levels 0 < α_1 < … < α_K < 1 (K ≤ 99). Every row is read at
them (:meth:`scoring.parse.RegressionRows.quantiles`: a Gaussian's m + σΦ⁻¹(α), a quantile
row's inverse of §2's CDF, a sample's numpy default quantile), giving q_ik, and scored by
the quantile (pinball) score

    QS_α(q, t) = 2 (1{t < q} − α) (q − t),

which is never negative: 2(1 − α)(q − t) when t < q, 2α(t − q) otherwise.

- ``wis`` = (1/n) Σ_i (1/K) Σ_k QS_α_k(q_ik, t_i). For levels symmetric about and including
  0.5 it is the weighted interval score of Bracher, Ray, Gneiting & Reich, "Evaluating
  epidemic forecasts in an interval format", PLoS Comput. Biol. 17 (2021) e1008618, eq. (3)
  with weights w_0 = 1/2 and w_k = α_k/2 (their α an interval's outside mass): an
  interval's score (u − l) + (2/α)(l − t)1{t < l} + (2/α)(t − u)1{t > u} times α/2 is half
  the sum of the QS of its two ends, and |t − median|/2 half the median's QS, so their
  WIS = (1/(K' + 1/2))·(1/2)·Σ QS = (1/(2K' + 1))·Σ QS over its 2K' + 1 levels.
- ``covP``: for every central interval, two levels whose sum is 1 within 1e-9, the share
  of targets with q_low ≤ t ≤ q_high, P = round(100·(α_high − α_low)) (``cov90`` for the
  levels 0.05 and 0.95). Reported beside the losses, not ranked.

Every term is a weight times a difference of two doubles, each rounded once, and the
sums add non-negative terms only: nothing cancels (spec §3's exactness holds as far as
the quantiles themselves are exact). The weights 2(1 − α)/K and 2α/K are applied before
the sum, and a mean divides first when the sum would overflow, so that +inf comes only
where the value itself exceeds the largest double (a tail quantile ≈ 1e303 is possible:
§2's scale b is a level gap's inverse times a quantile gap).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

# Two levels form a central interval when their sum is 1 within this (spec §8), compared
# exactly: the decimal 1e-9 and the levels' exact binary values.
PAIR_TOLERANCE = Fraction(1, 10**9)


def quantile_scores(q: np.ndarray, t: np.ndarray, levels) -> np.ndarray:
    """QS_α_k(q_ik, t_i) = 2(1{t_i < q_ik} − α_k)(q_ik − t_i), an (n, K) array ≥ 0.

    Written as (1 − α)(q − t) above the target and α(t − q) at or below it: two
    non-negative factors, so the sign is exact whatever the rounding.
    """
    return _weighted(q, t, levels, 2.0)


def _weighted(q, t, levels, scale: float) -> np.ndarray:
    """scale·QS_α(q, t)/2 for every example and level, the weight applied before the
    difference: a quantile far in a tail (its scale b ≈ 1e303 where a level gap is tiny)
    gives an inf only where the value itself exceeds the largest double."""
    q = np.asarray(q, dtype=np.float64)
    t = np.asarray(t, dtype=np.float64)[:, None]
    alpha = np.asarray(levels, dtype=np.float64)[None, :]
    with np.errstate(over="ignore"):  # +inf where the exact value exceeds the largest double
        return np.where(t < q, (scale * (1.0 - alpha)) * (q - t), (scale * alpha) * (t - q))


def wis_terms(q: np.ndarray, t: np.ndarray, levels) -> np.ndarray:
    """Each example's (1/K) Σ_k QS_α_k(q_ik, t_i), as Σ_k (2/K)·QS_α_k/2 so that no sum
    overflows before the division: ``wis`` is their mean (:func:`mean`)."""
    k = np.asarray(levels).size
    with np.errstate(over="ignore"):
        return _weighted(q, t, levels, 2.0 / k).sum(axis=1)


def mean(terms: np.ndarray) -> float:
    """The mean of non-negative terms, dividing first where the plain sum would overflow
    (terms near the largest double whose mean is finite)."""
    with np.errstate(over="ignore"):
        total = float(np.sum(terms))
    if math.isinf(total) and np.isfinite(terms).all():
        return float(np.sum(terms / terms.size))
    return total / terms.size


def central_intervals(levels) -> list[tuple[int, int, int]]:
    """The central intervals of the levels: ``(P, low, high)`` with indices low < high
    into ``levels`` whose levels sum to 1 within 1e-9 (exactly compared), P =
    round(100·(α_high − α_low)) of the exact difference, ordered by P then by the
    lower level. When two pairs round to the same P (levels a hair apart) the first
    one, the wider, names it and the other is left out: one ``covP`` per P.
    """
    exact = [Fraction(float(a)) for a in levels]
    found: dict[int, tuple[int, int, int]] = {}
    for low in range(len(exact)):
        for high in range(len(exact) - 1, low, -1):
            if abs(exact[low] + exact[high] - 1) <= PAIR_TOLERANCE:
                p = round(100 * (exact[high] - exact[low]))
                found.setdefault(p, (p, low, high))
    return sorted(found.values())


def coverages(q: np.ndarray, t: np.ndarray, levels) -> dict[str, float]:
    """``{"covP": share}``: for each central interval (:func:`central_intervals`) the share
    of targets with q_low ≤ t ≤ q_high, narrowest interval first."""
    q = np.asarray(q, dtype=np.float64)
    t = np.asarray(t, dtype=np.float64)
    out: dict[str, float] = {}
    for p, low, high in central_intervals(levels):
        inside = (q[:, low] <= t) & (t <= q[:, high])
        out[f"cov{p}"] = float(np.count_nonzero(inside)) / t.size
    return out


def nominal(name: str) -> float | None:
    """The nominal coverage P/100 of a reported name ``covP``, None for another name."""
    digits = name[3:]
    if name.startswith("cov") and digits.isdigit():
        return int(digits) / 100
    return None
