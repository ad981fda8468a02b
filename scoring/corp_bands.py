"""How sure a CORP reliability diagram is: consistency bands and intervals of MCB and DSC.

Spec §6 with §5's resamples. T. Dimitriadis, T. Gneiting and A. I. Jordan, "Stable
reliability diagrams for probabilistic classifiers", PNAS 118 (8), e2016191118 (2021):

- *Consistency bands* (their §3 and SI): under the hypothesis that the forecast x is
  calibrated, outcomes o*ᵢ ~ Bernoulli(xᵢ) are drawn afresh, PAV is refitted to them,
  and the pointwise (1 − α)/2 and (1 + α)/2 quantiles of the refitted values at each x
  bound the region where a calibrated forecast's CORP curve lies with probability ≈ α
  (α = 0.90 in the paper; their R package reliabilitydiag draws 100 resamples, and so
  does :data:`BAND_RESAMPLES`). A CORP curve leaving the band is evidence of
  miscalibration there.
- *Uncertainty of MCB, DSC and UNC*: the decomposition recomputed on bootstrap
  resamples of the examples (spec §5's resamples and level), 95 % basic bootstrap
  intervals for DSC and (from 0 to its upper end) MCB, whose PAV estimates are biased
  upward (:mod:`scoring.corp_intervals` says why), percentile intervals for the rest.

Both need PAV once per resample, run on all resamples at once and on at most
:data:`scoring.corp_pool.GROUPS` groups of consecutive forecasts (exactly the distinct
values when there are no more): :mod:`scoring.corp_pool` says why the grouping changes
little, and why the cost is then bounded whatever n (n = 1,000,000: 0.1 s of bands,
1.2 s of intervals, down from 27 s and 48 s). The intervals live in
:mod:`scoring.corp_intervals` and are re-exported here.
"""

from __future__ import annotations

import hashlib

import numpy as np

from . import decomposition
from .corp_intervals import decomposition_intervals
from .corp_pool import GROUPS, group_starts, pool, tie_starts

__all__ = ["consistency_bands", "decomposition_intervals", "inside", "pool", "seed_for"]

# The paper's 90 % bands from reliabilitydiag's default of 100 resamples.
BAND_RESAMPLES = 100
BAND_LEVEL = 0.90
# Where the band is given: at most this many forecast values, half evenly spaced in rank
# among the distinct values, half nearest to evenly spaced values (so that sparse tails
# are drawn too), the smallest and largest always.
BAND_POINTS = 200


