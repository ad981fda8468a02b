"""Error-free transformations and double-double arithmetic on numpy arrays.

A double-double is an unevaluated sum ``hi + lo`` of two doubles with |lo| ≤ ½ulp(hi),
about 106 bits of precision. The building blocks are exact (Knuth's TwoSum, Dekker's
TwoProduct with Veltkamp's split: Dekker, "A floating-point technique for extending
the available precision", Numer. Math. 18, 1971); numpy has no fused multiply-add,
so the split is used. Every function works elementwise on arrays of any shape.

:func:`exact_row_sums` sums each row of a matrix to double-double accuracy whatever
the cancellation, by Rump's extraction (Rump, Ogita & Oishi, "Accurate floating-point
summation part I: faithful rounding", SIAM J. Sci. Comput. 31, 2008): adding and
subtracting a power of two σ above the row's largest term cuts each term into a high
part on σ's grid, whose sum is exact, and a low part, which is summed the same way.

Inputs stay below 1e290 in magnitude (the split multiplies by 2**27 + 1, the extraction
adds 2**(e + 10)), which every caller guarantees (spec §1 bounds values by 1e100).
"""

from __future__ import annotations

import numpy as np

_SPLITTER = 134217729.0  # 2**27 + 1


def two_sum(a, b) -> tuple[np.ndarray, np.ndarray]:
    """s + e = a + b exactly, s = fl(a + b) (Knuth)."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


def fast_two_sum(a, b) -> tuple[np.ndarray, np.ndarray]:
    """s + e = a + b exactly when |a| ≥ |b| or a = 0 (Dekker)."""
    s = a + b
    return s, b - (s - a)


def _split(a) -> tuple[np.ndarray, np.ndarray]:
    c = _SPLITTER * a
    hi = c - (c - a)
    return hi, a - hi


def two_prod(a, b) -> tuple[np.ndarray, np.ndarray]:
    """p + e = a·b exactly (barring underflow), p = fl(a·b) (Dekker)."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def dd_add(ah, al, bh, bl) -> tuple[np.ndarray, np.ndarray]:
    """(ah + al) + (bh + bl) as a double-double (relative error ~2**-104)."""
    s, e = two_sum(ah, bh)
    t, f = two_sum(al, bl)
    e = e + t
    s, e = fast_two_sum(s, e)
    e = e + f
    return fast_two_sum(s, e)


def dd_mul(ah, al, bh, bl) -> tuple[np.ndarray, np.ndarray]:
    """(ah + al)·(bh + bl) as a double-double."""
    p, e = two_prod(ah, bh)
    e = e + (ah * bl + al * bh)
    return fast_two_sum(p, e)


def dd_div(ah, al, bh, bl) -> tuple[np.ndarray, np.ndarray]:
    """(ah + al)/(bh + bl) as a double-double (b ≠ 0): one correction of the
    quotient's remainder."""
    q1 = ah / bh
    p, e = two_prod(q1, bh)
    r = (((ah - p) - e) + al) - q1 * bl
    return fast_two_sum(q1, r / bh)


def exact_row_sums(terms: np.ndarray, max_passes: int = 60) -> tuple[np.ndarray, np.ndarray]:
    """Σ_j terms[i, j] for every row as a double-double (hi, lo), finite terms below 1e290:
    hi + lo is the exact sum to about 2**-104 of it (so hi is the sum rounded, as
    ``math.fsum`` rounds it, but for near-ties).

    Each pass takes σ = 2**(e + ⌈log2(M + 2)⌉) with 2**e above the row's largest |term|
    (M terms); ``(σ + x) − σ`` is x rounded to σ's grid of 2**(e + ⌈log2(M + 2)⌉ − 53),
    so the high parts and every partial sum of them (at most σ) are on that grid and
    exact; the low parts, each below the grid's step, go to the next pass, until nothing
    is left (each pass takes at least 53 − ⌈log2(M + 2)⌉ bits off; 2,100 bits span every
    double).
    """
    x = np.array(terms, dtype=np.float64)  # a copy: it is cut in place
    rows, m = x.shape
    shift = int(np.ceil(np.log2(m + 2)))
    parts = []
    for _ in range(max_passes):
        largest = np.max(np.abs(x), axis=1) if m else np.zeros(rows)
        if not largest.any():
            break
        exponent = np.frexp(largest)[1]  # largest < 2**exponent (0 gives 0)
        sigma = np.ldexp(1.0, exponent + shift)[:, None]
        high = (sigma + x) - sigma
        x -= high
        parts.append(high.sum(axis=1))
    hi, lo = np.zeros(rows), np.zeros(rows)
    for part in reversed(parts):  # smallest first: each part is exact
        hi, lo = dd_add(hi, lo, part, np.zeros(rows))
    return hi, lo
