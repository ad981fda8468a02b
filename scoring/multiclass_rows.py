"""The predictions of a valid multiclass file (spec §7), as the losses take them.

:func:`scoring.multiclass_parse.read_multiclass` fills a :class:`ClassRows`: every member
(or single row) divided by its own sum, the members of an ensemble row averaged, and
what the ensemble's uncertainty needs kept beside (the member count and the members'
mean entropy), so that no loss reads the file again.
"""

from __future__ import annotations

import bisect
import functools
import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from . import _accel

# Below this a double-double loses digits (subnormal remainders): such rows are taken
# with exact fractions (rare: softmax outputs near 1e-300 and crafted files).
TINY = 2.0**-900
# The side (exact − p)/p of a p, at most 2^-53 in size, is kept as a float32 times 2^180:
# nonzero down to 1e-99 (a row with a smaller one is taken exactly).
SIDE_SCALE = 2**180


@dataclass(frozen=True)
class ClassRows:
    """Per-example multiclass predictions.

    ``probs``: n × L float64, row i the probabilities p_i of classes 0 … L−1 (each member
    normalised by its own sum, the members averaged). ``members``: n int32, 1 for a row
    of L numbers, M for an ensemble row of M·L. ``member_entropy``: n float64, the mean
    of the members' entropies (1/M) Σ_m H(p_i^m) in nats for ensemble rows, NaN for
    single rows (the data uncertainty of spec §7). A file without ensemble rows gets both
    as read-only views of one value (no n-long arrays written for nothing).
    """

    probs: np.ndarray
    members: np.ndarray
    member_entropy: np.ndarray
    # Every row of the whole file one-hot, for a part of a file (spec §7 decides a
    # non-probabilistic file on the whole file, never per part); None: decide on these rows.
    point: bool | None = None
    # n × L float32: which side of each rounded p_ik its exact value lies on,
    # (exact − p)/p · 2^180 (where p is 0: exact · 2^1074, nonzero for an exact value below
    # the smallest double);
    # None: every p exact. Spec §7 decides bins, argmax, order and one-hot rows on the
    # exact values.
    resid: np.ndarray | None = None
    # The rows holding values below 2^-900, exactly (row → L fractions): there a float32
    # side cannot tell near ties apart (scoring.multiclass decides these rows on them).
    exact: dict | None = None
    # The summary of these rows for the targets they were read with, summed while the file
    # was read (scoring.multiclass_blocks); None: computed when first needed. A subset
    # never keeps it.
    summary: Any = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        n = self.probs.shape[0] if self.probs.ndim == 2 else -1
        if n < 0 or self.members.shape != (n,) or self.member_entropy.shape != (n,):
            raise ValueError(
                "expected probs of n × L, and n member counts and member entropies; got "
                f"{self.probs.shape}, {self.members.shape} and {self.member_entropy.shape}"
            )

    @property
    def n(self) -> int:
        return int(self.probs.shape[0])

    @property
    def classes(self) -> int:
        """L."""
        return int(self.probs.shape[1])

    @functools.cached_property
    def has_ensembles(self) -> bool:
        """Some row is an ensemble row (M ≥ 2): tu, du and mi are reported."""
        return bool((self.members > 1).any())

    def subset(self, mask: np.ndarray) -> ClassRows:
        """The rows where ``mask`` (a boolean array of n) is True."""
        resid = None if self.resid is None else self.resid[mask]
        exact = None
        if self.exact:
            mask = np.asarray(mask)
            if mask.dtype != bool:
                mask = np.isin(np.arange(self.n), mask)  # (an index array: as a mask)
            place = np.cumsum(mask) - 1
            exact = {int(place[i]): v for i, v in self.exact.items() if mask[i]}
        return ClassRows(
            self.probs[mask],
            self.members[mask],
            self.member_entropy[mask],
            self.point,
            resid,
            exact,
        )

    @classmethod
    def single(cls, probs: np.ndarray) -> ClassRows:
        """Rows of L probabilities, no ensemble (a baseline, a test's predictions)."""
        probs = np.ascontiguousarray(probs, dtype=np.float64)
        n = probs.shape[0] if probs.ndim == 2 else 0
        return cls(probs, np.ones(n, dtype=np.int32), np.full(n, np.nan))


def normalise(v: np.ndarray, probs: np.ndarray, resid: np.ndarray) -> dict:
    """Rows ``v`` (rows × M × L, every value in [0, 1], each member's sum near 1) into
    ``probs`` (rows × L, C order): each member divided by its exact sum and the members
    averaged, rounded to the nearest double, and into ``resid`` (rows × L float32) the side
    of each the exact value lies on (:class:`ClassRows`). Double-double arithmetic (the C
    kernel ``normalise_rows``, else :func:`normalise_numpy`, the same operations); rows
    with values below 2^-900 exactly, with fractions: returned, row (in ``v``) → the L
    exact values."""
    v = np.ascontiguousarray(v, dtype=np.float64)
    rows, members, classes = v.shape
    flags = np.zeros(rows, dtype=np.uint8)
    native = _accel.native()
    if native is not None:
        flagged = native.normalise_rows(v, members, classes, probs, resid, flags)
    else:
        flagged = normalise_numpy(v, probs, resid, flags)
    if not flagged:
        return {}
    return {i: _exact_row(v[i], probs[i], resid[i]) for i in np.flatnonzero(flags).tolist()}


