"""Paired bootstrap intervals (scoring.md §5): the resamples, the intervals, what they tell."""

import math

import numpy as np
import pytest

from scoring import bootstrap


def _indices_to_counts(n: int, *, seed: int, resamples: int) -> np.ndarray:
    """The weight matrix rebuilt from its definition: rows drawn in order from one stream
    per group of STREAM_ROWS rows, each row counting n draws."""
    counts = np.zeros((resamples, n))
    for b in range(resamples):
        if b % bootstrap.STREAM_ROWS == 0:
            group = b // bootstrap.STREAM_ROWS
            stream = np.random.Generator(
                np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(group,)))
            )
        np.add.at(counts[b], stream.integers(0, n, size=n), 1)
    return counts


def test_each_resample_draws_n_examples_with_replacement_the_same_in_every_block_size():
    whole = np.vstack([c for _, c in bootstrap.resample_counts(37, seed=5, resamples=120)])
    small = np.vstack(
        [c for _, c in bootstrap.resample_counts(37, seed=5, resamples=120, block_values=37 * 7)]
    )
    assert whole.shape == (120, 37)
    assert np.array_equal(whole, small)
    assert (whole.sum(axis=1) == 37).all()
    assert np.array_equal(whole, _indices_to_counts(37, seed=5, resamples=120))
    other = np.vstack([c for _, c in bootstrap.resample_counts(37, seed=6, resamples=120)])
    assert not np.array_equal(whole, other)


def test_resampled_means_are_the_means_of_the_drawn_terms():
    rng = np.random.default_rng(1)
    terms = rng.exponential(size=(50, 3))
    out = bootstrap.resample({"crps": terms}, seed=9, resamples=40)["crps"]
    counts = _indices_to_counts(50, seed=9, resamples=40)
    expected = (counts @ terms / 50).T
    assert out.shape == (3, 40)
    np.testing.assert_allclose(out, expected, rtol=1e-13)


def test_a_resample_that_draws_an_infinite_term_is_infinite_and_the_others_finite():
    terms = np.array([0.5, 0.25, np.inf, 1.0, 0.75])
    out = bootstrap.resample({"nlp": terms}, seed=3, resamples=200)["nlp"][0]
    counts = _indices_to_counts(5, seed=3, resamples=200)
    drew = counts[:, 2] > 0
    assert drew.any() and (~drew).any()
    assert np.isposinf(out[drew]).all()
    finite = counts[~drew] @ np.where(np.isinf(terms), 0, terms) / 5
    np.testing.assert_allclose(out[~drew], finite, rtol=1e-13)
    assert not np.isnan(out).any()


def test_nmse_divides_by_the_variance_of_the_resampled_targets():
    rng = np.random.default_rng(4)
    targets = rng.normal(1000, 2, size=30)  # far from 0: a naive E[t²] − E[t]² cancels
    se = rng.exponential(size=(30, 2))
    out = bootstrap.resample({}, squared_errors={"nmse": se}, targets=targets, seed=2, resamples=25)
    counts = _indices_to_counts(30, seed=2, resamples=25)
    for b in range(25):
        drawn = np.repeat(targets, counts[b].astype(int))
        drawn_se = np.repeat(se, counts[b].astype(int), axis=0)
        np.testing.assert_allclose(
            out["nmse"][:, b], drawn_se.mean(axis=0) / drawn.var(), rtol=1e-9
        )
    fixed = bootstrap.resample({}, squared_errors={"nmse": se}, variance=4.0, seed=2, resamples=25)
    np.testing.assert_allclose(fixed["nmse"], (counts @ se / 30).T / 4.0, rtol=1e-13)


def test_a_resample_whose_targets_are_all_equal_has_infinite_nmse():
    targets = np.array([1.0, 2.0])
    out = bootstrap.resample(
        {}, squared_errors={"nmse": np.array([0.5, 0.5])}, targets=targets, seed=1, resamples=50
    )["nmse"][0]
    counts = _indices_to_counts(2, seed=1, resamples=50)
    one_value = (counts == 0).any(axis=1)
    assert one_value.any()
    assert np.isposinf(out[one_value]).all() and np.isfinite(out[~one_value]).all()


