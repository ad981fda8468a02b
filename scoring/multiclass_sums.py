"""Spec §7's sum rule for multiclass rows: each member's (or the single row's) probabilities
sum to 1 within 0.01, decided on the exact sum of the doubles where the computed sum is too
close to the bound to tell, and the message for a sum that is off (scores or logits, or too
few digits written)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

SUM_TOLERANCE = 0.01  # |Σ p − 1| ≤ 0.01 for each member, spec §7
# A computed sum of at most 1000 numbers in [0, 1] is within 1e-12 of the exact sum of
# the doubles: a sum this close to the tolerance is decided on the exact sum instead.
SUM_MARGIN = 1e-12
_FAR = 0.1  # a sum further than this from 1 is no rounding slip: scores or logits


def member_sums(v: np.ndarray) -> np.ndarray:
    """Each member's sum (rows × M): einsum's sum along the rows is several times as fast
    as ``sum(axis=2)``, and every path takes its sums here (the same values)."""
    return np.einsum("ijk->ij", v)


def sums_off(v: np.ndarray, sums: np.ndarray) -> np.ndarray:
    """Members whose probabilities sum to more than 0.01 away from 1: on the computed
    sums, and on the exact sum of the doubles where those are too close to tell."""
    deviation = np.abs(sums - 1)
    off = deviation > SUM_TOLERANCE + SUM_MARGIN
    close = np.abs(deviation - SUM_TOLERANCE) <= SUM_MARGIN
    for r, m in zip(*np.nonzero(close), strict=True):
        off[r, m] = _exactly_off(v[r, m].tolist(), above=bool(sums[r, m] > 1))
    return off


def _split(value: Fraction) -> list[float]:
    """Three doubles whose exact sum is within 1e-48 of ``value`` (near 1)."""
    parts = []
    for _ in range(3):
        parts.append(float(value - sum(map(Fraction, parts), Fraction(0))))
    return parts


# The bounds 1 ± 0.01, which no double is, as sums of three doubles.
_BOUNDS = {True: _split(Fraction(101, 100)), False: _split(Fraction(99, 100))}


def _exactly_off(member: list[float], *, above: bool) -> bool:
    """Whether the exact sum S of ``member``'s doubles lies beyond 1.01 (``above``) or
    below 0.99: fsum rounds S − bound once, so its sign is S's side of the bound unless
    they are within 1e-40 of each other, when exact fractions decide (a crafted file)."""
    gap = math.fsum([*member, *(-part for part in _BOUNDS[above])])
    if abs(gap) > 1e-40:
        return gap > 0 if above else gap < 0
    exact = sum(map(Fraction, member), Fraction(0))
    return abs(exact - 1) > Fraction(1, 100)


def sum_message(total: float, member: int, members: int) -> str:
    whose = "probabilities" if members == 1 else f"member {member + 1}'s probabilities"
    shown = _shown(total)
    if abs(total - 1) > _FAR:
        return f"{whose} sum to {shown}, not 1: are these scores or logits? apply a softmax"
    return (
        f"{whose} sum to {shown}, not 1 (within 0.01): write them with more digits, or "
        "divide each by their sum"
    )


def _shown(total: float) -> str:
    """The sum with 4 significant digits, more if that would hide how far from 1 it is."""
    for digits in (4, 6, 9, 12):
        text = f"{total:.{digits}g}"
        if abs(Fraction(text) - 1) > Fraction(1, 100):  # (as written, not as a double)
            return text
    return f"{total:.20g}"  # (the sum of the doubles, beyond the decimal bound)