def _two_sum(a, b):
    """a + b and its rounding error (Knuth's TwoSum, as the C kernel)."""
    t = a + b
    back = t - a
    return t, (a - (t - back)) + (b - back)


_SPLIT = 134217729.0  # 2^27 + 1 (Veltkamp)


def _product_error(a, b, prod):
    """a·b − prod exactly (Dekker), prod the rounded a·b: the C kernel's fma."""
    with np.errstate(over="ignore", invalid="ignore"):
        ca, cb = _SPLIT * a, _SPLIT * b
        ah = ca - (ca - a)
        bh = cb - (cb - b)
        al, bl = a - ah, b - bh
        return ((ah * bh - prod) + ah * bl + al * bh) + al * bl


def normalise_numpy(v, probs, resid, flags) -> int:
    """:func:`normalise` with numpy (the C kernel's operations); returns the rows flagged."""
    rows, members, classes = v.shape
    hi = lo = None
    for m in range(members):
        x = v[:, m, :]
        s, c = np.zeros(rows), np.zeros(rows)
        for k in range(classes):
            s, err = _two_sum(s, x[:, k])
            c += err
        sh = s + c
        sl = c - (sh - s)
        q = x / sh[:, None]
        e = (_fma_neg(q, sh[:, None], x) - q * sl[:, None]) / sh[:, None]
        if m == 0:
            hi, lo = q, e
        else:
            hi, err = _two_sum(hi, q)
            lo = lo + (err + e)
    h = hi + lo
    hl = lo - (h - hi)
    q = h / members
    e = (_fma_neg(q, float(members), h) + hl) / members
    p = q + e
    res = e - (p - q)
    probs[...] = p
    with np.errstate(divide="ignore", invalid="ignore", under="ignore"):
        side = np.where(p != 0, res / np.where(p != 0, p, 1.0) * SIDE_SCALE, 0.0)
        resid[...] = np.clip(side, -(2.0**127), 2.0**127)  # (beyond: a subnormal p, exact)
    lost = (res != 0) & (resid == 0)  # (a side too small for a float32 even scaled)
    tiny = ((v > 0) & (v < TINY)).reshape(rows, -1).any(axis=1)
    tiny |= ((p > 0) & (p < TINY)).any(axis=1) | lost.any(axis=1)
    flags[...] = tiny
    return int(np.count_nonzero(tiny))


def _fma_neg(q, b, h):
    """fma(−q, b, h) = h − q·b with one rounding (exact here: q·b is within an ulp of h)."""
    prod = q * b
    return (h - prod) - _product_error(q, b, prod)


def _exact_row(values: np.ndarray, probs: np.ndarray, resid: np.ndarray) -> list[Fraction]:
    """One row (M × L) with fractions: p the nearest double of each exact value."""
    members, classes = values.shape
    exact = [Fraction(0)] * classes
    for member in values.tolist():
        parts = [Fraction(x) for x in member]
        total = sum(parts, Fraction(0))
        exact = [a + b / total for a, b in zip(exact, parts, strict=True)]
    exact = [value / members for value in exact]
    for k, value in enumerate(exact):
        p = float(value)
        probs[k] = p
        side = (value - Fraction(p)) / Fraction(p) * SIDE_SCALE if p else value * 2**1074
        resid[k] = float(max(min(side, 2**127), -(2**127)))
    return exact


def exact_bin(value: Fraction, n_bins: int) -> int:
    """The bin of an exact value in [0, 1]: m/B < value ≤ (m+1)/B, the edges the doubles
    m/B, the first bin [0, 1/B]."""
    return max(bisect.bisect_left(_edges(n_bins), value) - 1, 0)


@functools.cache
def _edges(n_bins: int) -> list[Fraction]:
    return [Fraction(m / n_bins) for m in range(n_bins + 1)]


def exact_decisions(p: list[float], exact: list[Fraction], y: int, n_bins: int):
    """One row's decisions on its exact values (spec §7): (ŷ, bin of c, the bins of every
    p_k, −ln p_y (inf for an exact 0; from the exact value under the smallest normal
    double), one-hot)."""
    top = max(exact)
    arg = exact.index(top)
    bins = [exact_bin(value, n_bins) for value in exact]
    value = exact[y]
    if value == 0:
        nll = math.inf
    elif p[y] >= 2.2250738585072014e-308:
        nll = -math.log(p[y]) + 0.0
    else:
        nll = math.log(value.denominator) - math.log(value.numerator)
    one_hot = sum(1 for v in exact if v) == 1
    return arg, bins[arg], bins, nll, one_hot
