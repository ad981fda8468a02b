"""The demo leaderboard's regression methods (scoring.tasks.demo): Gaussian (``1 m v``),
quantile (``0 a1 q1 …``) and sample (``2 s1 …``) rows."""

from __future__ import annotations

import numpy as np

from .demo import Data, Demo, Method, fitted, lines, nearest, standardise

QUANTILE_LEVELS = np.array([0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95])


def _ridge(x: np.ndarray, y: np.ndarray, query: np.ndarray, *, ridge: float = 1e-3):
    """Means for ``query`` and the training residuals of a ridge regression."""
    x, query = standardise(x, query)

    def fit():
        design = np.hstack([x, np.ones((len(x), 1))])
        penalty = ridge * len(x) * np.eye(design.shape[1])
        penalty[-1, -1] = 0.0
        weights = np.linalg.solve(design.T @ design + penalty, design.T @ y)
        residuals = y - design @ weights
        weights.setflags(write=False)  # shared by later calls with the same data
        residuals.setflags(write=False)
        return weights, residuals

    weights, residuals = fitted("ridge", fit, x, y, ridge=ridge)
    return np.hstack([query, np.ones((len(query), 1))]) @ weights, residuals


def constant_gaussian(data: Data) -> bytes:
    mean, variance = data.y.mean(), max(data.y.var(), 1e-12)
    return lines((1, mean, variance) for _ in range(len(data.query)))


def linear_gaussian(data: Data) -> bytes:
    """Ridge regression; its training residual variance as every prediction's variance."""
    means, residuals = _ridge(data.x, data.y, data.query)
    variance = max(residuals.var() * (1 + 2 / len(residuals)), 1e-12)
    return lines((1, m, variance) for m in means)


def knn_quantiles(data: Data, k: int = 30) -> bytes:
    """Quantiles of the k nearest training targets, kept strictly increasing (and at
    least the dataset's minimum gap apart)."""
    neighbours = nearest(data, k)
    quantiles = np.quantile(data.y[neighbours], QUANTILE_LEVELS, axis=1).T
    scale = max(float(np.ptp(data.y)), 1.0)
    # A hair more than the minimum gap: the check compares the doubles exactly (spec §1),
    # and q + gap rounded can fall an ulp short of q + gap. Written in full (repr), since
    # 7 significant digits could close a gap again.
    gap = max(data.min_quantile_gap * (1 + 1e-9), 1e-4 * scale)
    for j in range(1, quantiles.shape[1]):
        quantiles[:, j] = np.maximum(quantiles[:, j], quantiles[:, j - 1] + gap)
    pairs = np.empty((len(quantiles), 2 * len(QUANTILE_LEVELS)))
    pairs[:, 0::2], pairs[:, 1::2] = QUANTILE_LEVELS, quantiles
    return "".join("0 " + " ".join(map(repr, row.tolist())) + "\n" for row in pairs).encode()


def point_prediction(data: Data) -> bytes:
    """Ridge regression means with variance 0: a point prediction, scored by nmse only."""
    means, _ = _ridge(data.x, data.y, data.query)
    return lines((1, m, 0) for m in means)


def bootstrap_ensemble(data: Data, members: int = 20) -> bytes:
    """A sample per row: one bootstrap ridge fit per member plus a residual drawn at random."""
    predictions = np.empty((len(data.query), members))
    for member in range(members):
        chosen = data.rng.integers(0, len(data.y), len(data.y))
        means, residuals = _ridge(data.x[chosen], data.y[chosen], data.query)
        predictions[:, member] = means + data.rng.choice(residuals, len(means))
    return lines([2, *row] for row in predictions)


DEMO = Demo(
    entries=(
        (
            "demo-cy",
            Method(
                "Constant Gaussian",
                "The training targets' mean and variance for every input.",
                constant_gaussian,
            ),
        ),
        (
            "demo-ada",
            Method(
                "Linear regression + Gaussian noise",
                "Ridge regression on standardised inputs; the training residual variance as "
                "the predictive variance.",
                linear_gaussian,
            ),
        ),
        (
            "demo-bob",
            Method(
                "k-NN quantiles",
                "Seven quantiles (5 % to 95 %) of the 30 nearest training targets.",
                knn_quantiles,
            ),
        ),
        (
            "demo-cy",
            Method(
                "Point prediction",
                "The linear regression's means with variance 0: ranked only under the nMSE.",
                point_prediction,
            ),
        ),
        (
            "demo-bob",
            Method(
                "Bootstrap ensemble (samples)",
                "Twenty bootstrap ridge regressions, each plus a random training residual, as "
                "a sample of 20 values per input.",
                bootstrap_ensemble,
                requires="allow_samples",
            ),
        ),
    ),
    after=(
        "demo-bob",
        Method(
            "k-NN quantiles, k = 10",
            "The k-NN quantiles with 10 neighbours, sent after the deadline.",
            lambda data: knn_quantiles(data, k=10),
        ),
    ),
)
