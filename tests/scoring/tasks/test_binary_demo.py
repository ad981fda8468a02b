"""scoring.tasks.binary_demo: the demo leaderboard's classification methods, each scored
by scoring's own evaluation on a small seeded problem."""

import numpy as np
import pytest

import scoring
from scoring.tasks.binary_demo import DEMO
from scoring.tasks.demo import Data


@pytest.fixture
def problem():
    """Two noisy classes: +1 where x₀ + x₁ > 0."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(200, 2))
    y = np.where(x.sum(axis=1) + 0.3 * rng.normal(size=200) > 0, 1.0, -1.0)
    query = rng.normal(size=(50, 2))
    truth = np.where(query.sum(axis=1) > 0, 1.0, -1.0)
    return Data(x, DEMO.targets(y), query, rng), truth


def test_the_entries_who_sends_what():
    assert [(user, method.title) for user, method in DEMO.entries] == [
        ("demo-ada", "Logistic regression"),
        ("demo-bob", "k-NN class frequencies"),
        ("demo-cy", "Hard classifier"),
    ]
    assert (DEMO.after[0], DEMO.after[1].title) == ("demo-ada", "Logistic regression, weak prior")
    assert DEMO.targets(np.array([1.0, -1.0, 1.0])).tolist() == [1.0, 0.0, 1.0]


def test_every_method_writes_a_file_scoring_accepts_and_beats_chance(problem):
    data, truth = problem
    methods = [method for _, method in DEMO.entries] + [DEMO.after[1]]
    for method in methods:
        result = scoring.evaluate(method.predict(data), truth, task="classification")
        assert result.n == 50
        assert result.scores["01l"] < 0.2, method.title


def test_probabilities_are_never_certain_but_the_hard_classifiers_are(problem):
    data, truth = problem
    logistic, knn, hard = (method.predict(data) for _, method in DEMO.entries)
    for lines in (logistic, knn):
        p = np.array(lines.split(), dtype=float)
        assert (p > 0).all() and (p < 1).all()
        assert not scoring.evaluate(lines, truth, task="classification").non_probabilistic
    assert set(hard.split()) == {b"0", b"1"}
    assert scoring.evaluate(hard, truth, task="classification").non_probabilistic
