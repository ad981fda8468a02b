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
    R_t = round(mean(l_t), s_t)   if mean(l_t) < R_{t−1} − s_t   (accepted: best ← t)
    R_t = R_{t−1}                 otherwise

``round(x, s)`` rounds x to the decimal position of the first significant digit of s
(s = 0.0123 → two decimals, 4.2 → none, 37 → tens). s = 0 (identical entries, or a
single example) means exact: no rounding and a strict comparison.

Infinite terms (a probability 0 on the true class): an entry whose mean is +inf is
shown (+inf) only as the first entry and never accepted later; an entry with a finite
mean after a shown +inf is accepted with the first entry's threshold
std(l_t, ddof=1)/sqrt(n). Nothing here produces NaN.

Also here: the public/private mask of a test set (which examples give feedback), and a
seeded simulation of the leaderboard-probing attack and of an honest participant under
exact and Ladder feedback (tests/scoring/test_ladder.py, bench/ladder.py).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal

import numpy as np

FEEDBACKS = ("exact", "ladder")


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
        unit = rounding_unit(s, min_precision)
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
        unit = rounding_unit(s, min_precision)
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


def _rounded(value: float, unit: float) -> float:
    return value if unit == 0 or math.isinf(value) else round_to(value, unit)


def ladder(sequence: Iterable, *, min_precision: float = 0.0) -> list[Step]:
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

# The attacker's base prediction: logit = ATTACK_SIGNAL · y + ATTACK_NOISE · N(0, 1).
# Flipping an example's logit changes its log loss term by exactly w = y · logit, so
# each flip of ~flip_fraction · n_public public examples moves the public loss by about
# 10 · ATTACK_SIGNAL / ATTACK_NOISE of its own standard error (n_public = 1000,
# flip_fraction = 0.1): 2 here, so that about 2 % of the flips look like improvements
# with exact scores (measured: 1.7 %) and 0.2 % pass the Ladder (one standard error).
ATTACK_SIGNAL = 0.2
ATTACK_NOISE = 1.0
# The honest participant's entries: logit = a_t · y + N(0, 1), a_t from HONEST_START to
# HONEST_END: genuinely different models that slowly improve.
HONEST_START, HONEST_END = 0.2, 0.6


def _log_loss_terms(y: np.ndarray, logit: np.ndarray) -> np.ndarray:
    """−ln p(true class) for p = sigmoid(logit) of class +1: ln(1 + exp(−y · logit))."""
    return np.logaddexp(0.0, -y * logit)


def _check_simulation(feedback: str, rounds: int, n_public: int, n_private: int) -> None:
    if feedback not in FEEDBACKS:
        raise ValueError(f"feedback must be one of {FEEDBACKS}, got {feedback!r}")
    if _index(rounds, "rounds") < 1:
        raise ValueError("rounds must be at least 1")
    if _index(n_public, "n_public") < 2:
        raise ValueError("n_public must be at least 2")
    if _index(n_private, "n_private") < 1:
        raise ValueError("n_private must be at least 1")


@dataclass(frozen=True)
class SimulationResult:
    """Where a probing attacker ends (log loss, nats; lower is better)."""

    shown: float  # final shown score on the public part
    public: float  # exact public-part score of the entry the attacker ends with
    private: float  # that entry's private-part score (its "true" score)
    gap: float  # private − shown: how far the shown score climbed below the truth
    accepted: int  # how many submitted variations changed the shown score


def simulate_attack(
    *,
    feedback: str,
    rounds: int = 200,
    n_public: int = 1000,
    n_private: int = 1000,
    flip_fraction: float = 0.1,
    seed: int = 0,
) -> SimulationResult:
    """Whitehill's / Blum & Hardt's boosting-style probing of a log-loss leaderboard.

    Binary targets y = ±1 (uniform) on n_public + n_private examples; the attacker's
    base prediction is ``logit = 0.2 · y + N(0, 1)``, p(+1) = sigmoid(logit), and its
    log loss is the mean of −ln p(true class). The base is submitted first (it sets
    the shown score). Then, each of ``rounds`` times, the attacker flips the sign of its
    kept logit on a random subset of *all* examples (each independently with
    probability ``flip_fraction``: it does not know which are public), submits the
    result, and keeps it when the shown score it gets back went down. With ``"exact"``
    feedback the shown score is the exact public log loss of the submission; with
    ``"ladder"`` it is the Ladder's (``step``), with the attacker's accepted entry as
    its reference.

    The same seed draws the same targets, base and flip subsets under both feedbacks.

    Returns
    -------
    SimulationResult
        The final shown score, the kept entry's exact public and private scores, the
        gap private − shown and the number of accepted variations (the base not
        counted).
    """
    _check_simulation(feedback, rounds, n_public, n_private)
    flip_fraction = float(flip_fraction)
    if not 0 < flip_fraction < 1:
        raise ValueError(f"flip_fraction must be in (0, 1), got {flip_fraction!r}")
    rng = np.random.default_rng(_index(seed, "seed"))
    n = n_public + n_private
    y = rng.choice([-1.0, 1.0], size=n)
    kept = ATTACK_SIGNAL * y + ATTACK_NOISE * rng.standard_normal(n)
    public_y = y[:n_public]  # the examples are exchangeable: the first ones are public
    kept_terms = _log_loss_terms(public_y, kept[:n_public])
    if feedback == "exact":
        shown = float(np.mean(kept_terms))
    else:
        first = step(kept_terms, shown=None, index=0, best=None, min_precision=1 / n_public)
        shown, best = first.shown, first.best
    accepted = 0
    for index in range(1, rounds + 1):
        flips = rng.random(n) < flip_fraction
        candidate = np.where(flips, -kept, kept)
        terms = _log_loss_terms(public_y, candidate[:n_public])
        if feedback == "exact":
            score = float(np.mean(terms))
        else:
            result = step(
                terms,
                shown=shown,
                best_terms=kept_terms,
                index=index,
                best=best,
                min_precision=1 / n_public,
            )
            score, best = result.shown, result.best
        if score < shown:
            kept, kept_terms, shown = candidate, terms, score
            accepted += 1
    public = float(np.mean(kept_terms))
    private = float(np.mean(_log_loss_terms(y[n_public:], kept[n_public:])))
    return SimulationResult(
        shown=shown, public=public, private=private, gap=private - shown, accepted=accepted
    )


