"""Simple, seeded prediction methods for the demo leaderboards (numpy only).

Each method is fitted on training inputs and targets and returns the lines of a
prediction file in the challenge's format (scoring spec §1): probabilities of class +1
for classification; Gaussian (``1 m v``), quantile (``0 a1 q1 …``) or sample
(``2 s1 …``) rows for regression. They are honest baselines a participant could
write in an afternoon, not tuned models.
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

KNN_TRAINING_CAP = 3000  # neighbours are searched among at most this many training points
QUANTILE_LEVELS = np.array([0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95])


@dataclass(frozen=True)
class Data:
    """What a method learns from (classes as 0/1) and the inputs it predicts."""

    x: np.ndarray
    y: np.ndarray
    query: np.ndarray
    rng: np.random.Generator
    min_quantile_gap: float = 0.0


def _standardise(x: np.ndarray, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    return (x - mean) / scale, (query - mean) / scale


def _nearest(data: Data, k: int) -> np.ndarray:
    """Indices (into a capped training sample) of each query row's k nearest neighbours,
    and the sample's targets: distances in standardised inputs, in chunks."""
    x, query = _standardise(data.x, data.query)
    keep = np.arange(len(x))
    if len(x) > KNN_TRAINING_CAP:
        keep = np.sort(data.rng.choice(len(x), KNN_TRAINING_CAP, replace=False))
    x = x[keep]
    k = min(k, len(x))
    squared = (x**2).sum(axis=1)
    found = np.empty((len(query), k), dtype=np.int64)
    for start in range(0, len(query), 1000):
        chunk = query[start : start + 1000]
        distances = squared[None, :] - 2 * chunk @ x.T
        found[start : start + len(chunk)] = np.argpartition(distances, k - 1, axis=1)[:, :k]
    return keep[found]


def _logistic_fit(x: np.ndarray, y: np.ndarray, *, l2: float, steps: int = 300) -> np.ndarray:
    """Weights (bias last) of L2-regularised logistic regression by gradient descent."""
    design = np.hstack([x, np.ones((len(x), 1))])
    weights = np.zeros(design.shape[1])
    step = 1.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-np.clip(design @ weights, -30, 30)))
        gradient = design.T @ (p - y) / len(y) + l2 * np.r_[weights[:-1], 0.0]
        weights -= step * gradient
    return weights


def _logistic(data: Data, *, l2: float) -> np.ndarray:
    x, query = _standardise(data.x, data.query)
    weights = _logistic_fit(x, data.y, l2=l2)
    p = 1 / (1 + np.exp(-np.clip(np.hstack([query, np.ones((len(query), 1))]) @ weights, -30, 30)))
    # Never certain: at most as sure as one more training example could justify.
    limit = 1 / (len(data.y) + 1)
    return np.clip(p, limit, 1 - limit)


def _ridge(x: np.ndarray, y: np.ndarray, query: np.ndarray, *, ridge: float = 1e-3):
    """Means for ``query`` and the training residuals of a ridge regression."""
    x, query = _standardise(x, query)
    design = np.hstack([x, np.ones((len(x), 1))])
    penalty = ridge * len(x) * np.eye(design.shape[1])
    penalty[-1, -1] = 0.0
    weights = np.linalg.solve(design.T @ design + penalty, design.T @ y)
    residuals = y - design @ weights
    return np.hstack([query, np.ones((len(query), 1))]) @ weights, residuals


def _lines(rows) -> bytes:
    return "".join(" ".join(f"{v:.7g}" for v in row) + "\n" for row in rows).encode()


# --- Classification -------------------------------------------------------------------


def logistic_regression(data: Data) -> bytes:
    return _lines(p[None] for p in _logistic(data, l2=1e-2))


def logistic_regression_weak_prior(data: Data) -> bytes:
    return _lines(p[None] for p in _logistic(data, l2=1e-4))


