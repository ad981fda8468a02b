"""A synthetic 10-class problem whose test inputs are corrupted at growing severity, in
the manner of CIFAR-10-C (Hendrycks & Dietterich, ICLR 2019).

The classes are Gaussian clusters in 20 dimensions, each with its own spread along every
axis, so that they overlap and a quadratic boundary separates them better than a linear
one. Training and validation inputs are clean; the test inputs are five blocks of 1,000
rows, one per severity 1…5, and inside every block the rows cycle through three
corruptions: added noise, blur (each input mixed with its two neighbours, the 20 inputs
read as a one-dimensional signal) and dropped inputs (set to 0). A classifier's accuracy
falls with the severity; whether its confidence falls with it is what the calibration
losses measure (Ovadia et al., NeurIPS 2019, measured real models this way).
"""

import numpy as np

from .common import DemoChallenge, DemoDataset, rng_for

CLASSES = 10
DIMENSION = 20
SIZES = (5000, 2000, 5000)  # train, validation, test
SEVERITIES = 5
CORRUPTIONS = ("noise", "blur", "drop")
SEPARATION = 0.6  # spread of the class centres; inside a class the spread is 0.7 to 1.4
NOISE = 0.4  # standard deviation of the added noise per severity step
BLUR = 0.15  # weight of the neighbours' mean per severity step
DROP = 0.1  # share of the inputs set to 0 per severity step


def corrupt(
    inputs: np.ndarray, *, kind: str, severity: int, rng: np.random.Generator
) -> np.ndarray:
    """A corrupted copy of ``inputs`` (rows of clean inputs) at ``severity`` 1…5."""
    result = np.array(inputs, dtype=float)
    if kind == "noise":
        result += rng.normal(0.0, NOISE * severity, result.shape)
    elif kind == "blur":
        neighbours = (np.roll(result, 1, axis=1) + np.roll(result, -1, axis=1)) / 2
        result = (1 - BLUR * severity) * result + BLUR * severity * neighbours
    elif kind == "drop":
        result[rng.random(result.shape) < DROP * severity] = 0.0
    else:
        raise ValueError(f"unknown corruption {kind!r}; expected one of {', '.join(CORRUPTIONS)}")
    return result


def test_layout() -> tuple[np.ndarray, np.ndarray]:
    """Each test row's severity (1…5) and corruption (an index into CORRUPTIONS): five
    blocks of rows, one per severity, the rows of a block cycling through noise, blur, drop."""
    block = SIZES[2] // SEVERITIES
    rows = np.arange(SIZES[2])
    return rows // block + 1, (rows % block) % len(CORRUPTIONS)


def clusters(seed: int):
    """Draws from the ten classes: (draw(n) -> inputs, labels) and the generator."""
    rng = rng_for(seed, "cifar10c")
    centres = rng.normal(0.0, SEPARATION, (CLASSES, DIMENSION))
    spreads = rng.uniform(0.7, 1.4, (CLASSES, DIMENSION))

    def draw(n: int) -> tuple[np.ndarray, np.ndarray]:
        labels = rng.integers(0, CLASSES, n)
        inputs = centres[labels] + spreads[labels] * rng.standard_normal((n, DIMENSION))
        return inputs, labels

    return draw, rng


def clusters10(seed: int) -> DemoDataset:
    draw, rng = clusters(seed)
    n_train, n_val, n_test = SIZES
    splits = {"train": draw(n_train), "val": draw(n_val)}
    inputs, labels = draw(n_test)
    severities, kinds = test_layout()
    corrupted = np.empty_like(inputs)
    for severity in range(1, SEVERITIES + 1):
        for index, kind in enumerate(CORRUPTIONS):
            rows = (severities == severity) & (kinds == index)
            corrupted[rows] = corrupt(inputs[rows], kind=kind, severity=severity, rng=rng)
    splits["test"] = (corrupted, labels)
    return DemoDataset(
        "clusters10",
        {
            "task": "multiclass",
            "classes": CLASSES,
            "allow_ensembles": True,
            "ranking_loss": "nlp",
            "description": "Ten classes, 20 inputs per example: overlapping Gaussian clusters, "
            "each with a spread of its own along every input. The training and validation inputs "
            "are clean. The 5,000 test rows are five blocks of 1,000 corrupted at severity s = 1 "
            "to 5 (rows 1-1000 the mildest); inside a block the rows cycle through added noise "
            f"(standard deviation {NOISE} s), blur (each input mixed with the mean of its two "
            f"neighbours, weight {BLUR} s) and dropped inputs (each set to 0 with probability "
            f"{DROP} s). Predict the ten class probabilities per row, or an ensemble's members one "
            "after the other.",
        },
        splits,
        input_format="%.5g",
        target_format="%d",
    )


def build(seed: int) -> DemoChallenge:
    return DemoChallenge(
        {
            "slug": "cifar10c",
            "title": "Calibration under corruption (CIFAR-10-C style, synthetic)",
            "description": "How trustworthy are a classifier's probabilities when its inputs get "
            "worse? In the manner of CIFAR-10-C (Hendrycks & Dietterich 2019), the test inputs "
            "of a ten-class problem are corrupted at five growing severities, while the "
            "validation inputs are clean like the training inputs: a method tuned on the "
            "validation split meets a shift it has not seen. Entries are ranked by the negative "
            "log probability of the true class (natural logarithms); the top-label (ece, rmsce) "
            "and class-wise (sce, ace) calibration errors, the Brier score and the error rate "
            "are shown beside it. Ensembles may send their members' probabilities, and get their "
            "total, data and model uncertainty (tu, du, mi) reported.\n\nThe numbers are "
            "generated: Gaussian clusters, not images.",
            "start": "2019-03-01T00:00:00Z",
            "test_start": "2019-04-01T00:00:00Z",
            "deadline": "2019-04-15T23:59:59Z",
            "results_published": True,
            "val_daily_limit": 10,
            "test_daily_limit": 5,
            "test_inputs_release": "test_start",
            "test_targets_release": "after_publication",
        },
        [clusters10(seed)],
    )
