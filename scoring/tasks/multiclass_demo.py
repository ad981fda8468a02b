"""The demo leaderboard's multiclass methods (scoring.tasks.demo): the L class
probabilities per line, or an ensemble's M·L (spec §7).

The probabilistic ones share one model, softmax (multinomial logistic) regression on the
standardised inputs, their squares and pairwise products, fitted by plain gradient
descent. With a few hundred weights per class it fits its training data too closely and
grows overconfident, as deep networks do (Guo et al., ICML 2017); what the entries do
about that is what the calibration losses tell apart:

- *Softmax regression*: nothing; its probabilities as they come;
- *Temperature-scaled*: the logits divided by the one temperature T that minimises the
  negative log probability on a fifth of the training data held out from the fit (Guo
  et al. 2017); T > 1 softens every prediction alike;
- *Ensemble*: five members, each fitted to a random half of the training data, written
  as ensemble rows (Lakshminarayanan et al., NeurIPS 2017, with subsamples for speed);
- *Hard*: a one-hot row per example, the k nearest neighbours' majority class, scored
  by the error rate only.
"""

from __future__ import annotations

import numpy as np

from .demo import Data, Demo, Method, fitted, lines, nearest, standardise

STEPS = 200  # gradient-descent steps
STEP_SIZE = 1.0  # on standardised features with a bias
L2 = 1e-4  # weak: the fit is meant to be as sure of itself as a deep network
MEMBERS = 5
HELD_OUT = 0.2  # share of the training data the temperature is fitted on
TEMPERATURES = np.geomspace(0.05, 20.0, 601)  # the searched grid, 1 % apart
FLOOR = 1e-9  # no probability below this: an unseen case is never declared impossible


def classes_of(data: Data) -> int:
    """L, the dataset's class count (the largest training label + 1 when not given)."""
    return data.classes or int(data.y.max()) + 1


def quadratic(x: np.ndarray) -> np.ndarray:
    """The inputs, their squares and their pairwise products (d + d(d+1)/2 columns)."""
    upper = np.triu_indices(x.shape[1])
    return np.hstack([x, (x[:, :, None] * x[:, None, :])[:, upper[0], upper[1]]])


def softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)


def floored(p: np.ndarray) -> np.ndarray:
    """Probabilities at least FLOOR, summing to 1 again."""
    p = np.maximum(p, FLOOR)
    return p / p.sum(axis=1, keepdims=True)


def fit_softmax(
    features: np.ndarray, labels: np.ndarray, *, classes: int, steps: int = STEPS
) -> np.ndarray:
    """Weights (bias last row) of L2-regularised softmax regression by gradient descent on
    the mean negative log-likelihood; float32 for speed (the demo, not a benchmark)."""
    design = np.hstack([features, np.ones((len(features), 1))]).astype(np.float32)
    onehot = np.eye(classes, dtype=np.float32)[labels]
    weights = np.zeros((design.shape[1], classes), dtype=np.float32)
    for _ in range(steps):
        gradient = design.T @ (softmax(design @ weights) - onehot) / len(labels)
        gradient[:-1] += L2 * weights[:-1]
        weights -= STEP_SIZE * gradient
    return weights


def fitted_softmax(features: np.ndarray, labels: np.ndarray, *, classes: int) -> np.ndarray:
    """fit_softmax, once per training data (demo.fitted): a dataset's val and test files
    share the fit."""

    def fit() -> np.ndarray:
        weights = fit_softmax(features, labels, classes=classes)
        weights.setflags(write=False)
        return weights

    return fitted("softmax", fit, features, labels, classes=classes)


