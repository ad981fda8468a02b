"""Classification losses on arrays, shaped like scikit-learn metrics.

``p`` is p(y = +1 | x) per example and ``t`` the targets, +1 or −1.
References: Quiñonero-Candela et al., "Evaluating Predictive Uncertainty
Challenge" (MLCW 2005, LNAI 3944, 2006), §4.1; spec §3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from . import _accel

ECE_BINS = 15  # spec §3; the one definition (the C kernel takes it as an argument)


def _check(p, t) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(p, dtype=np.float64)
    t = np.asarray(t, dtype=np.float64)
    if p.shape != t.shape or p.ndim != 1:
        raise ValueError(f"p and t must be 1-D arrays of equal length, got {p.shape} and {t.shape}")
    o = t == 1
    if not (o | (t == -1)).all():
        raise ValueError("targets must be +1 or -1")
    if not ((p >= 0) & (p <= 1)).all():  # (NaN too)
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


def nlp_terms(p, t, *, base: float = math.e) -> np.ndarray:
    """Per-example terms of :func:`nlp`: −log_b(p_i if t_i = +1 else 1 − p_i), +inf at 0."""
    p, o = _check(p, t)
    prob = np.where(o, p, 1.0 - p)
    zero = prob == 0
    terms = -np.log(np.where(zero, 1.0, prob)) / math.log(base) + 0.0  # (+ 0.0: no −0.0)
    terms[zero] = math.inf
    return terms


def zero_one_terms(p, t) -> np.ndarray:
    """Per-example terms of :func:`zero_one`: 1.0 where misclassified, else 0.0."""
    p, o = _check(p, t)
    return np.where(o, p < 0.5, p >= 0.5).astype(np.float64)


def brier_terms(p, t) -> np.ndarray:
    """Per-example terms of :func:`brier`: (p_i − o_i)²."""
    p, o = _check(p, t)
    return (p - o) ** 2


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
    The bin edges are the doubles m/B themselves (spec §3), not c·B rounded, and c is
    compared exactly: 1 − p as the real number, not rounded to a double.
    """
    p, o = _check(p, t)
    high = p >= 0.5
    conf = np.where(high, p, 1.0 - p)
    correct = high == o
    edges = np.arange(n_bins + 1) / n_bins
    # ceil(c·B) − 1 is off by at most one next to an edge: one step each way fixes it.
    # The steps compare the exact confidence: p itself, or 1 − p as p against 1 − edge
    # (exact for edges in [1/2, 1]); 1 − p rounded could land on an edge it is above.
    bins = np.ceil(conf * n_bins).astype(np.intp)
    bins -= 1
    np.clip(bins, 0, n_bins - 1, out=bins)
    edge = edges[bins]
    bins -= np.where(high, p <= edge, p >= 1.0 - edge)
    edge = edges[bins + 1]
    bins += np.where(high, p > edge, p < 1.0 - edge)
    gap = np.abs(
        np.bincount(bins, weights=correct, minlength=n_bins)
        - np.bincount(bins, weights=conf, minlength=n_bins)
    )
    return float(gap.sum() / p.size)


def bin_index(x, *, n_bins: int = ECE_BINS) -> np.ndarray:
    """The equal-width bin of each value in [0, 1]: m with m/B < x ≤ (m+1)/B, and 0 for 0.

    The edges are the doubles m/B themselves (spec §3, §7), as in :func:`ece`: ⌈x·B⌉ − 1
    is off by at most one next to an edge, and one step each way against the edges fixes
    it. The first bin is [0, 1/B] (the class-wise bins of §7's ``sce`` hold zeros).
    """
    x = np.asarray(x, dtype=np.float64)
    edges = np.arange(n_bins + 1) / n_bins
    bins = np.ceil(x * n_bins).astype(np.intp)
    bins -= 1
    np.clip(bins, 0, n_bins - 1, out=bins)
    bins -= (bins > 0) & (x <= edges[bins])
    bins += x > edges[bins + 1]
    return bins