def test_percentiles_are_numpys_linear_ones_and_infinity_sorts_last():
    rng = np.random.default_rng(7)
    values = rng.normal(size=(20, 1000))
    np.testing.assert_array_equal(
        bootstrap.intervals(values), np.percentile(values, [2.5, 97.5], axis=1).T
    )
    # 30 of 1000 infinite: the 97.5th percentile lies among them, the 2.5th does not.
    row = np.concatenate([np.arange(970.0), np.full(30, np.inf)])
    lower, upper = bootstrap.intervals(row[None])[0]
    assert lower == pytest.approx(np.percentile(np.arange(970.0), 2.5 * 999 / 969))
    assert upper == math.inf
    # Exactly at the boundary: index 974 finite, 975 infinite → the upper bound is +inf.
    row = np.concatenate([np.arange(975.0), np.full(25, np.inf)])
    assert bootstrap.intervals(row[None])[0][1] == math.inf
    row = np.concatenate([np.arange(976.0), np.full(24, np.inf)])
    assert bootstrap.intervals(row[None])[0][1] == pytest.approx(974.025)
    assert bootstrap.intervals(np.full((1, 1000), np.inf))[0].tolist() == [math.inf, math.inf]


def test_difference_of_two_infinite_values_is_zero():
    out = bootstrap.differences(np.array([[np.inf, 1.0, np.inf]]), np.array([np.inf, 0.5, 2.0]))
    assert out.tolist() == [[0.0, 0.5, math.inf]]


def test_ranks_share_the_better_rank_on_ties():
    values = np.array([[1.0, 3.0], [2.0, 1.0], [1.0, 2.0], [np.inf, np.inf]])
    assert bootstrap.ranks(values).tolist() == [[1, 3], [3, 1], [1, 2], [4, 4]]


def test_same_is_a_relative_tolerance_with_equal_infinities_equal():
    assert bootstrap.same(0.6931471805599453, 0.6931471805599453 * (1 + 3e-13))
    assert not bootstrap.same(0.6931471805599453, 0.6931471805599453 * (1 + 3e-12))
    assert bootstrap.same(-2.5, -2.5 * (1 + 5e-13))
    assert bootstrap.same(0.0, 0.0) and not bootstrap.same(0.0, 1e-300)
    assert bootstrap.same(math.inf, math.inf) and not bootstrap.same(math.inf, 1e308)
    assert not bootstrap.same(math.inf, -math.inf) and not bootstrap.same(math.nan, math.nan)
    out = bootstrap.same(np.array([1.0, 1.0, np.inf]), np.array([1 + 1e-13, 1.1, np.inf]))
    assert out.tolist() == [True, False, True]


def test_differences_within_the_tie_tolerance_are_zero():
    rng = np.random.default_rng(12)
    reference = rng.uniform(0.5, 1.5, size=1000)
    # The same entry summed in another order: 1e-13 relative apart on every resample.
    values = np.stack([reference * (1 + 1e-13), reference + 0.01])
    out = bootstrap.differences(values, reference)
    assert (out[0] == 0).all()
    assert out[1] == pytest.approx(np.full(1000, 0.01))
    lead = bootstrap.intervals(out)
    assert lead[0].tolist() == [0.0, 0.0]
    assert bootstrap.contains_zero(lead).tolist() == [True, False]


def test_ranks_within_the_tie_tolerance_share_the_better_rank():
    rng = np.random.default_rng(13)
    base = rng.uniform(0.5, 0.6, size=1000)
    # Three truly tied entries (rounding apart by 1e-13 relative, in varying order) and
    # one entry clearly better on every resample.
    noise = rng.choice([-1.0, 0.0, 1.0], size=(3, 1000)) * 1e-13
    values = np.vstack([base * (1 + noise), base - 0.1])
    assert (bootstrap.ranks(values)[:3] == 2).all()
    assert bootstrap.rank_intervals(values).tolist() == [[2, 2], [2, 2], [2, 2], [1, 1]]
    leader_tied = np.vstack([base * (1 + noise), base + 0.1])
    assert bootstrap.rank_intervals(leader_tied).tolist() == [[1, 1]] * 3 + [[4, 4]]
    # Negative losses (nlpd) and infinities.
    assert bootstrap.ranks(
        np.array([[-3.0], [-3.0 * (1 + 1e-13)], [np.inf], [np.inf]])
    ).ravel().tolist() == [1, 1, 3, 3]


