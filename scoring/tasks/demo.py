"""Simple, seeded prediction methods for the demo leaderboards (numpy only): what they
share, and :class:`Demo`, the demo entries of one task.

Each method is fitted on training inputs and targets and returns the lines of a
prediction file in the challenge's format (scoring spec §1, §7); each task's module
holds its own (scoring.tasks.binary_demo, regression_demo, multiclass_demo). They are
honest baselines a participant could write in an afternoon, not tuned models. The site's
demo loader (challenge_site/leaderboard/demo/loader.py) sends them through the submission
pipeline.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..options import ScoringOptions

KNN_TRAINING_CAP = 3000  # neighbours are searched among at most this many training points


@dataclass(frozen=True)
class Data:
    """What a method learns from (targets as :attr:`Demo.targets` gives them, classes as
    0/1) and the inputs it predicts; ``classes`` is a multiclass dataset's L (else None)."""

    x: np.ndarray
    y: np.ndarray
    query: np.ndarray
    rng: np.random.Generator
    min_quantile_gap: float = 0.0
    classes: int | None = None


@dataclass(frozen=True)
class Method:
    title: str
    description: str
    predict: Callable[[Data], bytes]
    requires: str = ""  # a ScoringOptions flag the dataset must set (e.g. allow_samples)

    def allowed(self, options: ScoringOptions) -> bool:
        return not self.requires or bool(getattr(options, self.requires))


def _identity(y: np.ndarray) -> np.ndarray:
    return y


@dataclass(frozen=True)
class Demo:
    """A task's demo entries: who sends which method, in time order (a demo
    participant's username, then the method), the entry sent after the deadline, and how
    a target file's values become what the methods learn from."""

    entries: tuple[tuple[str, Method], ...]
    after: tuple[str, Method]
    targets: Callable[[np.ndarray], np.ndarray] = _identity

    def chosen(self, options: ScoringOptions) -> list[tuple[str, Method]]:
        """The entries a dataset of these options accepts."""
        return [(user, method) for user, method in self.entries if method.allowed(options)]


# The fits the demo methods make, by their training data: a dataset's val and test files
# and two methods of one model (logistic regression, its thresholded copy) share one fit,
# so `make run` fits each model once (scoring.tasks.binary_demo, regression_demo).
_FITS: dict[tuple, object] = {}
_FITS_KEPT = 16


def fitted(name: str, fit: Callable[[], object], *arrays: np.ndarray, **options) -> object:
    """``fit()``, or its earlier result for the same ``arrays`` (by their bytes) and
    ``options``: the same numbers, computed once."""
    digest = hashlib.sha1()
    for array in arrays:
        array = np.ascontiguousarray(array)
        digest.update(repr((array.dtype.str, array.shape)).encode())
        digest.update(array.data)
    key = (name, digest.hexdigest(), tuple(sorted(options.items())))
    if key not in _FITS:
        if len(_FITS) >= _FITS_KEPT:
            _FITS.pop(next(iter(_FITS)))
        _FITS[key] = fit()
    return _FITS[key]


def standardise(x: np.ndarray, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    return (x - mean) / scale, (query - mean) / scale


def nearest(data: Data, k: int) -> np.ndarray:
    """Indices (into a capped training sample) of each query row's k nearest neighbours,
    and the sample's targets: distances in standardised inputs, in chunks."""
    x, query = standardise(data.x, data.query)
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


def lines(rows) -> bytes:
    """A prediction file: each row's numbers to 7 significant digits."""
    return "".join(" ".join(f"{v:.7g}" for v in row) + "\n" for row in rows).encode()
