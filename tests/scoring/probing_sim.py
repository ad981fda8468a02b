"""Seeded simulations of leaderboard probing and of honest participants, for the probing
tests (tests/scoring/test_probing.py, tests/submissions/test_probing_stats.py).

A world is a binary classification test set of N examples (targets ±1), a public part
(the examples whose score is shown) and training data; entries are vectors of p(y = +1).
"""

from dataclasses import dataclass

import numpy as np

N = 2000
PUBLIC = 0.5
FEATURES = 12


@dataclass(frozen=True)
class World:
    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y: np.ndarray  # the test targets
    public: np.ndarray  # bool mask of the public part

    @property
    def baseline(self) -> np.ndarray:
        """The training frequency of class +1 for every example (the site's baseline)."""
        return np.full(self.y.size, np.mean(self.y_train > 0))


def world(seed: int = 0, *, n: int = N, train: int = 3000) -> World:
    rng = np.random.default_rng(seed)
    w = rng.normal(size=FEATURES) * np.linspace(1.5, 0.1, FEATURES)
    x_train, x_test = rng.normal(size=(train, FEATURES)), rng.normal(size=(n, FEATURES))

    def labels(x):
        return np.where(x @ w + rng.logistic(size=len(x)) > 0, 1, -1)

    return World(x_train, labels(x_train), x_test, labels(x_test), rng.random(n) < PUBLIC)


def nlp(p: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The per-example terms of the log loss (the site's classification ranking loss)."""
    return -np.log(np.where(y > 0, p, 1 - p))


def as_file(p: np.ndarray) -> np.ndarray:
    """As a prediction file carries them: 6 significant digits, within (0, 1)."""
    return np.array([float(f"{v:.6g}") for v in np.clip(p, 1e-6, 1 - 1e-6)])


def _fit(x: np.ndarray, y: np.ndarray, *, ridge: float) -> np.ndarray:
    """Ridge logistic regression by Newton's method (with an intercept column)."""
    x = np.c_[np.ones(len(x)), x]
    t, w = (y > 0).astype(float), np.zeros(x.shape[1])
    for _ in range(12):
        p = 1 / (1 + np.exp(-x @ w))
        grad = x.T @ (p - t) + ridge * w
        hess = (x * (p * (1 - p))[:, None]).T @ x + ridge * np.eye(x.shape[1])
        w -= np.linalg.solve(hess, grad)
    return w


def honest(world: World, seed: int, *, entries: int = 10) -> list[np.ndarray]:
    """A participant improving a model: each entry a logistic regression on more
    training rows and more features (in an order of their own), a ridge of their own,
    and the noise of their pipeline."""
    rng = np.random.default_rng(seed)
    order = np.r_[rng.permutation(3)[:1], rng.permutation(FEATURES)]
    order = list(dict.fromkeys(order))
    files = []
    for j in range(entries):
        features = order[: min(FEATURES, 2 + j)]
        rows = min(len(world.y_train), 60 + 300 * j)
        w = _fit(world.x_train[:rows, features], world.y_train[:rows], ridge=rng.uniform(0.1, 10))
        logits = np.c_[np.ones(len(world.x_test)), world.x_test[:, features]] @ w
        files.append(
            as_file(1 / (1 + np.exp(-(logits + rng.normal(scale=0.05, size=logits.size)))))
        )
    return files


def boosting(world: World, seed: int, *, k: int = 50, delta: float = 0.05) -> list[np.ndarray]:
    """Blum & Hardt's attack on the public score: k random ±delta vectors around 1/2,
    those whose public log loss beats a random vector's expectation kept, then their
    majority vote (the last file)."""
    rng = np.random.default_rng(seed)
    chance = -(np.log(0.5 + delta) + np.log(0.5 - delta)) / 2
    files, vote = [], np.zeros(world.y.size)
    for _ in range(k):
        signs = rng.choice([-1.0, 1.0], world.y.size)
        p = 0.5 + delta * signs
        files.append(p)
        if nlp(p, world.y)[world.public].mean() < chance:
            vote += signs
    files.append(0.5 + 0.2 * np.sign(vote + 1e-9))
    return files


def jitter(p: np.ndarray, rng, kind: str) -> np.ndarray:
    """``p`` with every value moved a little: by up to 1e-11, or by a few ulps."""
    if kind == "1e-11":
        return p + rng.uniform(-1e-11, 1e-11, p.size)
    return p + rng.integers(-4, 5, p.size) * np.spacing(p)


def oracle(
    base: np.ndarray, seed: int, *, kind: str, entries: int = 14, rows: int = 7
) -> list[np.ndarray]:
    """Whitehill's log-loss oracle, jittered: each entry is ``base`` (jittered afresh)
    with ``rows`` new rows set to distinct confident values that the score decodes."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(base.size)
    files = [jitter(base, rng, kind)]
    for j in range(entries - 1):
        p = jitter(base, rng, kind)
        probed = order[j * rows : (j + 1) * rows]
        p[probed] = 0.5 + 0.49 * (0.5 ** np.arange(rows))  # 0.99, 0.745, 0.6225, …
        files.append(p)
    return files


def constant_but(n: int, few: int, seed: int, *, kind: str) -> np.ndarray:
    """1/2 everywhere (jittered) but ``few`` rows at confident values."""
    rng = np.random.default_rng(seed)
    p = jitter(np.full(n, 0.5), rng, kind)
    p[rng.choice(n, few, replace=False)] = rng.choice([0.05, 0.95], few)
    return p