class Model:
    """Softmax regression on quadratic features of standardised inputs: fitted on
    ``x``/``labels``, giving logits for any inputs."""

    def __init__(self, x: np.ndarray, labels: np.ndarray, *, classes: int):
        self.mean, self.scale = self._moments(x)
        features = quadratic((x - self.mean) / self.scale)
        self.f_mean, self.f_scale = self._moments(features)
        features = (features - self.f_mean) / self.f_scale
        self.weights = fitted_softmax(features, labels, classes=classes)

    @staticmethod
    def _moments(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        scale = x.std(axis=0)
        return x.mean(axis=0), np.where(scale > 0, scale, 1.0)

    def logits(self, query: np.ndarray) -> np.ndarray:
        features = (quadratic((query - self.mean) / self.scale) - self.f_mean) / self.f_scale
        design = np.hstack([features, np.ones((len(features), 1))]).astype(np.float32)
        return (design @ self.weights).astype(np.float64)


def temperature(logits: np.ndarray, labels: np.ndarray) -> float:
    """The grid's T minimising the mean negative log probability of softmax(logits / T)."""
    shifted = logits - logits.max(axis=1, keepdims=True)
    true = shifted[np.arange(len(labels)), labels]
    losses = [np.mean(np.log(np.exp(shifted / t).sum(axis=1)) - true / t) for t in TEMPERATURES]
    return float(TEMPERATURES[int(np.argmin(losses))])


def softmax_regression(data: Data) -> bytes:
    model = Model(data.x, data.y, classes=classes_of(data))
    return lines(floored(softmax(model.logits(data.query))))


def temperature_scaled(data: Data) -> bytes:
    order = data.rng.permutation(len(data.y))
    cut = int(round(len(order) * (1 - HELD_OUT)))
    fit, held = order[:cut], order[cut:]
    model = Model(data.x[fit], data.y[fit], classes=classes_of(data))
    t = temperature(model.logits(data.x[held]), data.y[held])
    return lines(floored(softmax(model.logits(data.query) / t)))


def ensemble(data: Data) -> bytes:
    """MEMBERS members' probabilities per row, one member after the other."""
    classes = classes_of(data)
    half = len(data.y) // 2
    members = []
    for _ in range(MEMBERS):
        chosen = data.rng.choice(len(data.y), half, replace=False)
        model = Model(data.x[chosen], data.y[chosen], classes=classes)
        members.append(floored(softmax(model.logits(data.query))))
    return lines(np.hstack(members))


def nearest_neighbours_vote(data: Data, k: int = 15) -> bytes:
    """One-hot rows: the most frequent class among the k nearest training points (the
    smallest class on ties)."""
    classes = classes_of(data)
    labels = data.y[nearest(data, k)]
    counts = np.zeros((len(labels), classes), dtype=np.int64)
    np.add.at(counts, (np.arange(len(labels))[:, None], labels), 1)
    return lines(np.eye(classes, dtype=np.int64)[counts.argmax(axis=1)])


def linear_softmax_regression(data: Data) -> bytes:
    """Softmax regression on the standardised inputs alone: far fewer weights."""
    x, query = standardise(data.x, data.query)
    weights = fitted_softmax(x, data.y, classes=classes_of(data))
    design = np.hstack([query, np.ones((len(query), 1))])
    return lines(floored(softmax(design @ weights.astype(np.float64))))


def _labels(y: np.ndarray) -> np.ndarray:
    """Class labels (read as numbers, e.g. 3.0) as the integers the methods index with."""
    return np.rint(y).astype(np.int64)


DEMO = Demo(
    entries=(
        (
            "demo-ada",
            Method(
                "Softmax regression",
                "Softmax regression on the standardised inputs, their squares and pairwise "
                f"products, {STEPS} steps of gradient descent, weak L2 penalty; "
                "the probabilities as they come.",
                softmax_regression,
            ),
        ),
        (
            "demo-bob",
            Method(
                "Ensemble of 5 softmax regressions",
                "Five softmax regressions (quadratic features), each fitted to a random half of "
                "the training data; each row holds the five members' probabilities.",
                ensemble,
            ),
        ),
        (
            "demo-cy",
            Method(
                "Hard k-NN vote",
                "The majority class of the 15 nearest training points, written as one-hot rows: "
                "a point prediction, ranked only under the 0/1 loss.",
                nearest_neighbours_vote,
            ),
        ),
        (
            "demo-ada",
            Method(
                "Temperature-scaled softmax regression",
                "The softmax regression fitted on 80% of the training data, its logits divided "
                "by the temperature that minimises the negative log probability on the other "
                "20%.",
                temperature_scaled,
            ),
        ),
    ),
    after=(
        "demo-cy",
        Method(
            "Linear softmax regression",
            "Softmax regression on the standardised inputs alone (no squares or products), "
            "sent after the deadline.",
            linear_softmax_regression,
        ),
    ),
    targets=_labels,
)