def test_rank_intervals_by_hand():
    # Entry 0 is best on 960 of 1000 resamples and second on 40; entry 1 the reverse.
    first = np.where(np.arange(1000) < 960, 0.0, 1.0)
    values = np.stack([first, 1 - first, np.full(1000, 5.0)])
    assert bootstrap.rank_intervals(values).tolist() == [[1, 2], [1, 2], [3, 3]]
    # Best on 980 of 1000: the 97.5th percentile of its ranks is 1; the other entry is
    # first on 20 resamples, too few to reach its 2.5th percentile.
    first = np.where(np.arange(1000) < 980, 0.0, 1.0)
    values = np.stack([first, 1 - first])
    assert bootstrap.rank_intervals(values).tolist() == [[1, 1], [2, 2]]


def test_the_95_percent_interval_of_a_mean_loss_covers_its_expectation_93_to_97_percent():
    """500 simulated datasets of 400 Brier terms of a forecaster whose expected Brier
    score is known exactly: p = 0.3 for events of probability 0.3 → E = 0.3 · 0.7 = 0.21.

    The percentile interval's true coverage here is about 94.7 % (three runs of 500 from
    other seeds gave 94.8, 94.6 and 95.6 %; 2 × 1000 runs of n = 1000 gave 94.2–95.0 %):
    93–97 % is ±2 binomial standard deviations of 500 draws around 95 %."""
    rng = np.random.default_rng(0)
    expected = 0.3 * 0.7
    covered = 0
    for dataset in range(500):
        outcomes = rng.random(400) < 0.3
        terms = (0.3 - outcomes) ** 2
        values = bootstrap.resample({"brier": terms}, seed=dataset)["brier"]
        lower, upper = bootstrap.intervals(values)[0]
        covered += lower <= expected <= upper
    assert 0.93 <= covered / 500 <= 0.97, covered


def test_two_nearly_identical_entries_get_a_narrow_difference_interval():
    """Proof of pairing: the difference interval is far narrower than either own interval
    (unpaired resamples would give about √2 times the own width)."""
    rng = np.random.default_rng(5)
    a = rng.exponential(size=2000)
    b = a + rng.normal(0, 0.01, size=2000) ** 2
    values = bootstrap.resample({"crps": np.stack([a, b], axis=1)}, seed=11)["crps"]
    own = bootstrap.intervals(values)
    difference = bootstrap.intervals(bootstrap.differences(values[1:], values[0]))[0]
    width = difference[1] - difference[0]
    assert width < (own[0, 1] - own[0, 0]) / 5
    assert width < (own[1, 1] - own[1, 0]) / 5


def test_an_entry_clearly_worse_than_the_leader_has_a_difference_interval_above_zero():
    rng = np.random.default_rng(6)
    leader = rng.exponential(size=1000)
    worse = leader + 0.2 + rng.normal(0, 0.5, size=1000)
    values = bootstrap.resample({"crps": np.stack([leader, worse], axis=1)}, seed=1)["crps"]
    lead = bootstrap.intervals(bootstrap.differences(values, values[0]))
    assert lead[0].tolist() == [0.0, 0.0]  # the leader against itself
    assert lead[1, 0] > 0
    assert bootstrap.contains_zero(lead).tolist() == [True, False]


def test_entries_of_the_same_quality_are_indistinguishable():
    rng = np.random.default_rng(8)
    outcomes = rng.random(500) < 0.4
    p1 = np.clip(0.4 + rng.normal(0, 0.05, 500), 0.01, 0.99)
    p2 = np.clip(0.4 + rng.normal(0, 0.05, 500), 0.01, 0.99)
    terms = np.stack([(p1 - outcomes) ** 2, (p2 - outcomes) ** 2], axis=1)
    values = bootstrap.resample({"brier": terms}, seed=3)["brier"]
    assert bootstrap.contains_zero(
        bootstrap.intervals(bootstrap.differences(values, values[0]))
    ).all()


def test_bad_terms_are_refused():
    with pytest.raises(ValueError, match="finite or \\+inf"):
        bootstrap.resample({"nlp": np.array([0.1, np.nan])}, seed=1)
    with pytest.raises(ValueError, match="same number of examples"):
        bootstrap.resample({"nlp": np.ones(3), "brier": np.ones(4)}, seed=1)
