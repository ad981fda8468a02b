"""scoring.ladder_simulation: the seeded probing simulation that proves the Ladder's worth
(exact feedback lets an attacker climb; the Ladder does not) and shows an honest
participant their progress."""

import math

import numpy as np
import pytest

from scoring import ladder_simulation as simulation


def test_exact_feedback_lets_a_prober_climb_and_the_ladder_does_not():
    seeds = range(100)
    runs = {
        feedback: [simulation.simulate_attack(feedback=feedback, seed=s) for s in seeds]
        for feedback in simulation.FEEDBACKS
    }
    gaps = {feedback: np.array([r.gap for r in runs[feedback]]) for feedback in runs}
    exact, guarded = gaps["exact"].mean(), gaps["ladder"].mean()
    standard_error = gaps["exact"].std(ddof=1) / math.sqrt(len(seeds))
    # The prober's shown public score ends several hundredths of a nat below its truth.
    assert exact > 0.03 and exact > 8 * standard_error
    assert exact / guarded >= 3
    accepted = {f: np.mean([r.accepted for r in runs[f]]) for f in runs}
    assert accepted["exact"] > 3 * accepted["ladder"]
    for r in runs["exact"]:
        assert r.shown == r.public  # exact feedback shows the kept entry's public score
    for r in runs["exact"] + runs["ladder"]:
        assert r.gap == r.private - r.shown
    assert simulation.simulate_attack(feedback="ladder", seed=5) == runs["ladder"][5]
    with pytest.raises(ValueError, match="feedback"):
        simulation.simulate_attack(feedback="rounded")


def test_the_ladder_shows_an_honest_participant_within_one_threshold_of_the_truth():
    for seed in range(8):
        run = simulation.simulate_honest(feedback="ladder", seed=seed)
        assert run.shown.shape == run.truth.shape == (200,)
        # Within the threshold the best entry so far was compared with, plus the rounding.
        assert (run.error <= run.judged + run.resolution / 2).all()
        assert np.array_equal(run.error, np.abs(run.shown - run.truth))
        # Not vacuous: the models improve by many thresholds and the shown score follows.
        assert run.truth[0] - run.truth[-1] > 3 * run.threshold.max()
        assert run.accepted.sum() >= 3
        assert (run.resolution > 0).all() and (run.resolution <= run.threshold.max()).all()
    exact = simulation.simulate_honest(feedback="exact", seed=0)
    assert np.array_equal(exact.shown, exact.truth)
    assert np.array_equal(exact.truth, np.minimum.accumulate(exact.truth))
