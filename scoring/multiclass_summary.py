"""The multiclass summary: every sum behind nlp, brier, 01l, ece, rmsce and sce (spec §7)
in one pass over n × L probabilities, and the checks of the arrays every multiclass loss
takes (scoring.multiclass re-exports what it needs of it).

:func:`summarize` runs the C kernel ``multiclass_sums`` when it is built, else
:func:`summarize_numpy` (numpy on blocks of rows): the same values to rounding. The side of
each rounded p on which its exact value lies (``resid``) decides the argmax on equal
doubles, the bin of a p on an edge and a one-hot row; the rows holding values below
2^-900 are decided on their exact fractions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from . import _accel
from .classification import ECE_BINS, bin_index
from .multiclass_ace import THREADED_SIZE, in_parts
from .multiclass_rows import exact_decisions

# Elements (rows × classes) the numpy path handles at a time: its temporaries stay small.
_BLOCK = 1 << 16
KERNEL_CLASSES = 1 << 20  # the C kernel's bound on L (spec §7 allows 1000)


def _labels(y, n_classes: int) -> np.ndarray:
    """``y`` as int64 class indices, checked to be integers in 0 … L−1."""
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"labels must be a 1-D array, got shape {y.shape}")
    if y.dtype.kind == "f":
        # (Compared before the cast, so that NaN or a huge value never reaches it.)
        if not ((y >= 0) & (y < n_classes) & (y == np.floor(y))).all():
            raise ValueError(f"labels must be class indices in 0..{n_classes - 1}")
        return y.astype(np.int64)
    if y.dtype.kind not in "iu" or not ((y >= 0) & (y < n_classes)).all():
        raise ValueError(f"labels must be class indices in 0..{n_classes - 1}")
    return np.ascontiguousarray(y, dtype=np.int64)  # (a strided view: the kernels read it)


def _probs(probs) -> np.ndarray:
    probs = np.ascontiguousarray(probs, dtype=np.float64)
    if probs.ndim != 2 or probs.shape[0] < 1 or probs.shape[1] < 1:
        raise ValueError(f"probs must be an n × L array with n, L ≥ 1, got shape {probs.shape}")
    return probs


def _check(probs, y, *, ranged: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """probs (n × L float64, C order) and y (n int64), checked; ``ranged``: every p in
    [0, 1] (NaN fails). Rows are expected to sum to 1 and are not checked for it."""
    probs = _probs(probs)
    y = _labels(y, probs.shape[1])
    if y.size != probs.shape[0]:
        raise ValueError(f"probs has {probs.shape[0]} rows but there are {y.size} labels")
    if ranged and not (probs.min() >= 0 and probs.max() <= 1):  # (NaN fails too)
        raise ValueError("probabilities must lie in [0, 1]")
    return probs, y


def _true(probs: np.ndarray, y: np.ndarray) -> np.ndarray:
    return probs[np.arange(y.size), y]


def _nll(p_true: np.ndarray) -> np.ndarray:
    """−ln p, +inf at 0, never −0.0 and never a divide-by-zero warning."""
    zero = p_true == 0
    terms = -np.log(np.where(zero, 1.0, p_true)) + 0.0
    terms[zero] = math.inf
    return terms


def _brier_rows(block: np.ndarray, y: np.ndarray) -> np.ndarray:
    diff = block.copy()
    diff[np.arange(y.size), y] -= 1.0
    return np.einsum("ij,ij->i", diff, diff)


def is_one_hot(probs) -> bool:
    """Every row one-hot (one 1, the rest 0): a non-probabilistic file (spec §7)."""
    probs = _probs(probs)
    return bool(
        ((probs == 0) | (probs == 1)).all() and (np.count_nonzero(probs == 1, axis=1) == 1).all()
    )


@dataclass(frozen=True)
class MulticlassSummary:
    """Every sum behind nlp, brier, 01l, ece, rmsce and sce, from one pass.

    ``nll`` Σ −ln p_i,y_i (inf when a true class got 0); ``brier`` Σ_i Σ_k (p_ik − 1{k = y_i})²;
    ``errors`` #{ŷ_i ≠ y_i}; ``point`` every row one-hot. ``top`` (B × 3): per confidence
    bin (m/B, (m+1)/B] the count, Σ c_i and Σ a_i. ``classwise`` (L × B × 3): per class k
    and bin of p_ik (the first bin [0, 1/B]) the count, Σ p_ik and #{y_i = k}. Per example:
    ``predicted`` ŷ_i, ``nll_terms`` −ln p_i,y_i, ``brier_rows``; ``labels`` y_i (int64).
    ``confidence`` c_i and ``confidence_sides`` (float32) the side of its exact value
    (ClassRows.resid at ŷ_i) when the summary was summed as the file was read
    (scoring.multiclass_blocks); None: taken from the rows when needed.
    """

    n: int
    classes: int
    nll: float
    brier: float
    errors: int
    point: bool
    top: np.ndarray = field(repr=False)
    classwise: np.ndarray = field(repr=False)
    predicted: np.ndarray = field(repr=False)
    nll_terms: np.ndarray = field(repr=False)
    brier_rows: np.ndarray = field(repr=False)
    labels: np.ndarray = field(repr=False)
    confidence: np.ndarray | None = field(default=None, repr=False)
    confidence_sides: np.ndarray | None = field(default=None, repr=False)

    def nlp(self, base: float = math.e) -> float:
        """−(1/n) Σ log_b p_i,y_i."""
        return math.inf if math.isinf(self.nll) else self.nll / self.n / math.log(base)

    def brier_score(self) -> float:
        """(1/n) Σ_i Σ_k (p_ik − 1{k = y_i})²."""
        return self.brier / self.n

    def zero_one(self) -> float:
        """(1/n) Σ (1 − a_i)."""
        return self.errors / self.n

    def ece(self) -> float:
        """Top-label ECE (Guo et al. 2017): Σ_m |B_m|/n · |acc(B_m) − conf(B_m)|, which is
        (1/n) Σ_m |Σ_{B_m} a − Σ_{B_m} c|."""
        count, conf, correct = self.top.T
        return float(math.fsum(np.abs(correct - conf).tolist()) / self.n)

    def rmsce(self) -> float:
        """sqrt(Σ_m |B_m|/n · (acc(B_m) − conf(B_m))²) over the ECE bins (Kumar et al. 2019)."""
        count, conf, correct = self.top[self.top[:, 0] > 0].T
        return math.sqrt(math.fsum(((correct - conf) ** 2 / count).tolist()) / self.n)

    def sce(self) -> float:
        """Static calibration error (Nixon et al. 2019):
        (1/L) Σ_k Σ_m |B_km|/n · |mean 1{y = k} − mean p_k| over B_km, which is
        (1/(nL)) Σ_k Σ_m |#{y = k in B_km} − Σ_{B_km} p_k|."""
        gaps = np.abs(self.classwise[:, :, 2] - self.classwise[:, :, 1])
        return float(math.fsum(gaps.ravel().tolist()) / self.n / self.classes)

    def nlp_terms(self, base: float = math.e) -> np.ndarray:
        """−log_b p_i,y_i per example (+inf where the true class got 0)."""
        return self.nll_terms / math.log(base)

    def brier_terms(self) -> np.ndarray:
        """Σ_k (p_ik − 1{k = y_i})² per example."""
        return self.brier_rows

    def zero_one_terms(self) -> np.ndarray:
        """1.0 where ŷ_i ≠ y_i, else 0.0."""
        return (self.predicted != self.labels).astype(np.float64)


