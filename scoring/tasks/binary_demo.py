"""The demo leaderboard's classification methods (scoring.tasks.demo): probabilities of
class +1, one per line."""

from __future__ import annotations

import numpy as np

from .demo import Data, Demo, Method, fitted, lines, nearest, standardise


def _logistic_fit(x: np.ndarray, y: np.ndarray, *, l2: float, steps: int = 300) -> np.ndarray:
    """Weights (bias last) of L2-regularised logistic regression by gradient descent."""
    design = np.hstack([x, np.ones((len(x), 1))])
    weights = np.zeros(design.shape[1])
    step = 1.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-np.clip(design @ weights, -30, 30)))
        gradient = design.T @ (p - y) / len(y) + l2 * np.r_[weights[:-1], 0.0]
        weights -= step * gradient
    weights.setflags(write=False)  # demo.fitted shares it with later calls on the same data
    return weights


def _logistic(data: Data, *, l2: float) -> np.ndarray:
    x, query = standardise(data.x, data.query)
    weights = fitted("logistic", lambda: _logistic_fit(x, data.y, l2=l2), x, data.y, l2=l2)
    p = 1 / (1 + np.exp(-np.clip(np.hstack([query, np.ones((len(query), 1))]) @ weights, -30, 30)))
    # Never certain: at most as sure as one more training example could justify.
    limit = 1 / (len(data.y) + 1)
    return np.clip(p, limit, 1 - limit)


def logistic_regression(data: Data) -> bytes:
    return lines(p[None] for p in _logistic(data, l2=1e-2))


def logistic_regression_weak_prior(data: Data) -> bytes:
    return lines(p[None] for p in _logistic(data, l2=1e-4))


def knn_frequencies(data: Data, k: int = 25) -> bytes:
    """Laplace-smoothed frequency of class +1 among the k nearest training points."""
    neighbours = nearest(data, k)
    positives = data.y[neighbours].sum(axis=1)
    return lines(((positives + 1) / (neighbours.shape[1] + 2))[:, None])


def hard_classifier(data: Data) -> bytes:
    """Logistic regression thresholded at 1/2: probabilities 0 or 1, a point prediction."""
    return lines((_logistic(data, l2=1e-2) >= 0.5).astype(int)[:, None])


def _classes(y: np.ndarray) -> np.ndarray:
    """Targets +1 and -1 as the methods learn them: 1 and 0."""
    return (y == 1).astype(float)


DEMO = Demo(
    entries=(
        (
            "demo-ada",
            Method(
                "Logistic regression",
                "L2-regularised logistic regression on standardised inputs, fitted by 300 "
                "steps of gradient descent; probabilities kept within 1/(n+1) of 0 and 1.",
                logistic_regression,
            ),
        ),
        (
            "demo-bob",
            Method(
                "k-NN class frequencies",
                "Laplace-smoothed frequency of class +1 among the 25 nearest training points.",
                knn_frequencies,
            ),
        ),
        (
            "demo-cy",
            Method(
                "Hard classifier",
                "The logistic regression's decisions as probabilities 0 or 1: a point "
                "prediction, ranked only under the 0/1 loss.",
                hard_classifier,
            ),
        ),
    ),
    after=(
        "demo-ada",
        Method(
            "Logistic regression, weak prior",
            "Logistic regression with a hundred times less L2 regularisation, sent after the "
            "deadline.",
            logistic_regression_weak_prior,
        ),
    ),
    targets=_classes,
)