@dataclass(frozen=True)
class Summary:
    """Every sum behind nlp, 01l, brier and ece, from one pass over the examples.

    ``nll`` is Σ −ln(probability of the true class) (inf if one is 0), ``errors`` the
    misclassifications, ``brier`` Σ (p − o)², ``ece_gap`` Σ_m |correct_m − Σ_{B_m} c|,
    ``point`` whether every p is 0 or 1 (a non-probabilistic file).
    """

    n: int
    n_pos: int
    nll: float
    errors: int
    brier: float
    ece_gap: float
    point: bool
    keys: np.ndarray | None = field(default=None, repr=False, compare=False)  # for lift

    def nlp(self, base: float = math.e) -> float:
        return math.inf if math.isinf(self.nll) else self.nll / self.n / math.log(base)

    def zero_one(self) -> float:
        return self.errors / self.n

    def brier_score(self) -> float:
        return self.brier / self.n

    def ece(self) -> float:
        return self.ece_gap / self.n


def summarize(p, t, *, n_bins: int = ECE_BINS) -> Summary:
    """The :class:`Summary` of predictions ``p`` for targets ``t``, in one pass, its
    ECE over ``n_bins`` confidence bins (:func:`ece`).

    The C kernel (compensated sums over runs of 1,024 examples) when it is built, else
    numpy: the same values to rounding, checked against each other in the tests.
    """
    p = np.ascontiguousarray(p, dtype=np.float64)
    t = np.ascontiguousarray(t, dtype=np.float64)
    native = _accel.native()
    if native is not None and p.ndim == 1 and p.shape == t.shape and p.size:
        keys = np.empty(p.size, dtype=np.uint64)
        sums = native.classification_sums(p, t, keys, n_bins)
        if sums is not None:
            return Summary(p.size, *sums, keys=keys)
    return summarize_numpy(p, t, n_bins=n_bins)


def summarize_numpy(p, t, *, n_bins: int = ECE_BINS) -> Summary:
    """:func:`summarize` with numpy alone (and its ValueErrors for bad input)."""
    p, o = _check(p, t)
    n = p.size
    prob = np.where(o, p, 1.0 - p)
    nll = math.inf if (prob == 0).any() else float(-np.sum(np.log(prob)))
    return Summary(
        n=n,
        n_pos=int(np.count_nonzero(o)),
        nll=nll,
        errors=int(np.count_nonzero(np.where(o, p < 0.5, p >= 0.5))),
        brier=float(np.sum((p - o) ** 2)),
        ece_gap=ece(p, t, n_bins=n_bins) * n,
        point=is_point(p),
    )


# Examples handled at a time by lift: its temporaries stay small whatever n is.
_LIFT_CHUNK = 1 << 16


def lift(p, t) -> float | None:
    """LIFT loss, eqs. (13)-(16): the area lost to the ideal predictor, over a random one's.

    Sort by p decreasing; l(k/n) = (1/n̄₊)(1/k)·(positives among the top k);
    A = (1/n) Σ_k l(k/n); A_I = 1 + ½(1/n̄₊ − 1)(n̄₊ + 1); L = (A_I − A)/(A_I − 1).
    Inside a run of equal p the positives accrue evenly (ties broken in
    expectation). None (n/a) when every target has the same class.
    """
    p, o = _check(p, t)
    n = p.size
    n_pos = int(np.count_nonzero(o))
    if n_pos in (0, n):
        return None
    # One sort of 64-bit keys: p's bit pattern (p >= 0, so the patterns order as the
    # values; -0.0 becomes 0) above the class bit. Read backwards: highest p first.
    key = p.view(np.uint64) << np.uint64(1)
    key |= o
    return _lift_of_keys(key, n_pos)


def lift_of(summary: Summary, p, t) -> float | None:
    """:func:`lift` from a :class:`Summary` whose one pass also wrote the sort keys."""
    if summary.keys is None:
        return lift(p, t)
    if summary.n_pos in (0, summary.n):
        return None
    return _lift_of_keys(summary.keys, summary.n_pos)


