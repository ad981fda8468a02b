"""scoring.ladder: the parameter-free Ladder (Blum & Hardt 2015) and the public/private
mask (the probing simulation is tested in test_ladder_simulation.py)."""

import math

import numpy as np
import pytest

from scoring import ladder
from scoring.ladder import Step


def _se(difference) -> float:
    """The standard error of the mean from its definition, in plain Python."""
    values = [float(v) for v in difference]
    n = len(values)
    mean = sum(values) / n
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) / math.sqrt(n)


def test_a_hand_computed_table_of_four_entries():
    entries = [
        [0.9, 0.7, 0.5, 0.3],  # mean 0.6
        [0.8, 0.6, 0.45, 0.3],  # mean 0.5375, well below 0.6
        [0.75, 0.6, 0.45, 0.32],  # mean 0.53: lower, but within the threshold
        [0.5, 0.4, 0.3, 0.2],  # mean 0.35, compared with entry 1 (the shown one)
    ]
    steps = ladder.ladder(np.array(entries))
    # Entry 0 against zero: deviations ±0.3, ±0.1 → var = 0.2 / 3; s = sqrt(var) / 2 =
    # 0.129 → one decimal: 0.6.
    # Entry 1 − entry 0 = [−0.1, −0.1, −0.05, 0] (mean −0.0625): squared deviations sum to
    # 0.006875; s = 0.0239; 0.5375 < 0.6 − 0.0239 → shown at two decimals: 0.54.
    # Entry 2 − entry 1 = [−0.05, 0, 0, 0.02] (mean −0.0075): sum 0.002675; s = 0.0149;
    # 0.53 ≥ 0.54 − 0.0149 = 0.5251 → rejected, 0.54 stays.
    # Entry 3 − entry 1 = [−0.3, −0.2, −0.15, −0.1] (mean −0.1875): sum 0.021875;
    # s = 0.0427; 0.35 < 0.54 − 0.0427 → 0.35.
    expected = [
        (0.6, math.sqrt(0.2 / 3) / 2, True, 0),
        (0.54, math.sqrt(0.006875 / 3) / 2, True, 1),
        (0.54, math.sqrt(0.002675 / 3) / 2, False, 1),
        (0.35, math.sqrt(0.021875 / 3) / 2, True, 3),
    ]
    assert len(steps) == 4
    for got, (shown, threshold, accepted, best) in zip(steps, expected, strict=True):
        assert got.shown == shown
        assert got.threshold == pytest.approx(threshold, rel=1e-12)
        assert got.accepted is accepted
        assert got.best == best
    # Entry 3's threshold is against entry 1, not against the last entry (2).
    assert steps[3].threshold != pytest.approx(ladder.threshold(entries[3], entries[2]))
    # step() gives the same rounds one at a time.
    again = ladder.step(entries[2], shown=0.54, best_terms=entries[1], index=2, best=1)
    assert again == steps[2]
    first = ladder.step(entries[0], shown=None, index=0, best=None)
    assert first == Step(shown=0.6, threshold=steps[0].threshold, accepted=True, best=0)


def test_threshold_is_the_standard_error_of_the_paired_difference():
    rng = np.random.default_rng(4)
    for n in (2, 3, 17, 500):
        new, best = rng.exponential(size=n), rng.exponential(size=n)
        assert ladder.threshold(new, best) == pytest.approx(_se(new - best), rel=1e-12)
        assert ladder.threshold(new) == pytest.approx(_se(new), rel=1e-12)
    # Shared per-example difficulty cancels: a paired threshold far below the unpaired one.
    hard = rng.exponential(size=1000)
    small = ladder.threshold(hard + rng.normal(0, 0.01, 1000), hard)
    assert small < ladder.threshold(hard) / 20
    # Identical entries, or a single example: 0, exact.
    assert ladder.threshold(hard, hard.copy()) == 0.0
    assert ladder.threshold([0.7]) == 0.0
    assert ladder.threshold([0.7], [0.2]) == 0.0


