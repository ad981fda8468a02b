"""scoring.tasks.multiclass_demo: the demo leaderboard's multiclass methods, each scored
by scoring's own evaluation (spec §7) on small seeded ten-class problems, clean and
shifted."""

import numpy as np
import pytest

import scoring
from scoring import ScoringOptions
from scoring.tasks import multiclass_demo
from scoring.tasks.demo import Data
from scoring.tasks.multiclass_demo import DEMO, quadratic, temperature

OPTIONS = ScoringOptions(classes=10, allow_ensembles=True)
METHODS = {method.title: method for _, method in (*DEMO.entries, DEMO.after)}


def evaluate(lines: bytes, truth: np.ndarray) -> scoring.Evaluation:
    return scoring.evaluate(lines, truth, task="multiclass", options=OPTIONS)


@pytest.fixture(scope="module")
def problem():
    """Ten overlapping Gaussian classes in 12 inputs (each class with its own spreads):
    2,000 training points, 1,000 clean query points and the same points with added noise
    (standard deviation 1, as the demo's noise at severity 2.5)."""
    rng = np.random.default_rng(5)
    centres = rng.normal(0.0, 0.6, (10, 12))
    spreads = rng.uniform(0.7, 1.4, (10, 12))

    def draw(n):
        y = rng.integers(0, 10, n)
        return centres[y] + spreads[y] * rng.standard_normal((n, 12)), y

    (x, y), (query, truth) = draw(2000), draw(1000)
    shifted = query + rng.normal(0.0, 1.0, query.shape)
    return x, y, query, shifted, truth


def predict(title, problem, *, shifted=False, seed=0):
    x, y, query, noisy, _ = problem
    data = Data(x, y, noisy if shifted else query, np.random.default_rng(seed), classes=10)
    return METHODS[title].predict(data)


def test_the_entries_who_sends_what():
    assert [(user, method.title) for user, method in DEMO.entries] == [
        ("demo-ada", "Softmax regression"),
        ("demo-bob", "Ensemble of 5 softmax regressions"),
        ("demo-cy", "Hard k-NN vote"),
        ("demo-ada", "Temperature-scaled softmax regression"),
    ]
    assert (DEMO.after[0], DEMO.after[1].title) == ("demo-cy", "Linear softmax regression")
    labels = DEMO.targets(np.array([3.0, 0.0, 9.0]))
    assert labels.tolist() == [3, 0, 9] and labels.dtype == np.int64


def test_every_method_writes_a_valid_file_that_beats_chance(problem):
    truth = problem[4]
    for title in METHODS:
        result = evaluate(predict(title, problem), truth)
        assert result.n == 1000, title
        assert result.scores["01l"] < 0.5, title  # chance: 0.9


def test_probabilities_are_never_certain_but_the_hard_vote_is(problem):
    truth = problem[4]
    for title in ("Softmax regression", "Temperature-scaled softmax regression"):
        rows = np.array([line.split() for line in predict(title, problem).splitlines()], float)
        assert rows.shape == (1000, 10) and (rows > 0).all(), title
        assert np.allclose(rows.sum(axis=1), 1, atol=1e-6)
        result = evaluate(predict(title, problem), truth)
        assert not result.non_probabilistic and result.reported == {}
    hard = predict("Hard k-NN vote", problem)
    rows = np.array([line.split() for line in hard.splitlines()], dtype=np.int64)
    assert rows.shape == (1000, 10) and set(np.unique(rows).tolist()) == {0, 1}
    assert (rows.sum(axis=1) == 1).all()  # one-hot, written as integers
    result = evaluate(hard, truth)
    assert result.non_probabilistic
    assert [name for name, value in result.scores.items() if value is not None] == ["01l"]


def test_the_ensemble_writes_five_members_per_line_and_reports_its_uncertainties(problem):
    truth = problem[4]
    lines = predict("Ensemble of 5 softmax regressions", problem)
    rows = np.array([line.split() for line in lines.splitlines()], dtype=float)
    assert rows.shape == (1000, 50)
    members = rows.reshape(1000, 5, 10)
    assert np.allclose(members.sum(axis=2), 1, atol=1e-6)
    assert not np.allclose(members[:, 0], members[:, 1], atol=1e-3)  # different halves
    result = evaluate(lines, truth)
    reported = result.reported
    assert set(reported) == {"tu", "du", "mi"}
    assert reported["mi"] > 0 and reported["tu"] == pytest.approx(
        reported["du"] + reported["mi"], rel=1e-9
    )
    # The members disagree more on noisy inputs: more model uncertainty.
    noisy = evaluate(predict("Ensemble of 5 softmax regressions", problem, shifted=True), truth)
    assert noisy.reported["mi"] > reported["mi"]


def test_calibration_degrades_under_shift_and_temperature_scaling_helps(problem):
    truth = problem[4]

    def ece(title, shifted):
        return evaluate(predict(title, problem, shifted=shifted), truth).scores["ece"]

    raw_clean, raw_shifted = ece("Softmax regression", False), ece("Softmax regression", True)
    scaled_clean = ece("Temperature-scaled softmax regression", False)
    scaled_shifted = ece("Temperature-scaled softmax regression", True)
    assert raw_shifted > 2 * raw_clean  # overconfident, and more so on noisy inputs
    assert scaled_clean < raw_clean and scaled_shifted < raw_shifted
    ensemble = evaluate(
        predict("Ensemble of 5 softmax regressions", problem, shifted=True), truth
    ).scores
    shifted_raw = evaluate(predict("Softmax regression", problem, shifted=True), truth).scores
    assert ensemble["ece"] < shifted_raw["ece"] and ensemble["nlp"] < shifted_raw["nlp"]


def test_the_methods_are_seeded(problem):
    for title in ("Temperature-scaled softmax regression", "Ensemble of 5 softmax regressions"):
        assert predict(title, problem, seed=1) == predict(title, problem, seed=1)
        assert predict(title, problem, seed=1) != predict(title, problem, seed=2)


def test_a_class_missing_from_the_training_targets_still_gets_its_column(problem):
    x, y, query, _, _ = problem
    keep = y != 9
    data = Data(x[keep], y[keep], query[:5], np.random.default_rng(0), classes=10)
    for title, method in METHODS.items():
        rows = [line.split() for line in method.predict(data).splitlines()]
        assert {len(row) for row in rows} == ({50} if "Ensemble" in title else {10}), title
    # Without the dataset's L, the largest training label says it.
    assert multiclass_demo.classes_of(Data(x[keep], y[keep], query, None)) == 9


def test_temperature_recovers_the_one_that_made_the_labels():
    rng = np.random.default_rng(2)
    logits = rng.normal(0.0, 3.0, (20000, 10))
    p = multiclass_demo.softmax(logits / 2.0)
    labels = (p.cumsum(axis=1) < rng.random((20000, 1))).sum(axis=1)
    assert temperature(logits, labels) == pytest.approx(2.0, rel=0.05)
    assert temperature(logits / 2.0, labels) == pytest.approx(1.0, rel=0.05)


def test_quadratic_features_are_the_inputs_squares_and_products():
    assert quadratic(np.array([[1.0, 2.0, 3.0]])).tolist() == [
        [1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 4.0, 6.0, 9.0]
    ]
    assert quadratic(np.zeros((4, 20))).shape == (4, 20 + 210)
