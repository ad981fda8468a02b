"""scoring.probing: the statistics of the probing flags (rows off a file's bulk, the sign
test against the baseline, the concentration of a change, correlations), on seeded
simulations of the attacks and of honest participants (probing_sim.py)."""

from collections import Counter

import numpy as np
import pytest

from scoring import evaluate
from scoring.probing import (
    change_share,
    combination_corr,
    correlation,
    rows_off_bulk,
    rows_off_exact_mode,
    rows_off_mode,
    sign_z,
    top_rows,
)

from . import probing_sim as sim
from .util import arr, lines_of


def test_classification_compares_the_probabilities():
    targets = arr(1, -1, 1, 1, -1, 1)
    constant = evaluate(lines_of(["0.5"] * 6), targets, task="classification")
    probe = evaluate(lines_of(["0.5", "0.9", "0.5", "0.5", "0.1", "0.5"]), targets)
    honest = evaluate(lines_of(["0.8", "0.3", "0.7", "0.6", "0.2", "0.9"]), targets)
    assert [rows_off_mode(e) for e in (constant, probe, honest)] == [0, 2, 5]


def test_regression_compares_means_variances_and_row_types():
    targets = arr(0.0, 0.0, 0.0, 0.0, 0.0)
    same_mean = ["1 0 1", "1 0 1", "1 0 2", "1 0 1", "0 0.25 -1 0.75 1"]
    assert rows_off_mode(evaluate(lines_of(same_mean), targets, task="regression")) == 2
    # Quantile and sample rows have no variance: equal means and row types count as one.
    no_variance = ["0 0.25 -1 0.75 1"] * 3 + ["0 0.25 -2 0.75 2", "2 -1 1"]
    assert rows_off_mode(evaluate(lines_of(no_variance), targets, task="regression")) == 1


# --- The statistics behind the flags, on seeded simulations (probing_sim.py) ----------


@pytest.mark.parametrize("kind", ["1e-11", "ulps"])
def test_jitter_does_not_hide_a_constant_file_but_for_a_few_rows(kind):
    for few, seed in [(1, 0), (3, 1), (20, 2)]:
        probe = sim.constant_but(sim.N, few, seed, kind=kind)
        assert rows_off_exact_mode(probe) > sim.N // 2  # what equality sees: evaded
        assert rows_off_bulk(probe) == few
    world = sim.world(3)
    honest = [rows_off_bulk(p) for seed in range(5) for p in sim.honest(world, seed)]
    assert max(honest) == 0  # a model's file has no few rows standing out of its bulk


def test_rows_off_mode_falls_back_to_exact_equality_when_no_row_stands_out():
    # 0.5 and 0.6, half each: no outlier, every row but the most common value's "off".
    values = np.array([0.5] * 3 + [0.6] * 3)
    assert rows_off_bulk(values) == 0 and rows_off_exact_mode(values) == 3
    assert rows_off_bulk(np.array([0.5] * 6)) == 0
    assert rows_off_bulk(np.array([np.nan, np.nan, np.nan, 1.0])) == 1  # NaN is a value


def test_random_vectors_score_near_chance_and_a_model_far_above_it():
    world = sim.world(4)
    files = sim.boosting(world, seed=5, k=200)[:-1]
    chance = sim.nlp(world.baseline, world.y)[world.public]
    z = [sign_z(sim.nlp(p, world.y)[world.public], chance) for p in files]
    assert np.mean(np.abs(z) < 3) >= 0.98 and abs(np.mean(z)) < 0.3
    model = sim.honest(world, seed=6)[-1]
    terms = sim.nlp(model, world.y)[world.public]
    assert sign_z(terms, sim.nlp(world.baseline, world.y)[world.public]) > 10
    assert sign_z(terms, terms) == 0.0 and sign_z(terms, terms[:-1]) is None