@pytest.mark.parametrize(
    ("threshold", "places", "value", "rounded"),
    [
        (0.0123, 2, 0.2349, 0.23),
        (0.3, 1, 0.2349, 0.2),
        (4.2, 0, 12.7, 13.0),
        (37, -1, 234.9, 230.0),
        (370, -2, 234.9, 200.0),
        (0.001, 3, 0.23456, 0.235),
        (0.00999, 3, 0.23456, 0.235),
        (1e-5, 5, 0.1234567, 0.12346),
        (0.0, None, 0.2349, 0.2349),
        (math.inf, None, 0.2349, 0.2349),
    ],
)
def test_decimals_and_rounding_follow_the_first_significant_digit(
    threshold, places, value, rounded
):
    assert ladder.decimals(threshold) == places
    assert ladder.round_to(value, threshold) == rounded


def test_rounding_keeps_infinity_and_rejects_bad_input():
    assert ladder.round_to(math.inf, 0.0123) == math.inf
    assert ladder.round_to(math.inf, 0.0) == math.inf
    for bad in (-0.1, math.nan):
        with pytest.raises(ValueError, match="threshold"):
            ladder.decimals(bad)
        with pytest.raises(ValueError, match="threshold"):
            ladder.round_to(0.5, bad)
    with pytest.raises(ValueError, match="NaN"):
        ladder.round_to(math.nan, 0.1)


def test_a_zero_threshold_is_exact_and_strict():
    steps = ladder.ladder([[0.5], [0.4], [0.4], [0.39999999999]])
    assert [s.threshold for s in steps] == [0.0] * 4
    assert [s.shown for s in steps] == [0.5, 0.4, 0.4, 0.39999999999]
    assert [s.accepted for s in steps] == [True, True, False, True]
    assert [s.best for s in steps] == [0, 1, 1, 3]
    # Identical entries on many examples: threshold 0, an equal mean is not accepted.
    terms = np.array([0.123456, 0.5, 0.9])
    same = ladder.ladder([terms, terms.copy()])
    assert same[0].shown == 0.5  # threshold 0.228 → one decimal
    assert same[1] == Step(shown=0.5, threshold=0.0, accepted=False, best=0)


def test_infinite_terms_never_give_nan():
    inf = math.inf
    steps = ladder.ladder(
        [
            [1.0, inf],  # first: shown +inf
            [2.0, inf],  # +inf after +inf: not accepted
            [0.5, 0.7],  # finite after +inf: accepted as a first entry, s = 0.1
            [0.1, inf],  # +inf after finite: never accepted
            [0.35, 0.65],  # finite, against entry 2: s = 0.05, 0.5 < 0.6 − 0.05
        ]
    )
    assert steps[0] == Step(shown=inf, threshold=inf, accepted=True, best=0)
    assert steps[1] == Step(shown=inf, threshold=inf, accepted=False, best=0)
    assert steps[2].accepted and steps[2].best == 2
    assert steps[2].threshold == pytest.approx(_se([0.5, 0.7]))
    assert steps[2].shown == 0.6
    assert steps[3] == Step(shown=0.6, threshold=inf, accepted=False, best=2)
    assert steps[4].threshold == pytest.approx(_se([-0.15, -0.05])) == pytest.approx(0.05)
    assert steps[4].accepted and steps[4].shown == 0.5 and steps[4].best == 4
    for s in steps:
        assert not math.isnan(s.shown) and not math.isnan(s.threshold)
    # Where both entries are infinite the difference is 0, not NaN.
    assert ladder.threshold([inf, 1.0, 2.0], [inf, 1.0, 3.0]) == pytest.approx(_se([0, 0, -1]))
    assert ladder.threshold([1.0, 2.0], [inf, 1.0]) == inf
    # A finite entry after a shown +inf, given step by step with the infinite best's terms.
    after = ladder.step([0.5, 0.7], shown=inf, best_terms=[1.0, inf], index=1, best=0)
    assert after == Step(shown=0.6, threshold=pytest.approx(0.1), accepted=True, best=1)