@dataclass(frozen=True)
class HonestResult:
    """An honest participant's rounds: what is shown against the truth, per round."""

    shown: np.ndarray  # score shown after each entry
    truth: np.ndarray  # lowest exact public score of the entries so far
    threshold: np.ndarray  # s_t of each round (0 with exact feedback)
    resolution: np.ndarray  # unit of the shown score's rounding, 10**-decimals (0 = exact)
    accepted: np.ndarray  # bool: the entry changed the shown score
    private: np.ndarray  # private score of the entry whose score is shown
    # The threshold the truth's entry (the best so far) was compared with when it came.
    judged: np.ndarray = None

    @property
    def error(self) -> np.ndarray:
        """|shown − truth| per round."""
        return np.abs(self.shown - self.truth)

    @property
    def bound(self) -> np.ndarray:
        """The round's threshold plus half a unit of the shown score's rounding."""
        return self.threshold + self.resolution / 2


def simulate_honest(
    *,
    feedback: str,
    rounds: int = 200,
    n_public: int = 1000,
    n_private: int = 1000,
    seed: int = 0,
) -> HonestResult:
    """An honest participant: ``rounds`` genuinely different models that slowly improve.

    Entry t predicts ``logit = a_t · y + N(0, 1)`` with fresh noise and a_t rising
    linearly from 0.2 to 0.6, on binary targets y = ±1 (uniform); its log loss terms on
    the public part are shown through the ``feedback`` (``"exact"``: the lowest exact
    public score so far; ``"ladder"``: the Ladder). The Ladder keeps the shown score
    within about one threshold of the truth, the lowest exact public score so far:
    ``|shown − truth| ≤ threshold + resolution / 2`` (``HonestResult.bound``).

    Returns
    -------
    HonestResult
        Per-round arrays of length ``rounds``.
    """
    _check_simulation(feedback, rounds, n_public, n_private)
    rng = np.random.default_rng(_index(seed, "seed"))
    n = n_public + n_private
    y = rng.choice([-1.0, 1.0], size=n)
    strengths = np.linspace(HONEST_START, HONEST_END, rounds)
    out = {
        name: np.zeros(rounds)
        for name in ("shown", "truth", "threshold", "resolution", "private", "judged")
    }
    judged = 0.0
    accepted = np.zeros(rounds, dtype=bool)
    shown, best, best_terms, truth, resolution = None, None, None, math.inf, 0.0
    for index, strength in enumerate(strengths):
        logit = strength * y + rng.standard_normal(n)
        terms = _log_loss_terms(y[:n_public], logit[:n_public])
        exact = float(np.mean(terms))
        improves = exact < truth
        truth = min(truth, exact)
        if feedback == "exact":
            result = Step(
                shown=truth,
                threshold=0.0,
                accepted=shown is None or exact < shown,
                best=index if shown is None or exact < shown else best,
            )
        else:
            result = step(
                terms,
                shown=shown,
                best_terms=best_terms,
                index=index,
                best=best,
                min_precision=1 / n_public,
            )
        if result.accepted:
            best_terms = terms
            places = decimals(result.precision) if feedback == "ladder" else None
            resolution = 0.0 if places is None else 10.0**-places
            private = float(np.mean(_log_loss_terms(y[n_public:], logit[n_public:])))
        shown, best = result.shown, result.best
        if improves:
            judged = result.threshold
        out["judged"][index] = judged
        out["shown"][index] = shown
        out["truth"][index] = truth
        out["threshold"][index] = result.threshold
        out["resolution"][index] = resolution
        out["private"][index] = private
        accepted[index] = result.accepted
    return HonestResult(accepted=accepted, **out)