def knn_frequencies(data: Data, k: int = 25) -> bytes:
    """Laplace-smoothed frequency of class +1 among the k nearest training points."""
    neighbours = _nearest(data, k)
    positives = data.y[neighbours].sum(axis=1)
    return _lines(((positives + 1) / (neighbours.shape[1] + 2))[:, None])


def hard_classifier(data: Data) -> bytes:
    """Logistic regression thresholded at 1/2: probabilities 0 or 1, a point prediction."""
    return _lines((_logistic(data, l2=1e-2) >= 0.5).astype(int)[:, None])


# --- Regression -----------------------------------------------------------------------


def constant_gaussian(data: Data) -> bytes:
    mean, variance = data.y.mean(), max(data.y.var(), 1e-12)
    return _lines((1, mean, variance) for _ in range(len(data.query)))


def linear_gaussian(data: Data) -> bytes:
    """Ridge regression; its training residual variance as every prediction's variance."""
    means, residuals = _ridge(data.x, data.y, data.query)
    variance = max(residuals.var() * (1 + 2 / len(residuals)), 1e-12)
    return _lines((1, m, variance) for m in means)


def knn_quantiles(data: Data, k: int = 30) -> bytes:
    """Quantiles of the k nearest training targets, kept strictly increasing (and at
    least the dataset's minimum gap apart)."""
    neighbours = _nearest(data, k)
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
    return _lines((1, m, 0) for m in means)


def bootstrap_ensemble(data: Data, members: int = 20) -> bytes:
    """A sample per row: one bootstrap ridge fit per member plus a residual drawn at random."""
    predictions = np.empty((len(data.query), members))
    for member in range(members):
        chosen = data.rng.integers(0, len(data.y), len(data.y))
        means, residuals = _ridge(data.x[chosen], data.y[chosen], data.query)
        predictions[:, member] = means + data.rng.choice(residuals, len(means))
    return _lines([2, *row] for row in predictions)


@dataclass(frozen=True)
class Method:
    title: str
    description: str
    predict: Callable[[Data], bytes]
    samples: bool = False  # needs a dataset that accepts sample rows


CLASSIFICATION = [
    Method(
        "Logistic regression",
        "L2-regularised logistic regression on standardised inputs, fitted by 300 steps of "
        "gradient descent; probabilities kept within 1/(n+1) of 0 and 1.",
        logistic_regression,
    ),
    Method(
        "k-NN class frequencies",
        "Laplace-smoothed frequency of class +1 among the 25 nearest training points.",
        knn_frequencies,
    ),
    Method(
        "Hard classifier",
        "The logistic regression's decisions as probabilities 0 or 1: a point prediction, "
        "ranked only under the 0/1 loss.",
        hard_classifier,
    ),
]
CLASSIFICATION_AFTER = Method(
    "Logistic regression, weak prior",
    "Logistic regression with a hundred times less L2 regularisation, sent after the deadline.",
    logistic_regression_weak_prior,
)
REGRESSION = [
    Method(
        "Constant Gaussian",
        "The training targets' mean and variance for every input.",
        constant_gaussian,
    ),
    Method(
        "Linear regression + Gaussian noise",
        "Ridge regression on standardised inputs; the training residual variance as the "
        "predictive variance.",
        linear_gaussian,
    ),
    Method(
        "k-NN quantiles",
        "Seven quantiles (5 % to 95 %) of the 30 nearest training targets.",
        knn_quantiles,
    ),
    Method(
        "Point prediction",
        "The linear regression's means with variance 0: ranked only under the nMSE.",
        point_prediction,
    ),
    Method(
        "Bootstrap ensemble (samples)",
        "Twenty bootstrap ridge regressions, each plus a random training residual, as a "
        "sample of 20 values per input.",
        bootstrap_ensemble,
        samples=True,
    ),
]
REGRESSION_AFTER = Method(
    "k-NN quantiles, k = 10",
    "The k-NN quantiles with 10 neighbours, sent after the deadline.",
    lambda data: knn_quantiles(data, k=10),
)