def _lift_of_keys(key: np.ndarray, n_pos: int) -> float:
    """LIFT from the examples' keys (p's bit pattern above the class bit), sorted here in
    place."""
    n = key.size
    # Sorted as float64: the keys are below 0x7FE0000000000002, the patterns of finite
    # positive doubles, which order as the integers do; numpy sorts doubles faster.
    key.view(np.float64).sort()
    native = _accel.native()
    total = native.lift_sum(key) if native is not None else _lift_total(key[::-1])
    frac = n_pos / n
    area = total / n / frac
    ideal = 1.0 + 0.5 * (1.0 / frac - 1.0) * (frac + 1.0)
    return (ideal - area) / (ideal - 1.0)


def _lift_total(key: np.ndarray) -> float:
    """Σ_k cum(k)/k over the keys, highest p first, a part of whole runs at a time."""
    n = key.size
    total, before, i = 0.0, 0, 0
    while i < n:
        j = _run_boundary(key, i, min(i + _LIFT_CHUNK, n))
        part, pos = _lift_part(key[i:j], i, before)
        total += part
        before += pos
        i = j
    return total


def _run_boundary(key: np.ndarray, i: int, j: int) -> int:
    """j moved back to the start of the run of equal p holding it (or past a run
    that fills all of key[i:j]), so that no run is split between parts."""
    n = key.size
    if j >= n:
        return n
    value = key[j] >> np.uint64(1)
    ahead = np.count_nonzero((key[i:j] >> np.uint64(1)) != value)  # keys descend
    if ahead:
        return i + int(ahead)
    rest = (key[i:] >> np.uint64(1)) != value
    return n if not rest.any() else i + int(rest.argmax())


def _lift_part(key: np.ndarray, start: int, before: int) -> tuple[float, int]:
    """Σ_k cum(k)/k over positions start+1 .. start+len(key) (whole runs of equal p),
    and the positives among them; ``before`` positives rank above the part.

    In a run covering positions s+1 .. e with ``pos`` positives among L examples,
    cum(k) = b + pos·(k − s)/L, so Σ cum(k)/k = b·Σ 1/k + (pos/L)·Σ (k − s)/k: sums
    of positive terms only, without harmonic-number differences that cancel.
    """
    value = key >> np.uint64(1)
    positive = (key & np.uint64(1)).view(np.int64)
    k = np.arange(start + 1, start + key.size + 1, dtype=np.float64)
    new_run = np.empty(key.size, dtype=bool)
    new_run[0] = True
    np.not_equal(value[1:], value[:-1], out=new_run[1:])
    if new_run.all():  # no ties (the usual case): every run is one example
        # Σ cum(k)/k with cum(k) = before + positives up to k.
        cum = np.cumsum(
            positive, dtype=np.float64
        )  # (no np.dot: BLAS threads crawl on a busy machine)
        inverse = 1.0 / k
        return float(np.sum(cum * inverse)) + before * float(np.sum(inverse)), int(cum[-1])
    starts = np.flatnonzero(new_run)
    run = np.cumsum(new_run, dtype=np.intp) - 1  # run of each position
    s = (starts + start).astype(np.float64)  # positions ranked above each run
    inverse = np.add.reduceat(1.0 / k, starts)
    share = np.add.reduceat((k - s[run]) / k, starts)
    pos = np.add.reduceat(positive, starts)
    lengths = np.diff(starts, append=key.size)
    above = (before + np.cumsum(pos) - pos).astype(np.float64)
    part = float(np.sum(above * inverse)) + float(np.sum(pos / lengths * share))
    return part, int(pos.sum())


def is_point(p) -> bool:
    """Every probability 0 or 1: a non-probabilistic ("hard") submission."""
    p = np.asarray(p, dtype=np.float64)
    return bool(((p == 0) | (p == 1)).all())
