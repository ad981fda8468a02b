"""What every registered loss must satisfy, whatever it computes.

Like scikit-learn's ``sklearn/metrics/tests/test_common.py``: each test is parametrized
over ``LOSSES.values()``, so a loss registered later is held to the same rules with no
change here. Losses are computed directly on a :class:`~scoring.Context` (the n/a rule
for non-probabilistic files is :func:`~scoring.compute_scores`'s, tested elsewhere), so
that a perfect prediction, which is non-probabilistic, can be scored by every loss.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from scoring import LOSSES, Context, ScoringOptions, Task, compute_scores, read_regression
from scoring.multiclass_rows import ClassRows

from .util import lines_of, quantile_row

ALL_LOSSES = pytest.mark.parametrize(
    "loss", list(LOSSES.values()), ids=lambda loss: f"{loss.task}-{loss.name}"
)
BASES = (math.e, 2.0, 10.0)
SEEDS = range(12)
CLASSES = 4  # L of the multiclass cases
LEVELS = (0.05, 0.25, 0.5, 0.75, 0.95)  # spec §8's quantile levels, for wis


# --- random cases ---------------------------------------------------------------------------


def _targets(rng, task: Task, n: int) -> np.ndarray:
    if task == Task.MULTICLASS:
        t = rng.integers(0, CLASSES, n).astype(np.float64)
        t[:2] = 0.0, 1.0  # two classes at least
        return t
    if task == Task.CLASSIFICATION:
        t = np.where(rng.random(n) < rng.uniform(0.2, 0.8), 1.0, -1.0)
        t[:2] = 1.0, -1.0  # both classes (lift is n/a otherwise)
        return t
    return rng.normal(rng.normal(0, 3), rng.uniform(0.5, 4), n)


def _class_probabilities(rng, n: int, style: str) -> np.ndarray:
    """n rows of L = CLASSES probabilities: soft, tied (rows from a few vectors with equal
    entries, some holding 0), or one-hot."""
    if style == "soft":
        return rng.dirichlet(np.ones(CLASSES), size=n)
    if style == "ties":
        rows = np.array([[0.25] * 4, [0.5, 0.5, 0, 0], [0, 0.4, 0.4, 0.2], [0.1, 0.1, 0.1, 0.7]])
        return rows[rng.integers(0, len(rows), n)]
    return np.eye(CLASSES)[rng.integers(0, CLASSES, n)]


def _probabilities(rng, n: int, style: str) -> np.ndarray:
    if style == "soft":
        return rng.uniform(0.01, 0.99, n)
    if style == "ties":  # runs of equal p, some exactly 0 or 1
        return np.round(rng.random(n), 1)
    return (rng.random(n) < 0.5).astype(np.float64)  # hard


def _row(rng, kind: str, target: float) -> str:
    """One regression line of ``kind`` near ``target``."""
    if kind == "gaussian":
        return f"1 {float(rng.normal(target, 1.5))!r} {float(rng.uniform(0.05, 4))!r}"
    if kind == "quantiles":
        size = int(rng.integers(2, 7))
        levels = np.sort(rng.uniform(0.02, 0.98, size))
        values = np.sort(rng.normal(target + rng.normal(0, 1), rng.uniform(0.3, 2), size))
        return quantile_row(levels, values)
    size = int(rng.integers(1, 9))
    return "2 " + " ".join(repr(s) for s in rng.normal(target, 1.5, size).tolist())


def _regression_lines(rng, t: np.ndarray, kinds) -> list[str]:
    return [_row(rng, str(rng.choice(kinds)), float(target)) for target in t]


def _context(task: Task, prediction, t: np.ndarray, options: ScoringOptions) -> Context:
    """A Context from p (classification) or prediction lines (regression, read as a file)."""
    t = np.asarray(t, dtype=np.float64)
    if task == Task.MULTICLASS:
        rows = ClassRows.single(np.asarray(prediction, dtype=np.float64))
        return Context(task, t, options, multiclass=rows)
    if task == Task.CLASSIFICATION:
        return Context(task, t, options, p=np.asarray(prediction, dtype=np.float64))
    rows = read_regression(lines_of(list(prediction)), path="p.txt", targets=t, options=options)
    return Context(task, t, options, rows=rows)


def _predictions(rng, task: Task, t: np.ndarray) -> list:
    """Several random predictions for targets ``t``, of every style or row type."""
    n = t.size
    if task == Task.MULTICLASS:
        return [_class_probabilities(rng, n, style) for style in ("soft", "ties", "hard")]
    if task == Task.CLASSIFICATION:
        return [_probabilities(rng, n, style) for style in ("soft", "ties", "hard")]
    return [
        _regression_lines(rng, t, kinds)
        for kinds in (
            ("gaussian",),
            ("quantiles",),
            ("sample",),
            ("gaussian", "quantiles"),
            ("gaussian", "quantiles", "sample"),
        )
    ]


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    if math.isinf(a) or math.isinf(b):
        return a == b
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


def _check_value(value, where: str) -> None:
    assert value is None or isinstance(value, float), f"{where}: {value!r}"
    assert value is None or not math.isnan(value), where


def _case(loss, seed: int, salt: int):
    """A seeded draw for one test: its generator, options, size and targets."""
    rng = np.random.default_rng([seed, salt])
    # With quantile levels, so that the losses that need them (wis, spec §8) apply too.
    options = ScoringOptions(log_base=BASES[seed % len(BASES)], quantile_levels=LEVELS)
    n = int(rng.integers(2, 40))
    return rng, options, n, _targets(rng, loss.task, n)


# --- (a) the order of the examples does not matter ------------------------------------------


# Losses whose value depends on the order of tied examples, by definition: ace cuts each
# class's order "stably, by line on ties" (spec §7), so only untied predictions keep it.
ORDER_ON_TIES = {(Task.MULTICLASS, "ace")}


@ALL_LOSSES
@pytest.mark.parametrize("seed", SEEDS)
def test_shuffling_the_examples_keeps_the_value(loss, seed):
    rng, options, n, t = _case(loss, seed, 7001)
    predictions = _predictions(rng, loss.task, t)
    if (loss.task, loss.name) in ORDER_ON_TIES:
        predictions = predictions[:1]  # the soft ones: no two probabilities equal
    for prediction in predictions:
        order = rng.permutation(n)
        shuffled = (
            prediction[order]
            if isinstance(prediction, np.ndarray)
            else [prediction[i] for i in order]
        )
        before = loss.compute(_context(loss.task, prediction, t, options))
        after = loss.compute(_context(loss.task, shuffled, t[order], options))
        assert _same(before, after), (before, after)


# --- (b) a perfect prediction scores no worse than any other ---------------------------------


def _perfect(task: Task, t: np.ndarray) -> list:
    """Predictions that put everything on the target.

    Classification: p = 1 on +1 and 0 on -1. Regression: a Gaussian of variance 1e-30
    at the target (a zero variance would give the nlpd its +inf, spec §3: perfect is the
    limit, not the point), and a sample of the target alone (nlpd n/a).
    """
    if task == Task.MULTICLASS:
        return [np.eye(CLASSES)[t.astype(int)]]
    if task == Task.CLASSIFICATION:
        return [(t == 1).astype(np.float64)]
    return [
        [f"1 {float(target)!r} 1e-30" for target in t],
        [f"2 {float(target)!r}" for target in t],
    ]


@ALL_LOSSES
@pytest.mark.parametrize("seed", SEEDS)
def test_a_perfect_prediction_scores_no_worse_than_any_other(loss, seed):
    rng, options, n, t = _case(loss, seed, 7002)
    others = _predictions(rng, loss.task, t)
    compared = 0
    for perfect in _perfect(loss.task, t):
        best = loss.compute(_context(loss.task, perfect, t, options))
        if best is None:
            continue
        for other in others:
            value = loss.compute(_context(loss.task, other, t, options))
            if value is None:
                continue
            assert best <= value + 1e-12 * max(1.0, abs(value)), (best, value)
            compared += 1
    assert compared, f"{loss.name} was n/a for every perfect or other prediction"


# --- (c) a float, perhaps inf, or None: never NaN --------------------------------------------


def _edge_cases(task: Task) -> list[tuple[object, np.ndarray]]:
    """Hand-made cases where a careless loss would give NaN or a numpy scalar."""
    if task == Task.MULTICLASS:
        uniform = np.full((4, CLASSES), 1 / CLASSES)
        return [
            (np.array([[0.1, 0.2, 0.3, 0.4]]), np.array([2.0])),  # n = 1
            (np.array([[0.7, 0.1, 0.1, 0.1]] * 3), np.zeros(3)),  # one class
            (np.array([[0.0, 1.0, 0, 0], [0.5, 0.5, 0, 0]]), np.array([0.0, 1.0])),  # nlp inf
            (np.eye(CLASSES)[[0, 1, 1]], np.array([0.0, 1.0, 2.0])),  # hard
            (uniform, np.array([0.0, 1.0, 2.0, 3.0])),  # every probability tied
        ]
    if task == Task.CLASSIFICATION:
        return [
            (np.array([0.5]), np.array([1.0])),  # n = 1
            (np.array([0.3, 0.9, 1.0]), np.ones(3)),  # one class: lift n/a
            (np.array([0.0, 1.0, 0.5]), np.array([1.0, -1.0, 1.0])),  # nlp inf
            (np.array([1.0, 0.0, 1.0]), np.array([1.0, -1.0, -1.0])),  # hard
            (np.full(4, 0.5), np.array([1.0, -1.0, 1.0, -1.0])),  # every p tied
        ]
    return [
        (["1 0 1"], np.array([0.5])),  # n = 1: var(t) = 0
        (["1 0 1", "2 1 2", "0 0.2 -1 0.8 1"], np.full(3, 2.0)),  # equal targets, a sample
        (["1 0 0", "1 1 0"], np.array([0.0, 3.0])),  # point file, nlpd inf
        (["1 0 0", "1 1 2"], np.array([0.5, 3.0])),  # a zero-variance row among others
        (["1 -1e100 1e-300", "1 1e100 1e200"], np.array([1e100, -1e100])),  # extremes
        (["0 1e-300 -1e100 0.999999 1e100", "2 1e100 -1e100"], np.array([-1e100, 0.0])),
    ]


@ALL_LOSSES
def test_the_value_is_a_float_or_none_and_never_nan(loss):
    rng = np.random.default_rng(7003)
    cases = list(_edge_cases(loss.task))
    for _ in SEEDS:
        t = _targets(rng, loss.task, int(rng.integers(1, 30)))
        cases += [(prediction, t) for prediction in _predictions(rng, loss.task, t)]
    for base in BASES:
        options = ScoringOptions(log_base=base, quantile_levels=LEVELS)
        for prediction, t in cases:
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # spec §3: nothing on stderr, no numpy warnings
                ctx = _context(loss.task, prediction, t, options)
                value = loss.compute(ctx)
                scores = compute_scores(ctx)
            _check_value(value, f"{loss.name} of {prediction!r}")
            shown = scores[loss.name]
            assert shown is None or type(shown) is float
            assert shown is None or not math.isnan(shown)