def test_shown_never_rises_and_changes_only_with_an_accepted_entry():
    rng = np.random.default_rng(8)
    sequence = [rng.exponential(1 - 0.01 * t, size=50) for t in range(60)]
    sequence[10][3] = math.inf
    steps = ladder.ladder(sequence)
    shown = [s.shown for s in steps]
    assert all(b <= a for a, b in zip(shown, shown[1:], strict=False))
    assert not steps[10].accepted
    for previous, current in zip(steps, steps[1:], strict=False):
        assert current.accepted == (current.shown < previous.shown)
        assert current.best == (steps.index(current) if current.accepted else previous.best)
    accepted = [i for i, s in enumerate(steps) if s.accepted]
    assert 2 < len(accepted) < 60


def test_bad_input_is_refused_with_a_clear_message():
    with pytest.raises(ValueError, match="entry 1 has 3 examples where entry 0 has 2"):
        ladder.ladder([[0.1, 0.2], [0.1, 0.2, 0.3]])
    with pytest.raises(ValueError, match="no NaN"):
        ladder.threshold([0.1, math.nan])
    with pytest.raises(ValueError, match="no NaN, no -inf"):
        ladder.ladder([[0.1, -math.inf]])
    with pytest.raises(ValueError, match="1-D"):
        ladder.threshold([[0.1, 0.2]])
    with pytest.raises(ValueError, match="at least one example"):
        ladder.threshold([])
    with pytest.raises(ValueError, match="2 examples where new_terms has 3"):
        ladder.threshold([0.1, 0.2, 0.3], [0.1, 0.2])
    with pytest.raises(ValueError, match="best_terms"):
        ladder.step([0.1, 0.2], shown=0.5, index=1, best=0)
    with pytest.raises(ValueError, match="must come before"):
        ladder.step([0.1, 0.2], shown=0.5, best_terms=[0.1, 0.2], index=1, best=1)
    with pytest.raises(ValueError, match="first entry"):
        ladder.step([0.1, 0.2], shown=None, index=0, best=0)
    with pytest.raises(ValueError, match="index"):
        ladder.step([0.1, 0.2], shown=None, index=-1, best=None)


@pytest.mark.parametrize(
    ("n", "fraction", "count"),
    [
        (0, 0.5, 0),
        (1, 0.5, 0),
        (2, 0.5, 1),
        (10, 0.0, 0),
        (10, 0.3, 3),
        (10, 0.001, 1),  # round(0.01) = 0, clipped to 1
        (10, 0.999, 9),  # round(9.99) = 10, clipped to n − 1
        (1000, 0.001, 1),
        (1000, 0.5, 500),
        (1001, 0.9, 901),
    ],
)
def test_public_mask_has_exactly_the_asked_count(n, fraction, count):
    mask = ladder.public_mask(n, fraction, seed=3)
    assert mask.dtype == bool and mask.shape == (n,)
    assert int(mask.sum()) == count
    expected = np.zeros(n, dtype=bool)
    expected[np.random.default_rng(3).permutation(n)[:count]] = True
    assert np.array_equal(mask, expected)


def test_public_mask_is_deterministic_and_differs_between_seeds():
    a = ladder.public_mask(500, 0.3, seed=12345)
    assert np.array_equal(a, ladder.public_mask(500, 0.3, seed=12345))
    assert np.array_equal(a, ladder.public_mask(500, 0.3, seed=np.int64(12345)))
    b = ladder.public_mask(500, 0.3, seed=12346)
    assert a.sum() == b.sum() == 150 and not np.array_equal(a, b)
    # A seed as large as a BigIntegerField holds.
    assert ladder.public_mask(50, 0.5, seed=2**63 - 1).sum() == 25


def test_each_position_is_public_with_frequency_the_fraction():
    seeds = 4000
    counts = sum(ladder.public_mask(20, 0.3, seed=s).astype(int) for s in range(seeds))
    frequency = counts / seeds
    # Binomial sd sqrt(0.3 · 0.7 / 4000) = 0.0072: 4.5 sd over the 20 positions.
    assert np.abs(frequency - 0.3).max() < 0.033
    assert frequency.sum() == pytest.approx(6.0)


