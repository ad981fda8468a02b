"""Plot data for the site: reliability diagrams and PIT histograms."""

from __future__ import annotations

import numpy as np

from .pit import MeanPit, histogram_and_coverage

RELIABILITY_BINS = 10
PIT_BINS = 10
# Central intervals whose coverage is reported: 10 %, 20 %, …, 90 % and 95 %.
COVERAGE_LEVELS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95)


def reliability(p, t, *, n_bins: int = RELIABILITY_BINS) -> list[dict]:
    """Bins of p(y = +1): [k/B, (k+1)/B), the last one closed; count, mean p, frequency of +1.

    Empty bins are kept (count 0, the other fields None) so the diagram's x axis is fixed.
    """
    p = np.asarray(p, dtype=np.float64)
    o = np.asarray(t, dtype=np.float64) == 1
    # Compare with the edges themselves: floor(10·p) puts 0.8999999999999999 at 0.9.
    edges = np.arange(n_bins + 1) / n_bins
    bins = np.clip(np.searchsorted(edges, p, side="right") - 1, 0, n_bins - 1)
    count = np.bincount(bins, minlength=n_bins)
    sum_p = np.bincount(bins, weights=p, minlength=n_bins)
    sum_o = np.bincount(bins, weights=o, minlength=n_bins)
    out = []
    for k in range(n_bins):
        c = int(count[k])
        out.append(
            {
                "lower": k / n_bins,
                "upper": (k + 1) / n_bins,
                "count": c,
                "mean_predicted": float(sum_p[k] / c) if c else None,
                "observed_frequency": float(sum_o[k] / c) if c else None,
            }
        )
    return out


def pit_summary(pit, *, pit_low=None, n_bins: int = PIT_BINS) -> dict:
    """PIT histogram (equal-width bins on [0, 1]) and coverage of central intervals.

    A calibrated forecaster's PIT values are uniform; the central c-interval
    [F⁻¹((1−c)/2), F⁻¹((1+c)/2)] holds the target exactly when the PIT lies in
    [(1−c)/2, (1+c)/2]. Both are read off the mean PIT CDF F̄ (:mod:`scoring.pit`): with
    ``pit_low`` (F(t−), None: equal to ``pit``) each example's PIT is uniform on
    [``pit_low``, ``pit``], the non-randomised PIT of Czado, Gneiting & Held (2009,
    Biometrics 65), so a discrete forecast (an ensemble's verification rank, a point
    prediction) is spread over its interval instead of piled on one value. Bin j counts
    n·(F̄(b_{j+1}) − F̄(b_j)) examples, a fraction where an interval spans several bins
    (rounded to 1/1000, a whole number as an int); the coverage of level c is
    F̄((1+c)/2) − F̄((1−c)/2−), single values on either end inside. ``coverage`` is
    keyed by the level in per cent ("10", …, "95"), one per :data:`COVERAGE_LEVELS`.
    ``pit`` may also be a :class:`scoring.pit.MeanPit` (built once for this and the
    uniformity test).
    """
    mean_pit = MeanPit.of(pit, pit_low)
    n = mean_pit.n
    counts, covered = histogram_and_coverage(mean_pit, n_bins, COVERAGE_LEVELS)
    coverage = {
        f"{round(level * 100)}": value
        for level, value in zip(COVERAGE_LEVELS, covered, strict=True)
    }
    return {
        "bins": [
            {"lower": k / n_bins, "upper": (k + 1) / n_bins, "count": _count(c)}
            for k, c in enumerate(counts)
        ],
        "coverage": coverage,
        "n": int(n),
    }


def _count(c: float) -> int | float:
    """A bin's count for the stored plot data: to 1/1000, an int when whole (every count
    of a file of continuous predictions)."""
    c = round(float(c), 3)
    return int(c) if c.is_integer() else c
