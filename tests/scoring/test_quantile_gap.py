"""scoring.quantile_gap: the minimum quantile gap of spec §1, decided exactly on the
doubles of a file, with a hint when a decimal gap falls a rounding error short."""

import math
from fractions import Fraction

import numpy as np
import pytest

from scoring import ScoringError, ScoringOptions, read_regression
from scoring.quantile_gap import exact_gap_below, gap_hint, rounding_error

from .util import arr, lines_of, problems_of, quantile_row


def regression(rows, path="pred.txt", **options):
    data = lines_of(rows)
    targets = np.zeros(len(rows))
    return problems_of(
        read_regression, data, path=path, targets=targets, options=ScoringOptions(**options)
    )


def assert_problem(err, path, line, *expected, found):
    """One problem, on PATH:LINE, mentioning what was expected and what was found."""
    assert err.total == len(err.problems) == 1, err.lines
    text = str(err.problems[0])
    assert text.startswith(f"{path}:{line}: "), text
    for words in [*expected, found]:
        assert words in err.problems[0].message, (words, text)
    return text


def test_the_functions_on_their_own():
    q = np.array([[0.2, 0.3, 0.5], [1.0, 1.25, 1.5]])
    dq = np.diff(q, axis=1)
    assert exact_gap_below(q, dq, 0.1).tolist() == [[True, False], [False, False]]
    assert exact_gap_below(q, dq, 0.25).tolist() == [[True, True], [False, False]]
    # fl(2.001 − 0.001) = 2; the exact difference is 2 − 127·2**-60.
    assert rounding_error(2.001, 0.001, 2.0) == float(Fraction(2.001) - Fraction(0.001) - 2)
    assert rounding_error(2.001, 0.001, 2.0) < 0 < rounding_error(2.003, 0.003, 2.0)
    assert gap_hint(0.2, 0.3, 0.1) == (
        " (as doubles 0.3 − 0.2 = 0.09999999999999998, below 0.1; leave a little more room)"
    )
    assert gap_hint(0.0, 0.05, 0.1) == ""  # plainly too narrow: no hint needed


def test_minimum_quantile_gap():
    row = "0 0.1 0.1 0.5 0.29 0.9 0.5"
    err = regression([row], min_quantile_gap=0.2)
    assert_problem(err, "pred.txt", 1, "at least 0.2 apart", found="found 0.1 then 0.29")
    # Without the option the same row is fine.
    read_regression(lines_of([row]), path="p", targets=arr(0.0))


def accepts_gap(qs, gap) -> bool:
    """Whether a quantile row of values ``qs`` (levels spread in (0, 1)) passes gap ``gap``."""
    levels = [(k + 1) / (len(qs) + 1) for k in range(len(qs))]
    row = quantile_row(levels, qs)
    try:
        read_regression(
            lines_of([row]),
            path="p",
            targets=arr(0.0),
            options=ScoringOptions(min_quantile_gap=gap),
        )
    except ScoringError:
        return False
    return True


@pytest.mark.parametrize(
    "qs, gap",
    [
        ((0.25, 0.5), 0.25),
        ((-1.0, 0.5, 2.0), 1.5),
        ((0.1, 0.3), 0.19999999999999998),
        ((0, 1e-300), 1e-300),
    ],
)
def test_a_gap_exactly_equal_to_w_passes(qs, gap):
    assert accepts_gap(qs, gap)


def test_a_gap_one_ulp_below_w_fails_and_one_ulp_above_passes():
    gap = 0.25
    assert accepts_gap((1.0, 1.25), gap)
    assert not accepts_gap((1.0, math.nextafter(1.25, 0)), gap)
    assert accepts_gap((1.0, math.nextafter(1.25, 2)), gap)
    assert not accepts_gap((1.0, 1.25), math.nextafter(gap, 1))
    assert accepts_gap((1.0, 1.25), math.nextafter(gap, 0))


@pytest.mark.parametrize(
    "qs, gap, found, hint",
    [
        ((0.2, 0.3), 0.1, "found 0.2 then 0.3", "0.3 − 0.2 = 0.09999999999999998, below 0.1"),
        ((0.1, 0.3, 0.5), 0.2, "found 0.1 then 0.3", "0.3 − 0.1 = 0.19999999999999998, below 0.2"),
        ((0.7, 0.8, 0.9), 0.1, "found 0.8 then 0.9", "0.9 − 0.8 = 0.09999999999999998, below 0.1"),
        (
            (1000.1, 1000.3, 1000.5),
            0.2,
            "found 1000.1 then 1000.3",
            "1000.3 − 1000.1 = 0.1999999999999318, below 0.2",
        ),
        ((-0.3, -0.1, 0.1), 0.2, "found -0.3 then -0.1", "-0.1 − -0.3 = 0.19999999999999998"),
    ],
)
def test_a_decimal_gap_a_rounding_error_below_w_fails_with_a_hint(qs, gap, found, hint):
    # Spec §1 compares the doubles exactly: 0.3 − 0.2 is 0.09999999999999997779… in binary.
    levels = [(k + 1) / (len(qs) + 1) for k in range(len(qs))]
    err = regression([quantile_row(levels, qs)], min_quantile_gap=gap)
    text = assert_problem(err, "pred.txt", 1, f"at least {gap} apart", found=found)
    assert f"(as doubles {hint}" in text and text.endswith("; leave a little more room)"), text


def test_a_rounded_difference_equal_to_w_is_decided_by_the_rounding_error():
    # fl(2.001 − 0.001) = 2 exactly, but the exact difference of the doubles is 2 − 127·2**-60.
    lo, hi = 0.001, 2.001
    assert hi - lo == 2.0 and Fraction(hi) - Fraction(lo) < 2
    err = regression([quantile_row([0.25, 0.75], [lo, hi])], min_quantile_gap=2.0)
    text = assert_problem(err, "pred.txt", 1, "at least 2 apart", found="found 0.001 then 2.001")
    assert "(as doubles 2.001 − 0.001 falls 1.1e-16 short of 2;" in text, text
    # The same rounded difference with a positive rounding error passes.
    lo, hi = 0.003, 2.003
    assert hi - lo == 2.0 and Fraction(hi) - Fraction(lo) > 2
    assert accepts_gap((lo, hi), 2.0)


def test_rounded_differences_equal_to_w_agree_with_exact_arithmetic():
    rng = np.random.default_rng(7)
    lo = rng.uniform(-0.1, 0.1, 4000)
    gap = 2.0 ** rng.integers(0, 6, lo.size)
    hi = lo + gap  # fl(lo + w): fl(hi − lo) is often w again, the exact hi − lo above or below
    tie = hi - lo == gap
    assert tie.sum() > 1000
    outcomes = set()
    for a, b, w in zip(lo[tie][:300], hi[tie][:300], gap[tie][:300], strict=True):
        exact = Fraction(float(b)) - Fraction(float(a)) >= Fraction(float(w))
        assert accepts_gap((a, b), w) == exact, (a, b, w)
        outcomes.add(exact)
    assert outcomes == {True, False}