def summarize(
    probs, y, *, n_bins: int = ECE_BINS, resid=None, exact: dict | None = None
) -> MulticlassSummary:
    """:func:`_summarize`, the rows of ``exact`` (row → its L exact values: rows holding
    values below 2^-900, :class:`scoring.multiclass_rows.ClassRows`) decided on those."""
    if not exact:
        return _summarize(probs, y, n_bins=n_bins, resid=resid)
    probs, y = _check(probs, y, ranged=False)
    n, n_classes = probs.shape
    special = np.zeros(n, dtype=bool)
    special[list(exact)] = True
    rest = ~special
    if rest.any():
        part = _summarize(
            probs[rest], y[rest], n_bins=n_bins, resid=None if resid is None else resid[rest]
        )
        top, classwise = part.top.copy(), part.classwise.copy()
        nll_sum, brier, errors, point = part.nll, part.brier, part.errors, part.point
    else:
        top, classwise = np.zeros((n_bins, 3)), np.zeros((n_classes, n_bins, 3))
        nll_sum, brier, errors, point = 0.0, 0.0, 0, True
    predicted = np.empty(n, dtype=np.int32)
    nll, rows = np.empty(n), np.empty(n)
    if rest.any():
        predicted[rest], nll[rest], rows[rest] = part.predicted, part.nll_terms, part.brier_rows
    top_conf, cw_sum = [top[:, 1].tolist()], [[] for _ in range(n_classes * n_bins)]
    for i in sorted(exact):
        p, t = probs[i].tolist(), int(y[i])
        arg, m, bins, nll[i], one_hot = exact_decisions(p, exact[i], t, n_bins)
        predicted[i] = arg
        rows[i] = math.fsum((x - (k == t)) ** 2 for k, x in enumerate(p))
        brier += rows[i]
        errors += arg != t
        point = point and one_hot
        top[m, 0] += 1
        top[m, 2] += arg == t
        top_conf.append([0.0] * m + [p[arg]])
        for k, b in enumerate(bins):
            classwise[k, b, 0] += 1
            cw_sum[k * n_bins + b].append(p[k])
        classwise[t, bins[t], 2] += 1
    top[:, 1] = [math.fsum(col) for col in zip(*_padded(top_conf, n_bins), strict=True)]
    flat = classwise.reshape(-1, 3)
    for c, values in enumerate(cw_sum):
        if values:
            flat[c, 1] = math.fsum([flat[c, 1], *values])
    nll_sum = math.fsum(nll.tolist())
    return MulticlassSummary(
        n, n_classes, nll_sum, brier, errors, point, top, classwise, predicted, nll, rows, y
    )