@pytest.mark.parametrize("kind", ["1e-11", "ulps"])
def test_a_jittered_few_row_change_carries_the_change_in_its_top_rows(kind):
    world = sim.world(7)
    files = sim.oracle(sim.honest(world, seed=8)[-1], seed=9, kind=kind)
    terms = [sim.nlp(p, world.y) for p in files]
    k = top_rows(sim.N, few=10, share=0.01)
    assert k == 20
    shares = [change_share(b, a, k=k) for a, b in zip(terms, terms[1:], strict=False)]
    assert min(shares) > 0.99
    # Two fits of an honest participant's model change every row.
    fits = [sim.nlp(p, world.y) for p in sim.honest(world, seed=10)]
    honest = [change_share(b, a, k=k) for a, b in zip(fits, fits[1:], strict=False)]
    assert max(honest) < 0.3
    assert change_share(terms[0], terms[0], k=k) is None
    assert change_share(terms[0], terms[0][:-1], k=k) is None
    assert change_share(np.array([np.inf, 1.0, 1.0]), np.array([1.0, 1.0, 2.0]), k=1) == 1.0


def test_random_vectors_are_uncorrelated_and_their_vote_is_not():
    world = sim.world(11)
    files = sim.boosting(world, seed=12, k=50)
    terms = [sim.nlp(p, world.y) for p in files]
    vectors, vote = terms[:-1], terms[-1]
    r = [abs(correlation(a, b)) for a, b in zip(vectors, vectors[1:], strict=False)]
    assert max(r) < 0.1
    z = [sign_z(t[world.public], sim.nlp(world.baseline, world.y)[world.public]) for t in vectors]
    assert combination_corr(vote, vectors, z) > 0.3
    fresh = sim.nlp(sim.boosting(world, seed=13, k=1)[0], world.y)
    assert abs(combination_corr(fresh, vectors, z)) < 0.1
    fits = sim.honest(world, seed=14)
    assert correlation(sim.nlp(fits[-1], world.y), sim.nlp(fits[-2], world.y)) > 0.5
    assert correlation(vote, vote[:-1]) is None and combination_corr(vote, [], []) is None


def _rows_off_exact_mode_by_counting(values: np.ndarray) -> int:
    """Written apart from scoring.probing: each row as a tuple of Python values (every
    NaN one value, -0.0 equal to 0.0), counted."""
    rows = values.reshape(values.shape[0], -1)
    counts = Counter(tuple("nan" if np.isnan(x) else float(x) + 0.0 for x in row) for row in rows)
    return len(rows) - max(counts.values())


def _files_with_repeats(seed: int) -> np.ndarray:
    """A seeded file of 1-4 columns whose rows repeat, drawn from few values among which
    NaN, ±inf, -0.0 and 0.0, some columns constant."""
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(1, 60)), int(rng.integers(1, 5))
    pool = np.array([0.0, -0.0, 1.0, 0.5, -2.0, np.nan, np.inf, -np.inf, 1e300, 5e-324])
    values = rng.choice(pool[: int(rng.integers(1, len(pool) + 1))], size=(n, k))
    if rng.random() < 0.3:
        values[:, int(rng.integers(k))] = rng.normal(size=n)  # one column all distinct
    return values if k > 1 or rng.random() < 0.5 else values[:, 0]


def test_rows_off_exact_mode_agrees_with_counting_rows_on_seeded_files():
    for seed in range(3000):
        values = _files_with_repeats(seed)
        assert rows_off_exact_mode(values) == _rows_off_exact_mode_by_counting(values), seed


def test_rows_off_exact_mode_survives_hash_collisions(monkeypatch):
    """Every row hashed alike (the worst collision): the check of the largest hash group
    finds different rows, and the lexsort counts."""
    import scoring.probing as probing

    monkeypatch.setattr(probing, "_row_hashes", lambda keys: np.zeros(len(keys), np.uint64))
    for seed in range(300):
        values = _files_with_repeats(seed)
        assert rows_off_exact_mode(values) == _rows_off_exact_mode_by_counting(values), seed
    assert rows_off_exact_mode(np.array([[1.0, 2.0], [1.0, 2.0]])) == 0