def seed_for(n: int, purpose: str) -> int:
    """The fixed seed of a decomposition's resamples for n examples.

    Plot data is computed where the site's (dataset, split) seed is unknown (the
    scoring package, a participant's checkout), so the seed depends on n alone: every
    entry of a split has the same n, hence the same seed. (Only each entry's own
    intervals are drawn from it: the resamples are drawn per group of that entry's
    forecasts, not paired example by example across entries.)
    """
    digest = hashlib.sha256(f"corp:{purpose}:{n}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


def band_grid(values: np.ndarray, *, points: int = BAND_POINTS) -> np.ndarray:
    """Indices into the sorted distinct ``values`` where a band is given: all of them
    when there are at most ``points``, else half evenly spaced in rank and half nearest
    to evenly spaced values on [min, max], the ends included."""
    d = values.size
    if d <= points:
        return np.arange(d)
    half = max(points // 2, 2)
    by_rank = np.linspace(0, d - 1, half).round().astype(np.intp)
    targets = np.linspace(values[0], values[-1], half)
    by_value = np.clip(np.searchsorted(values, targets), 0, d - 1)
    return np.unique(np.concatenate([by_rank, by_value]))


def consistency_bands(
    p,
    *,
    seed: int,
    resamples: int = BAND_RESAMPLES,
    level: float = BAND_LEVEL,
    limit: int = GROUPS,
) -> dict:
    """Pointwise consistency band of the CORP curve under the calibration hypothesis.

    For b = 1, …, B draw o*ᵢ ~ Bernoulli(xᵢ) (xᵢ = pᵢ clipped to [0, 1]), fit PAV
    x ↦ x̂*_b(x), and give at each x of :func:`band_grid`

    .. math::

        \\bigl[\\,q_{(1-\\alpha)/2}\\{\\hat x^*_b(x)\\},\\;
                 q_{(1+\\alpha)/2}\\{\\hat x^*_b(x)\\}\\,\\bigr]

    (numpy's linear quantiles over b): Dimitriadis, Gneiting & Jordan (PNAS 2021), §3,
    with α = 0.90 and B = 100 as in their reliabilitydiag package. Ties in x share one
    draw count (a tie group of c examples at x gets Binomial(c, x) ones), so a resample
    is PAV over the d distinct values, all B at once by :func:`pool`. Above ``limit``
    distinct values the PAV runs on the groups of :func:`scoring.corp_pool.group_starts`,
    and a group of c examples of mean forecast x̄ gets Binomial(c, x̄) ones: the mean of
    the exact Σ Bernoulli(xᵢ) (a Poisson-binomial), and a variance c·x̄(1 − x̄) that
    exceeds its Σ xᵢ(1 − xᵢ) by only Σ (xᵢ − x̄)², the spread within a group (about
    c/(12·limit²) for evenly spread forecasts), negligible against c·x̄(1 − x̄) away from
    the ends. The band is given at forecast values, each with its group's refit.

    Parameters
    ----------
    p : array_like, shape (n,)
        The forecasts p(y = +1).
    seed : int
        Seed of the resampled outcomes (:func:`seed_for` (n, "bands") on the site).
    resamples : int
        B.
    level : float
        α, the pointwise coverage of the band.
    limit : int
        Most groups a refit runs on (:data:`scoring.corp_pool.GROUPS`).

    Returns
    -------
    dict
        ``{"points": [[x, lower, upper], …], "level": α, "resamples": B}``; no points
        when n = 0.
    """
    x = np.clip(np.asarray(p, dtype=np.float64).ravel(), 0.0, 1.0)
    out = {"points": [], "level": float(level), "resamples": int(resamples)}
    if x.size == 0:
        return out
    xs = np.sort(x)
    ties, starts = tie_starts(xs), group_starts(xs, limit=limit)
    count = np.diff(starts, append=xs.size)
    # A tie group's forecast as it is (exact results when the groups are the ties).
    low, high = xs[starts], xs[starts + count - 1]
    mean = np.where(low == high, low, np.add.reduceat(xs, starts) / count)
    d = starts.size
    rng = np.random.Generator(np.random.PCG64(seed))
    total = rng.binomial(count, mean, size=(resamples, d)).astype(np.float64)
    first = np.zeros((resamples, d), dtype=bool)
    first[:, 0] = True
    lo, block_count, block_total = pool(
        np.broadcast_to(count.astype(np.float64), (resamples, d)).ravel(),
        total.ravel(),
        first.ravel(),
    )
    values = xs[ties]
    grid = band_grid(values)
    group = np.searchsorted(starts, ties[grid], side="right") - 1
    where = (np.arange(resamples)[:, None] * d + group[None, :]).ravel()
    block = np.searchsorted(lo, where, side="right") - 1
    fitted = (block_total[block] / block_count[block]).reshape(resamples, grid.size)
    lower, upper = np.quantile(fitted, [(1 - level) / 2, (1 + level) / 2], axis=0)
    out["points"] = [
        [a, b, c]
        for a, b, c in zip(values[grid].tolist(), lower.tolist(), upper.tolist(), strict=True)
    ]
    return out


def inside(bands: dict, p, t) -> float | None:
    """The share of the band's points where the CORP curve lies inside the band.

    The PAV fit of o = 1{t = +1} on p, taken at each x of ``bands["points"]`` (x is a
    forecast value, so the fit is its tie group's value), against [lower, upper],
    bounds included. Under calibration this is about the band's level (each point's
    band is the central α-range of the refitted values there); far below it, the
    forecast is miscalibrated where the curve leaves the band. None without points.
    """
    points = np.asarray(bands.get("points") or [], dtype=np.float64).reshape(-1, 3)
    if points.shape[0] == 0:
        return None
    x = np.clip(np.asarray(p, dtype=np.float64), 0.0, 1.0)
    o = (np.asarray(t, dtype=np.float64) == 1).astype(np.float64)
    fit = decomposition.isotonic(x, o)
    ends = fit.p[fit.order[fit.hi]]  # the largest x of each block, increasing
    value = fit.value[np.searchsorted(ends, points[:, 0])]
    within = (points[:, 1] <= value) & (value <= points[:, 2])
    return float(np.mean(within))
