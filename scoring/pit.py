"""The mean PIT distribution of a set of predictions, continuous or discrete.

Example i's probability integral transform is uniform on an interval [l_i, u_i]: the
non-randomised PIT of Czado, Gneiting & Held (2009, Biometrics 65, "Predictive model
assessment for count data", §2.1), [F(t−), F(t)], a single value l_i = u_i = F(t) for a
continuous predictive distribution. Its CDF is

    F_i(u) = 0 for u < l_i,  (u − l_i)/(u_i − l_i) for l_i ≤ u ≤ u_i,  1 for u > u_i

(a step at l_i when l_i = u_i), and the mean PIT CDF F̄(u) = (1/n) Σ_i F_i(u) is what
the PIT histogram, the coverage of central intervals and the uniformity test are built
from (:func:`scoring.plots.pit_summary`,
:func:`scoring.decomposition.pit_uniformity_test`): for a calibrated forecaster F̄ is
the uniform CDF in expectation. Deterministic: no randomisation, the same file gives
the same figures.
"""

from __future__ import annotations

import numpy as np

# An interval narrower than this is taken as a point mass at its upper end: 1/width
# enters the prefix sums below, and no interval the scoring makes is this narrow (a
# sample's is at least 1/1001 wide). F̄ moves by at most the width, and only on it.
NARROW = 1e-6


def pit_intervals(pit, pit_low=None) -> tuple[np.ndarray, np.ndarray]:
    """(l, u): the PIT intervals as flat arrays clipped to [0, 1] with l ≤ u; ``pit_low``
    None gives single values (l = u = ``pit``). NaN values (no prediction) are dropped.
    Arrays already so are returned as they are (no copy: the scoring's PIT values are)."""
    high = np.asarray(pit, dtype=np.float64).ravel()
    low = high if pit_low is None else np.asarray(pit_low, dtype=np.float64).ravel()
    if low.shape != high.shape:
        raise ValueError(f"pit_low has {low.size} values, pit {high.size}")
    # (min and max are NaN when a value is: then the careful path)
    clean = high.size == 0 or (low.min() >= 0.0 and high.max() <= 1.0)
    if clean and (low is high or not (low > high).any()):
        return low, high
    high = np.clip(high, 0.0, 1.0)
    low = high if pit_low is None else np.minimum(np.clip(low, 0.0, 1.0), high)
    keep = ~(np.isnan(low) | np.isnan(high))
    if not keep.all():
        low, high = low[keep], high[keep]
    return low, high


class MeanPit:
    """n·F̄ at any points, for the PIT intervals [l_i, u_i] (:func:`pit_intervals`).

    With the point masses P (l_i = u_i) and the intervals I (w_i = u_i − l_i > 0),

        n·F̄(x) = #{p ∈ P: p ≤ x} + #{i ∈ I: u_i ≤ x} + x·A(x) − B(x),
        A(x) = Σ_{l_i < x < u_i} 1/w_i,  B(x) = Σ_{l_i < x < u_i} l_i/w_i,

    and A, B are differences of prefix sums over the l_i and the u_i in sorted order, so
    that each point costs a few binary searches. The left limit n·F̄(x−) counts the
    point masses p < x instead (the interval part is continuous).
    """

    def __init__(self, low, high):
        """From :func:`pit_intervals`' (l, u); :meth:`of` takes PIT values as given."""
        self.n = high.size
        if low is high:  # single values only (a file of continuous predictions)
            self.points, low, high, width = np.sort(high), high[:0], high[:0], high[:0]
        else:
            width = high - low
            point = width < NARROW
            if point.any():
                self.points = np.sort(high[point])
                keep = ~point
                low, high, width = low[keep], high[keep], width[keep]
            else:
                self.points = high[:0]
        # Few arrays of n, each written in place: on a 200,000-row file every fresh one
        # costs about as much in page faults as the arithmetic on it.
        by_low, by_high = np.argsort(low), np.argsort(high)
        self.low, self.high = low[by_low], high[by_high]
        self.a_low, self.b_low = _sums(width, by_low, self.low)
        self.a_high, self.b_high = _sums(width, by_high, low[by_high])

    @classmethod
    def of(cls, pit, pit_low=None) -> MeanPit:
        """The mean PIT of PIT values (``pit_low`` None) or intervals [``pit_low``, ``pit``];
        a MeanPit itself is returned as it is (so that one sorting serves several uses)."""
        if isinstance(pit, MeanPit):
            if pit_low is not None:
                raise ValueError("pit_low goes with PIT values, not with a MeanPit")
            return pit
        return cls(*pit_intervals(pit, pit_low))

    def counts(self, x) -> tuple[np.ndarray, np.ndarray]:
        """(n·F̄(x), n·F̄(x−)) at the points ``x`` (float arrays, fractional counts)."""
        x = np.asarray(x, dtype=np.float64)
        started = np.searchsorted(self.low, x, side="left")  # l < x
        ended = np.searchsorted(self.high, x, side="right")  # u ≤ x
        a = self.a_low[started] - self.a_high[ended]
        b = self.b_low[started] - self.b_high[ended]
        inside = x * a - b
        # (rounding may leave the straddling intervals' share just outside [0, their count])
        inside = np.clip(inside, 0.0, (started - ended).astype(np.float64))
        continuous = ended + inside
        at = continuous + np.searchsorted(self.points, x, side="right")
        before = continuous + np.searchsorted(self.points, x, side="left")
        return at, before

    def breakpoints(self) -> np.ndarray:
        """0, 1 and every end of an interval or point mass (not in order): F̄ is linear
        between consecutive ones (with a jump at a point mass)."""
        # (each array is sorted already: its distinct values cost one pass, not a sort;
        # a value in two of them is merely evaluated twice)
        parts = [np.array([0.0, 1.0])] + [_distinct(a) for a in (self.points, self.low, self.high)]
        return np.concatenate(parts)


