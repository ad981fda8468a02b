"""A seeded simulation of leaderboard probing, and of an honest participant, under exact
and Ladder feedback (scoring.ladder): the proof asked of the Ladder, run by
tests/scoring/test_ladder.py and bench/ladder.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .ladder import Step, _index, decimals, step

FEEDBACKS = ("exact", "ladder")

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
    within one threshold of the truth, the lowest exact public score so far: the
    threshold that truth's entry was judged with, plus half a rounding unit
    (``|shown − truth| ≤ judged + resolution / 2``).

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