@pytest.mark.parametrize(
    ("n", "fraction", "seed", "message"),
    [
        (10, 1.0, 0, "fraction"),
        (10, -0.1, 0, "fraction"),
        (10, math.nan, 0, "fraction"),
        (10, "0.5", 0, "fraction"),
        (-1, 0.5, 0, "n must be"),
        (2.5, 0.5, 0, "n must be"),
        (10, 0.5, -1, "seed must be"),
        (10, 0.5, 1.5, "seed must be"),
        (10, 0.5, True, "seed must be"),
    ],
)
def test_public_mask_refuses_bad_arguments(n, fraction, seed, message):
    with pytest.raises(ValueError, match=message):
        ladder.public_mask(n, fraction, seed)


def test_resubmitting_the_same_file_never_shows_the_exact_score():
    # The first score rounds up (0.66…7 → 0.67 at a threshold of about 0.05): against
    # the rounded score, a copy (threshold 0) would look better and show its exact mean.
    rng = np.random.default_rng(11)
    for _ in range(50):
        terms = rng.exponential(0.7, size=400)
        copy_steps = ladder.ladder([terms, terms.copy(), terms * (1 - 1e-9)], min_precision=1 / 400)
        first, copy, nudged = copy_steps
        assert not copy.accepted and copy.shown == first.shown and copy.best == 0
        # Every term a hair lower: a consistent improvement, accepted with a tiny
        # threshold, but shown no finer than 1/n (Blum & Hardt's rounding; the site's):
        # to 0.01, the power of ten at or above 1/400.
        assert nudged.accepted and nudged.threshold < 1e-9
        assert nudged.precision == 0.01
        assert nudged.shown == round(float(np.mean(terms * (1 - 1e-9))), 2)


@pytest.mark.parametrize(
    ("threshold", "floor", "unit"),
    [
        (0.0123, 0.0, 0.01),
        (0.0123, 1 / 200, 0.01),
        (0.0004, 1 / 200, 0.01),  # never finer than 1/n: 0.005 → 0.01
        (0.0004, 1 / 1000, 0.001),
        (0.0004, 1 / 5000, 0.001),  # 1/5000 = 0.0002 → 0.001
        (0.3, 1 / 1000, 0.1),
        (0.0, 0.0, 0.0),  # exact
        (0.0, 1 / 400, 0.01),
        (math.inf, 1 / 400, 0.01),
    ],
)
def test_the_rounding_unit_is_a_power_of_ten_never_finer_than_the_floor(threshold, floor, unit):
    assert ladder.rounding_unit(threshold, floor) == unit


def test_a_first_entry_is_rounded_with_at_least_the_first_floor():
    terms = np.full(1000, math.log(2))
    terms[3] = -math.log(0.01)  # one row's term apart: threshold ~0.004
    bare = ladder.step(terms, shown=None, index=0, best=None, min_precision=1 / 1000)
    floored = ladder.step(
        terms, shown=None, index=0, best=None, min_precision=1 / 1000, first_floor=0.0316
    )
    assert bare.precision == 0.001 and floored.precision == 0.01
    assert floored.shown == round(float(np.mean(terms)), 2)
    assert floored.threshold == bare.threshold  # the floor rounds, it does not accept
    # Later entries keep their paired threshold's unit: the floor is for first entries.
    better = terms - 0.05 * (1 + np.arange(1000) % 3)
    steps = ladder.ladder([terms, better], min_precision=1 / 1000, first_floor=0.0316)
    assert steps[1].accepted
    assert steps[1].precision == ladder.rounding_unit(ladder.threshold(better, terms), 1 / 1000)
    # After a shown +inf, a finite entry is a first entry too.
    infinite = np.full(1000, np.inf)
    steps = ladder.ladder([infinite, terms], min_precision=1 / 1000, first_floor=0.0316)
    assert steps[1].accepted and steps[1].precision == 0.01