def _sums(width, order, low_ordered) -> tuple[np.ndarray, np.ndarray]:
    """0 and the running sums of 1/w and of l/w in ``order`` (n + 1 values each)."""
    a = np.empty(width.size + 1)
    b = np.empty(width.size + 1)
    a[0] = b[0] = 0.0
    np.take(width, order, out=a[1:])
    np.divide(1.0, a[1:], out=a[1:])
    np.multiply(low_ordered, a[1:], out=b[1:])
    np.cumsum(a[1:], out=a[1:])
    np.cumsum(b[1:], out=b[1:])
    return a, b


def _distinct(values) -> np.ndarray:
    """The distinct values of a sorted array (one pass, no sort)."""
    if values.size == 0:
        return values
    keep = np.empty(values.size, dtype=bool)
    keep[0] = True
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    return values[keep]


def histogram_and_coverage(mean_pit: MeanPit, n_bins: int, levels) -> tuple[np.ndarray, list]:
    """The histogram's fractional counts and the central coverages, from one evaluation
    of F̄ (at the bins' edges and the central intervals' ends).

    Bin j counts n·(F̄(b_{j+1}) − F̄(b_j)) over [b_j, b_{j+1}), the last bin closed,
    b = np.linspace(0, 1, n_bins + 1): np.histogram's bins and edges, so that single PIT
    values are counted exactly as it counts them. The coverage of level c is
    F̄((1 + c)/2) − F̄((1 − c)/2−): the share of PIT mass in the closed central interval
    (a PIT value on either end is inside, as a target on a quantile of the central
    interval is); None when there is no example.
    """
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    ends = np.array([((1 - c) / 2, (1 + c) / 2) for c in levels], dtype=np.float64).reshape(-1)
    at, before = mean_pit.counts(np.concatenate([edges, ends]))
    upper = before[1 : n_bins + 1].copy()
    upper[-1] = at[n_bins]  # (the last bin holds the values at 1)
    counts = upper - before[:n_bins]
    at, before = at[n_bins + 1 :], before[n_bins + 1 :]
    n = mean_pit.n
    coverage = [
        float((at[2 * k + 1] - before[2 * k]) / n) if n else None for k in range(len(levels))
    ]
    return counts, coverage


def ks_distance(mean_pit: MeanPit) -> float:
    """sup_u |F̄(u) − u| on [0, 1]: F̄ is linear between its breakpoints, so the sup is
    at one of them, approached from the left or the right."""
    n = mean_pit.n
    points = mean_pit.points
    if mean_pit.low.size == 0 and points.size == n > 0:
        # Single values only (a file of continuous predictions): F̄ steps at each distinct
        # value, from the start of its run in the sorted values to the end (what counts'
        # searches would find, without them); 0 and 1 are evaluated.
        starts = np.flatnonzero(np.r_[True, points[1:] != points[:-1]])
        x = np.concatenate([points[starts], [0.0, 1.0]])
        at, before = mean_pit.counts(x[-2:])
        at = np.concatenate([np.r_[starts[1:], n].astype(np.float64), at])
        before = np.concatenate([starts.astype(np.float64), before])
    else:
        x = mean_pit.breakpoints()
        at, before = mean_pit.counts(x)
    return float(max(np.max(np.abs(at / n - x)), np.max(np.abs(before / n - x))))
