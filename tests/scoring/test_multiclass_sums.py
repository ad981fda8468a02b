"""scoring.multiclass_sums: spec §7's sum rule (within 0.01 of 1) decided on the exact sum
of the doubles at the bound, and the message that names the sum."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from scoring.multiclass_sums import SUM_TOLERANCE, member_sums, sum_message, sums_off


def _exact_sum(values) -> Fraction:
    return sum(map(Fraction, values), Fraction(0))


@pytest.mark.parametrize(
    "member",
    [
        [0.5, 0.51],  # 1.01 as doubles: 0.5 + 0.51000000000000000888 is just above 1.01
        [0.5, 0.49],  # 0.99 (0.48999999999999999112): just below 0.99
        [0.25, 0.25, 0.25, 0.26],
        [0.9, 0.1, 0.01],
        [0.33, 0.33, 0.33],
        [0.7, 0.3],
    ],
)
def test_a_sum_at_the_bound_is_decided_exactly(member):
    v = np.array([[member]])
    off = sums_off(v, member_sums(v))
    assert bool(off[0, 0]) == (abs(_exact_sum(member) - 1) > Fraction(1, 100))


def test_within_the_tolerance_or_far_from_it():
    v = np.array([[[0.2, 0.3, 0.5], [0.2, 0.3, 0.52]], [[2.0, 0.5, 0.2], [0.1, 0.1, 0.1]]])
    assert sums_off(v, member_sums(v)).tolist() == [[False, True], [True, True]]
    assert SUM_TOLERANCE == 0.01


def test_the_message_names_the_sum_and_the_likely_mistake():
    assert sum_message(2.718281828, 0, 1) == (
        "probabilities sum to 2.718, not 1: are these scores or logits? apply a softmax"
    )
    # Close to the bound: the digits that show it is off, and the remedy.
    assert sum_message(1.0100001, 2, 5) == (
        "member 3's probabilities sum to 1.0100001, not 1 (within 0.01): write them with more "
        "digits, or divide each by their sum"
    )
