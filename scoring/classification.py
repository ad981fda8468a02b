"""Classification losses on arrays, shaped like scikit-learn metrics.

``p`` is p(y = +1 | x) per example and ``t`` the targets, +1 or −1.
References: Quiñonero-Candela et al., "Evaluating Predictive Uncertainty
Challenge" (MLCW 2005, LNAI 3944, 2006), §4.1; spec §3.
"""

from __future__ import annotations

import math

import numpy as np

ECE_BINS = 15


def _check(p, t) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(p, dtype=np.float64)
    t = np.asarray(t, dtype=np.float64)
    if p.shape != t.shape or p.ndim != 1:
        raise ValueError(f"p and t must be 1-D arrays of equal length, got {p.shape} and {t.shape}")
    o = t == 1
    if not (o | (t == -1)).all():
        raise ValueError("targets must be +1 or -1")
    if ((p < 0) | (p > 1)).any():
        raise ValueError("probabilities must lie in [0, 1]")
    return p, o


def nlp(p, t, *, base: float = math.e) -> float:
    """Negative log probability of the true class, eq. (12).

    L = −(1/n) Σ log_b(p_i if t_i = +1 else 1 − p_i); +inf when a true class got 0.
    """
    p, o = _check(p, t)
    prob = np.where(o, p, 1.0 - p)
    if (prob == 0).any():
        return math.inf
    return float(-np.mean(np.log(prob)) / math.log(base))


def zero_one(p, t) -> float:
    """Average classification error, eq. (11): p < 0.5 predicts −1, p ≥ 0.5 predicts +1."""
    p, o = _check(p, t)
    return float(np.mean(np.where(o, p < 0.5, p >= 0.5)))


def brier(p, t) -> float:
    """Brier score (1/n) Σ (p_i − o_i)², o_i = 1{t_i = +1}."""
    p, o = _check(p, t)
    return float(np.mean((p - o) ** 2))


def ece(p, t, *, n_bins: int = ECE_BINS) -> float:
    """Expected calibration error over equal-width confidence bins (m/B, (m+1)/B].

    Confidence c_i = max(p_i, 1 − p_i); a prediction is correct when it puts
    p ≥ 0.5 on +1 or p < 0.5 on −1; ECE = Σ_m |B_m|/n · |acc(B_m) − conf(B_m)|.
    """
    p, o = _check(p, t)
    conf = np.maximum(p, 1.0 - p)
    correct = (p >= 0.5) == o
    edges = np.arange(n_bins + 1) / n_bins
    bins = np.clip(np.searchsorted(edges, conf, side="left") - 1, 0, n_bins - 1)
    gap = np.abs(
        np.bincount(bins, weights=correct, minlength=n_bins)
        - np.bincount(bins, weights=conf, minlength=n_bins)
    )
    return float(gap.sum() / p.size)


def lift(p, t) -> float | None:
    """LIFT loss, eqs. (13)-(16): the area lost to the ideal predictor, over a random one's.

    Sort by p decreasing; l(k/n) = (1/n̄₊)(1/k)·(positives among the top k);
    A = (1/n) Σ_k l(k/n); A_I = 1 + ½(1/n̄₊ − 1)(n̄₊ + 1); L = (A_I − A)/(A_I − 1).
    Inside a run of equal p the positives accrue evenly (ties broken in
    expectation). None (n/a) when every target has the same class.
    """
    p, o = _check(p, t)
    n = p.size
    n_pos = int(o.sum())
    if n_pos in (0, n):
        return None
    # Runs of equal p, highest first, and how many positives have p >= each run's p.
    # (Temporaries are dropped as soon as they are used: n can be millions.)
    values = np.sort(p)[::-1]
    new_run = np.empty(n, dtype=bool)
    new_run[0] = True
    np.not_equal(values[1:], values[:-1], out=new_run[1:])
    starts = np.flatnonzero(new_run)
    del new_run
    run_p = values[starts]
    del values
    pos_sorted = np.sort(p[o])
    pos_upto = n_pos - np.searchsorted(pos_sorted, run_p, side="left")
    del pos_sorted, run_p
    ends = np.empty_like(starts)  # position k (1-based) of each run's last example
    ends[:-1] = starts[1:]
    ends[-1] = n
    # Inside a run the positives accrue evenly: cum(k) = before + pos·(k − s)/L for
    # s < k <= e, so Σ cum(k)/k = before·(H_e − H_s) + (pos/L)·(L − s·(H_e − H_s)),
    # with H the harmonic numbers.
    harmonic = np.empty(n + 1)
    harmonic[0] = 0.0
    np.cumsum(1.0 / np.arange(1, n + 1), out=harmonic[1:])
    dh = harmonic[ends] - harmonic[starts]
    del harmonic
    positives = np.diff(pos_upto, prepend=0)
    lengths = ends - starts
    del ends
    total = float(np.dot(pos_upto - positives, dh))
    total += float(np.sum(positives / lengths * (lengths - starts * dh)))
    frac = n_pos / n
    area = float(total / n) / frac
    ideal = 1.0 + 0.5 * (1.0 / frac - 1.0) * (frac + 1.0)
    return (ideal - area) / (ideal - 1.0)


def is_point(p) -> bool:
    """Every probability 0 or 1: a non-probabilistic ("hard") submission."""
    p = np.asarray(p, dtype=np.float64)
    return bool(((p == 0) | (p == 1)).all())
