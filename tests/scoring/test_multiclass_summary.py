"""scoring.multiclass_summary: the one-pass summary of spec §7's sums, decided on the exact
values: the side of a rounded p (``resid``) moves an edge value up a bin and breaks a tie in
the argmax, and rows holding values below 2^-900 are decided on their fractions; on both
paths (the C kernel and numpy). The losses by hand and against peers are in
test_multiclass.py."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from scoring import multiclass_summary as ms


@pytest.mark.parametrize("native", [True, False])
def test_the_side_of_a_rounded_value_decides_its_bin_and_the_argmax(native, no_native):
    # Row 0: p = (0.2, 0.8) rounded, the exact values just above them: 0.8 = 12/15 as a
    # double is an edge, so the top-label bin is 12 (above the edge), not 11.
    # Row 1: two equal doubles, the second's exact value the larger: the argmax is 1.
    probs = np.array([[0.2, 0.8], [0.5, 0.5]])
    resid = np.array([[1.0, 1.0], [-1.0, 1.0]], dtype=np.float32)
    y = np.array([1, 1])
    with no_native() if not native else _nothing():
        plain = ms.summarize(probs, y)
        exact = ms.summarize(probs, y, resid=resid)
    assert plain.predicted.tolist() == [1, 0] and exact.predicted.tolist() == [1, 1]
    assert plain.top[11, 0] == 1 and exact.top[11, 0] == 0 and exact.top[12, 0] == 1
    assert exact.errors == 0 and plain.errors == 1


def test_rows_below_2_to_the_minus_900_are_decided_on_their_fractions(no_native):
    # Two classes whose doubles tie at 0.5, the exact values 1/2 ± 2^-1000: class 1 wins.
    probs = np.array([[0.5, 0.5], [0.25, 0.75]])
    tiny = Fraction(1, 2**1000)
    exact = {0: [Fraction(1, 2) - tiny, Fraction(1, 2) + tiny]}
    for context in (_nothing(), no_native()):
        with context:
            s = ms.summarize(
                probs, np.array([1, 0]), resid=np.zeros((2, 2), np.float32), exact=exact
            )
        assert s.predicted.tolist() == [1, 1] and s.errors == 1


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False