def _padded(lists: list[list[float]], width: int) -> list[list[float]]:
    return [values + [0.0] * (width - len(values)) for values in lists]


def _summarize(probs, y, *, n_bins: int = ECE_BINS, resid=None) -> MulticlassSummary:
    """The :class:`MulticlassSummary` of ``probs`` for classes ``y``, in one pass over n × L.

    The C kernel (compensated sums over runs of rows; a large input in two halves, on two
    threads where there are two processors) when it is built, else
    :func:`summarize_numpy`: the same values to rounding, checked against each other in
    the tests. ValueError for labels outside 0 … L−1 or a probability outside [0, 1].
    ``resid`` (n × L float32, :class:`scoring.multiclass_rows.ClassRows`): the side of each
    p its exact value lies on, which decides the argmax on equal doubles, the bin of a p
    on an edge and a one-hot row (spec §7).
    """
    probs, y = _check(probs, y, ranged=False)
    resid = _resid(resid, probs)
    native = _accel.native()
    n, n_classes = probs.shape
    if native is None or n_classes > KERNEL_CLASSES:
        return summarize_numpy(probs, y, n_bins=n_bins, resid=resid)
    predicted = np.empty(n, dtype=np.int32)
    nll, rows = np.empty(n), np.empty(n)
    cuts = [0, n // 2, n] if probs.size >= THREADED_SIZE else [0, n]

    def half(part: int):
        rows_of = slice(cuts[part], cuts[part + 1])
        top, classwise = np.empty((n_bins, 3)), np.empty((n_classes, n_bins, 3))
        sums = native.multiclass_sums(
            probs[rows_of], y[rows_of], n_classes, n_bins, predicted[rows_of], nll[rows_of],
            rows[rows_of], top, classwise, None if resid is None else resid[rows_of],
        )  # fmt: skip
        return None if sums is None else (*sums, top, classwise)

    parts = in_parts(half, len(cuts) - 1, size=probs.size)
    if any(part is None for part in parts):
        return summarize_numpy(probs, y, n_bins=n_bins, resid=resid)  # (it says what is wrong)
    nll_sum, brier, errors, point, top, classwise = parts[0]
    for other in parts[1:]:  # (counts add exactly; each compensated sum is rounded once)
        nll_sum, brier, errors = nll_sum + other[0], brier + other[1], errors + other[2]
        point, top, classwise = point and other[3], top + other[4], classwise + other[5]
    return MulticlassSummary(
        n, n_classes, nll_sum, brier, errors, point, top, classwise, predicted, nll, rows, y
    )


class Neumaier:
    """Compensated running sums of arrays (Neumaier): the block sums of the numpy path
    keep the accuracy of the C kernel's."""

    def __init__(self, shape):
        self.sum = np.zeros(shape)
        self.carry = np.zeros(shape)

    def add(self, x: np.ndarray) -> None:
        total = self.sum + x
        big = np.abs(self.sum) >= np.abs(x)
        self.carry += np.where(big, (self.sum - total) + x, (x - total) + self.sum)
        self.sum = total

    def value(self) -> np.ndarray:
        return self.sum + self.carry


def _resid(resid, probs: np.ndarray) -> np.ndarray | None:
    if resid is None:
        return None
    resid = np.ascontiguousarray(resid, dtype=np.float32)
    if resid.shape != probs.shape:
        raise ValueError(f"resid must have the shape of probs, got {resid.shape}")
    return resid


def _exact_bins(x: np.ndarray, r, n_bins: int) -> np.ndarray:
    """bin_index of x, moved up where x sits on an edge and its exact value (side ``r``)
    lies above it."""
    m = bin_index(x, n_bins=n_bins)
    if r is None:
        return m
    upper = (m + 1) / n_bins  # (the double edge (m+1)/B, as bin_index's edges)
    return m + ((m < n_bins - 1) & (r > 0) & (x == upper))


def _exact_argmax(block: np.ndarray, rb) -> np.ndarray:
    """The first k of the largest p_k, equal doubles ordered by their exact values."""
    arg = np.argmax(block, axis=1)
    if rb is None:
        return arg
    tied = block == block[np.arange(block.shape[0]), arg][:, None]
    many = np.flatnonzero(np.count_nonzero(tied, axis=1) > 1)
    if many.size:
        arg[many] = np.argmax(np.where(tied[many], rb[many], -np.inf), axis=1)
    return arg


def _exact_one_hot(block: np.ndarray, rb) -> bool:
    if rb is None:
        return is_one_hot(block)
    return bool((np.count_nonzero((block != 0) | (rb != 0), axis=1) == 1).all())


def summarize_numpy(probs, y, *, n_bins: int = ECE_BINS, resid=None) -> MulticlassSummary:
    """:func:`summarize` with numpy alone, on blocks of rows (small temporaries)."""
    probs, y = _check(probs, y, ranged=False)
    resid = _resid(resid, probs)
    n, n_classes = probs.shape
    predicted = np.empty(n, dtype=np.int32)
    nll, rows = np.empty(n), np.empty(n)
    top_count = np.zeros(n_bins, dtype=np.int64)
    top_correct = np.zeros(n_bins, dtype=np.int64)
    cw_count = np.zeros(n_classes * n_bins, dtype=np.int64)
    cw_hits = np.zeros(n_classes * n_bins, dtype=np.int64)
    top_conf, cw_sum = Neumaier(n_bins), Neumaier(n_classes * n_bins)
    offsets = np.arange(n_classes) * n_bins
    point = True
    step = max(1, _BLOCK // n_classes)
    for start in range(0, n, step):
        block, yb = probs[start : start + step], y[start : start + step]
        rb = None if resid is None else resid[start : start + step]
        if not ((block >= 0) & (block <= 1)).all():
            raise ValueError("probabilities must lie in [0, 1]")
        where = slice(start, start + yb.size)
        arg = _exact_argmax(block, rb)
        predicted[where] = arg
        at = np.arange(yb.size)
        conf = block[at, arg]
        p_true = _true(block, yb)
        nll[where] = _nll(p_true)
        rows[where] = _brier_rows(block, yb)
        point = point and _exact_one_hot(block, rb)
        m = _exact_bins(conf, None if rb is None else rb[at, arg], n_bins)
        top_count += np.bincount(m, minlength=n_bins)
        top_correct += np.bincount(m[arg == yb], minlength=n_bins)
        top_conf.add(np.bincount(m, weights=conf, minlength=n_bins))
        cells = (_exact_bins(block, rb, n_bins) + offsets).ravel()
        cw_count += np.bincount(cells, minlength=n_classes * n_bins)
        cw_sum.add(np.bincount(cells, weights=block.ravel(), minlength=n_classes * n_bins))
        hit = yb * n_bins + _exact_bins(p_true, None if rb is None else rb[at, yb], n_bins)
        cw_hits += np.bincount(hit, minlength=n_classes * n_bins)
    top = np.column_stack([top_count, top_conf.value(), top_correct]).astype(np.float64)
    classwise = np.column_stack([cw_count, cw_sum.value(), cw_hits]).astype(np.float64)
    infinite = bool(np.isinf(nll).any())
    nll_sum = math.inf if infinite else float(np.sum(nll))
    return MulticlassSummary(
        n=n,
        classes=n_classes,
        nll=nll_sum,
        brier=float(np.sum(rows)),
        errors=int(np.count_nonzero(predicted != y)),
        point=point,
        top=top,
        classwise=classwise.reshape(n_classes, n_bins, 3),
        predicted=predicted,
        nll_terms=nll,
        brier_rows=rows,
        labels=y,
    )
