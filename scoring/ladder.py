"""What a leaderboard shows while it still gives feedback: the parameter-free Ladder.

On a leaderboard of exact scores a participant can overfit the public part of a test
set by submitting many variations and keeping whichever improves the shown score
(Whitehill 2017, "Climbing the Kaggle leaderboard by exploiting the log-loss oracle";
Blum & Hardt 2015, "The Ladder: A Reliable Leaderboard for Machine Learning
Competitions", ICML). The parameter-free Ladder (Blum & Hardt, algorithm 2) shows a
participant's score only when a new entry beats the shown one by more than the standard
error of their paired difference, rounded to that precision.

For one participant, with R_0 = +inf and, for entry t, its per-example loss terms l_t
(mean = the loss; lower is better) and the terms l_best of the entry that set the shown
score::

    s_t = std(l_t − l_best, ddof=1) / sqrt(n)          (l_best = 0 for the first entry)
    R_t = round(mean(l_t), u_t)   if mean(l_t) < mean(l_best) − s_t   (accepted: best ← t)
    R_t = R_{t−1}                 otherwise

The comparison is with the shown entry's exact mean, not with the rounded R_{t−1}
(against a score rounded up, the same file resubmitted would look better).
``round(x, u)`` rounds x to the unit u_t = ``rounding_unit(s_t, min_precision)``: the
power of ten of s_t's first significant digit (0.0123 → 0.01, 4.2 → 1, 37 → 10), never
finer than ``min_precision`` (the site passes 1/n, Blum & Hardt's rounding). s = 0
(identical entries, or a single example) with no floor means exact: no rounding and a
strict comparison.

Infinite terms (a probability 0 on the true class): an entry whose mean is +inf is
shown (+inf) only as the first entry and never accepted later; an entry with a finite
mean after a shown +inf is accepted with the first entry's threshold
std(l_t, ddof=1)/sqrt(n). Nothing here produces NaN.

Also here: the public/private mask of a test set (which examples give feedback). The
seeded simulation of the probing attack and of an honest participant under exact and
Ladder feedback is in ``scoring.ladder_simulation``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal

import numpy as np


@dataclass(frozen=True)
class Step:
    """One round of the Ladder."""

    shown: float  # R_t: the score shown after this entry (rounded), may be +inf
    threshold: float  # s_t used for this entry (0.0 allowed, +inf for infinite terms)
    accepted: bool  # this entry set the shown score
    best: int  # index (0-based, into the sequence) of the entry whose score is shown
    # The unit an accepted entry's score is rounded to (``rounding_unit``): a power of
    # ten, 0 for exact. The only precision ever published: the threshold itself, a
    # statistic of the hidden terms, stays on the server. Not compared: two steps are
    # equal by what is shown.
    precision: float = field(default=0.0, compare=False)


def rounding_unit(threshold: float, min_precision: float = 0.0) -> float:
    """The power of ten a score accepted with ``threshold`` is shown to: that of the
    threshold's first significant digit (0.0123 → 0.01), but never finer than
    ``min_precision`` (the site passes 1/n, Blum & Hardt's own rounding: 1/200 → 0.01,
    1/1000 → 0.001), so that a change of every prediction by a hair, with its tiny
    threshold, cannot show a score to many digits. 0.0 means exact (threshold 0 and no
    floor); +inf thresholds take the floor alone."""
    places = decimals(threshold)
    if min_precision:
        floor = math.floor(-math.log10(float(min_precision)) + 1e-9)
        places = floor if places is None else min(places, floor)
    return 0.0 if places is None else float(Decimal(1).scaleb(-places))


def _terms(values, name: str) -> np.ndarray:
    terms = np.asarray(values, dtype=np.float64)
    if terms.ndim != 1:
        raise ValueError(
            f"{name} must be a 1-D array of per-example terms, got shape {terms.shape}"
        )
    if terms.size == 0:
        raise ValueError(f"{name} must hold at least one example")
    if not (terms > -np.inf).all():  # False for NaN and -inf
        raise ValueError(f"{name} must be finite or +inf (no NaN, no -inf)")
    return terms


def _mean(terms: np.ndarray) -> float:
    """The loss: +inf as soon as one term is +inf (terms hold no NaN nor −inf)."""
    return float(np.mean(terms))


def threshold(new_terms, best_terms=None) -> float:
    """The standard error of the paired per-example difference.

    ``s = std(l_new − l_best, ddof=1) / sqrt(n)`` (Blum & Hardt 2015, parameter-free
    Ladder), with ``l_best = 0`` when ``best_terms`` is None (a first entry).

    Where both entries have a +inf term they are equally (infinitely) bad there: the
    difference is 0, not NaN. Any other infinite difference gives +inf (no finite
    standard error). One example (n = 1) has no standard error: 0.0, i.e. exact.

    Parameters
    ----------
    new_terms
        1-D per-example loss terms of the new entry (finite or +inf).
    best_terms
        The same for the entry that set the shown score, of the same length; None for
        the first entry.

    Returns
    -------
    float
        s ≥ 0, possibly +inf.
    """
    new = _terms(new_terms, "new_terms")
    if best_terms is None:
        difference = new
    else:
        best = _terms(best_terms, "best_terms")
        if best.shape != new.shape:
            raise ValueError(f"best_terms has {best.size} examples where new_terms has {new.size}")
        with np.errstate(invalid="ignore"):
            difference = new - best
        if not np.isfinite(difference).all():
            both = np.isposinf(new) & np.isposinf(best)
            difference = np.where(both, 0.0, difference)
    if not np.isfinite(difference).all():
        return math.inf
    n = difference.size
    if n < 2:
        return 0.0
    return float(np.std(difference, ddof=1) / math.sqrt(n))


def _check_threshold(threshold: float) -> float:
    threshold = float(threshold)
    if math.isnan(threshold) or threshold < 0:
        raise ValueError(f"a threshold must be ≥ 0 (or +inf), got {threshold!r}")
    return threshold


def decimals(threshold: float) -> int | None:
    """Decimals to show a score at the precision of ``threshold``.

    The position of the threshold's first significant digit: 0.0123 → 2, 0.3 → 1,
    4.2 → 0, 37 → −1 (tens). The digit is read from the shortest decimal that round-trips
    the float (``repr``), so 0.001 → 3 and 1e-05 → 5 whatever the binary error.

    Returns
    -------
    int or None
        None when the threshold is 0 (exact) or +inf (no precision).
    """
    threshold = _check_threshold(threshold)
    if threshold == 0 or math.isinf(threshold):
        return None
    return -Decimal(repr(threshold)).adjusted()


def round_to(value: float, threshold: float) -> float:
    """``value`` rounded to the decimal position of ``threshold``'s first significant digit.

    Python's correctly rounded ``round(value, decimals(threshold))`` (to the nearest;
    ties, exact in binary, to even): round_to(0.2349, 0.0123) = 0.23,
    round_to(234.9, 37) = 230.0. Unchanged when the threshold is 0 or +inf, or the value
    is infinite (+inf stays +inf).
    """
    value = float(value)
    if math.isnan(value):
        raise ValueError("cannot round NaN")
    places = decimals(threshold)
    if places is None or math.isinf(value):
        return value
    return float(round(value, places))


def _index(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return int(value)


def step(
    new_terms,
    *,
    shown: float | None,
    best_terms=None,
    index: int,
    best: int | None,
    min_precision: float = 0.0,
    first_floor: float = 0.0,
) -> Step:
    """One round of the parameter-free Ladder (Blum & Hardt 2015).

    Parameters
    ----------
    new_terms
        1-D per-example loss terms of entry ``index`` (mean = its loss).
    shown
        R_{t−1}, the score shown before this entry; None when there is no entry yet.
    best_terms
        The terms of the entry whose score is shown (needed when ``shown`` is finite).
    index
        This entry's 0-based position in the participant's sequence.
    best
        The index of the entry whose score is shown; None exactly when ``shown`` is None.
    min_precision
        The finest rounding unit of a shown score (the site uses 1/n).
    first_floor
        The smallest threshold an entry with nothing to beat (a first entry, or one after
        a shown +inf) is rounded with: its own threshold std(l)/sqrt(n) is ~0 for a file
        that is constant but for one row, whose score would then be shown to 1/n and tell
        that row's label (the site uses 1/sqrt(n), an honest first entry's threshold
        for terms of unit spread). Not used for acceptance.

    Returns
    -------
    Step
        With ``s = threshold(new_terms, best_terms)`` (``threshold(new_terms)`` for a
        first entry or after a shown +inf): accepted when ``mean < mean(best_terms) − s``
        (the shown entry's exact mean: see the comment in the code; always for a first
        entry; never when the mean is +inf after a first entry), then
        ``shown`` the mean rounded to ``rounding_unit(s, min_precision)`` and
        ``best = index``; otherwise both unchanged.
    """
    index = _index(index, "index")
    new = _terms(new_terms, "new_terms")
    mean = _mean(new)
    if shown is None:
        if best is not None or best_terms is not None:
            raise ValueError("a first entry (shown=None) has no best entry nor best_terms")
        s = threshold(new)
        unit = rounding_unit(_floored(s, first_floor), min_precision)
        return Step(_rounded(mean, unit), s, True, index, unit)
    shown = float(shown)
    if math.isnan(shown) or shown == -math.inf:
        raise ValueError(f"the shown score must be finite or +inf, got {shown!r}")
    if best is None:
        raise ValueError("a shown score needs the index of its entry (best)")
    best = _index(best, "best")
    if best >= index:
        raise ValueError(f"the best entry ({best}) must come before this one ({index})")
    if best_terms is not None:
        reference = _terms(best_terms, "best_terms")
        if reference.shape != new.shape:
            raise ValueError(
                f"best_terms has {reference.size} examples where new_terms has {new.size}"
            )
    if math.isinf(shown):
        # Nothing finite shown yet: a finite entry is accepted as a first entry would be.
        s = threshold(new)
        if math.isinf(mean):
            return Step(shown=shown, threshold=s, accepted=False, best=best)
        unit = rounding_unit(_floored(s, first_floor), min_precision)
        return Step(_rounded(mean, unit), s, True, index, unit)
    if best_terms is None:
        raise ValueError("a finite shown score needs the terms of its entry (best_terms)")
    s = threshold(new, reference)
    # Compared with the shown entry's exact mean, not with the rounded score: rounding to
    # the threshold's precision is coarser than Blum & Hardt's 1/n, and against a score
    # rounded up, resubmitting the same file (s = 0) would be "better" and show its
    # exact mean.
    if math.isinf(mean) or not mean < _mean(reference) - s:
        return Step(shown=shown, threshold=s, accepted=False, best=best)
    unit = rounding_unit(s, min_precision)
    return Step(_rounded(mean, unit), s, True, index, unit)


def format_shown(value: float, unit: float) -> str:
    """A shown score with the decimals of its rounding ``unit`` ("0.23" for 0.01; 0 or
    no unit: six significant digits; ∞ for +inf)."""
    if math.isinf(value):
        return "∞"
    places = decimals(unit) if unit else None
    if places is None:
        return f"{value:.6g}"
    return f"{value:.{max(places, 0)}f}"


def format_unit(unit: float | None) -> str:
    """A rounding unit as people read it: "0.01"; "exact" for 0; "–" for none."""
    if unit is None:
        return "–"
    return "exact" if unit == 0 else f"{unit:g}"


def _floored(threshold: float, floor: float) -> float:
    """The threshold a score with nothing to beat is rounded with (``step``'s first_floor);
    +inf stays +inf (no precision: the floor of min_precision alone)."""
    return threshold if math.isinf(threshold) else max(threshold, float(floor))


def _rounded(value: float, unit: float) -> float:
    return value if unit == 0 or math.isinf(value) else round_to(value, unit)


def ladder(
    sequence: Iterable, *, min_precision: float = 0.0, first_floor: float = 0.0
) -> list[Step]:
    """The Ladder over one participant's entries, in submission order.

    Parameters
    ----------
    sequence
        Iterable of 1-D float arrays of equal length n: each entry's per-example loss
        terms.

    Returns
    -------
    list of Step
        One per entry: what is shown after it (see ``step``).
    """
    steps: list[Step] = []
    shown: float | None = None
    best: int | None = None
    best_terms = None
    n = None
    for index, values in enumerate(sequence):
        terms = _terms(values, f"entry {index}")
        if n is None:
            n = terms.size
        elif terms.size != n:
            raise ValueError(f"entry {index} has {terms.size} examples where entry 0 has {n}")
        result = step(
            terms,
            shown=shown,
            best_terms=best_terms,
            index=index,
            best=best,
            min_precision=min_precision,
            first_floor=first_floor,
        )
        if result.accepted:
            best_terms = terms
        shown, best = result.shown, result.best
        steps.append(result)
    return steps


def public_mask(n: int, fraction: float, seed: int) -> np.ndarray:
    """Which of n test examples form the public part (the rest is private).

    Exactly ``k = round(fraction · n)`` examples are public, k clipped to [1, n − 1]
    when 0 < fraction < 1 and n ≥ 2 (both parts non-empty), none when fraction = 0:
    the first k positions of ``np.random.default_rng(seed).permutation(n)``. The same
    (n, fraction, seed) always gives the same mask.

    Returns
    -------
    numpy.ndarray
        Boolean, shape (n,), True = public.
    """
    n = _index(n, "n")
    seed = _index(seed, "seed")
    if isinstance(fraction, bool) or not isinstance(fraction, numbers.Real):
        raise ValueError(f"fraction must be a number in [0, 1), got {fraction!r}")
    fraction = float(fraction)
    if not 0 <= fraction < 1:  # also rejects NaN
        raise ValueError(f"fraction must be in [0, 1), got {fraction!r}")
    k = round(fraction * n)
    if fraction > 0 and n >= 2:
        k = min(max(k, 1), n - 1)
    mask = np.zeros(n, dtype=bool)
    if k:
        mask[np.random.default_rng(seed).permutation(n)[:k]] = True
    return mask


# --- Simulations ------------------------------------------------------------------------
