"""Synthetic replica of the 2006 PASCAL challenge "Learning when test and training
inputs have different distributions".

In every dataset the validation and test inputs follow a different distribution
from the training inputs. Sizes of Wheat, Barley and Schnitzel are the challenge
page's; it gives none for Udon and Maki, so those are our choice (README.md).
"""

import numpy as np

from .common import DemoChallenge, DemoDataset, rng_for

SIZES = {
    "udon": (200, 50, 500),  # not on the 2006 page: chosen
    "maki": (300, 100, 500),  # not on the 2006 page: chosen
    "wheat": (400, 50, 1000),
    "barley": (400, 50, 1000),
    "schnitzel": (280, 40, 185),
}
REGRESSION = {"task": "regression", "nmse_normaliser": "training"}
CLASSIFICATION = {"task": "classification"}
# The share of each test set drawn as the training data are (slice "in"); the rest is
# shifted (slice "shifted"), so that every loss is also reported on each, as the 2006
# results and the Shifts benchmarks (Malinin et al. 2021) report in-domain and shifted
# data apart (scoring.md §8). A demo choice: the 2006 test sets were shifted throughout.
IN_SHARE = 0.2


def _mixed(rng, n: int, in_domain, shifted) -> tuple[tuple[np.ndarray, np.ndarray], list[str]]:
    """``n`` test examples, IN_SHARE of them from ``in_domain(k)`` and the rest from
    ``shifted(k)`` (each returns (inputs, targets)), in a random order, with their
    slice names."""
    n_in = round(IN_SHARE * n)
    parts = [in_domain(n_in), shifted(n - n_in)]
    order = rng.permutation(n)
    inputs = np.concatenate([part[0] for part in parts])[order]
    targets = np.concatenate([part[1] for part in parts])[order]
    names = np.array(["in"] * n_in + ["shifted"] * (n - n_in))[order]
    return (inputs, targets), names.tolist()


def udon(seed: int) -> DemoDataset:
    """A noisy sine; training inputs around 1, validation and test inputs around 2."""
    rng = rng_for(seed, "udon")
    n_train, n_val, n_test = SIZES["udon"]

    def draw(n, centre, spread):
        x = rng.normal(centre, spread, n)
        return x[:, None], np.sin(2 * x) + rng.normal(0, 0.05, n)

    splits = {
        "train": draw(n_train, 1.0, 0.5),
        "val": draw(n_val, 2.0, 0.25),
    }
    splits["test"], slices = _mixed(
        rng, n_test, lambda k: draw(k, 1.0, 0.5), lambda k: draw(k, 2.0, 0.25)
    )
    return DemoDataset(
        "udon",
        {
            **REGRESSION,
            "description": "Samples from a noisy sine function. The training inputs are centred "
            "around 1, the validation and test inputs around 2 (inspired by the toy data of "
            "Sugiyama and Müller); the function does not change between them. Every prediction "
            "is also read at five quantile levels: the weighted interval score (wis) and the "
            "coverage of the central 50 % and 90 % intervals show how well the predictive "
            "intervals survive the shift.",
            # Spec §8: wis and the coverages cov50 and cov90 (a demo choice: 2006 had none).
            "quantile_levels": [0.05, 0.25, 0.5, 0.75, 0.95],
        },
        splits,
        slices={"test": slices},
    )


def maki(seed: int) -> DemoDataset:
    """Depth from stereo as ordinal regression: training from some planes, test from all."""
    rng = rng_for(seed, "maki")
    n_train, n_val, n_test = SIZES["maki"]
    depths = np.linspace(50.0, 140.0, 10)

    def draw(n, planes):
        plane = rng.choice(planes, n)
        x, y = rng.uniform(-25, 25, n), rng.uniform(-15, 15, n)
        z = depths[plane - 1] + rng.normal(0, 0.3, n)
        inputs = np.column_stack(
            [800 * (x + 6) / z, 800 * y / z, 800 * (x - 6) / z, 800 * y / z + 1]
        )
        return inputs + rng.normal(0, 0.2, (n, 4)), plane

    every = np.arange(1, 11)
    splits = {
        "train": draw(n_train, every[::3]),
        "val": draw(n_val, every),
    }
    splits["test"], slices = _mixed(
        rng, n_test, lambda k: draw(k, every[::3]), lambda k: draw(k, every)
    )
    return DemoDataset(
        "maki",
        {
            **REGRESSION,
            "description": "A depth-from-stereo experiment: image coordinates of a point in two "
            "cameras; predict the number (1 to 10) of the plane it lies on. An ordinal problem, "
            "scored as regression. The training points come from planes 1, 4, 7 and 10 only; the "
            "validation and test points from all ten.",
        },
        splits,
        target_format="%d",
        slices={"test": slices},
    )


def _two_class(
    seed: int, name: str, *, train_centre, test_centre, boundary, description
) -> DemoDataset:
    """Five inputs; the class depends on the first two through a fixed curved boundary.

    Training and test inputs come from differently placed Gaussians (covariate shift).
    """
    rng = rng_for(seed, name)
    n_train, n_val, n_test = SIZES[name]

    def draw(n, centre):
        inputs = np.column_stack([rng.normal(centre, 1.0, (n, 2)), rng.normal(0, 1, (n, 3))])
        logit = 4 * (inputs[:, 1] - boundary(inputs[:, 0]))
        positive = rng.random(n) < 1 / (1 + np.exp(-logit))
        return inputs, np.where(positive, 1, -1)

    splits = {
        "train": draw(n_train, train_centre),
        "val": draw(n_val, test_centre),
    }
    splits["test"], slices = _mixed(
        rng, n_test, lambda k: draw(k, train_centre), lambda k: draw(k, test_centre)
    )
    return DemoDataset(
        name,
        {**CLASSIFICATION, "description": description},
        splits,
        target_format="%d",
        slices={"test": slices},
    )


def wheat(seed: int) -> DemoDataset:
    return _two_class(
        seed,
        "wheat",
        train_centre=(-1.0, 0.0),
        test_centre=(1.5, 0.5),
        boundary=lambda x: 0.5 * x**2 - 0.5,
        description="Five inputs, two informative: the classes are split by a curved boundary. The "
        "training inputs cover its left part, the validation and test inputs its right part.",
    )


def barley(seed: int) -> DemoDataset:
    return _two_class(
        seed,
        "barley",
        train_centre=(0.0, -1.0),
        test_centre=(0.5, 1.5),
        boundary=lambda x: np.sin(1.5 * x),
        description="Five inputs, two informative, with a wavy class boundary. The validation and "
        "test inputs lie above most training inputs, so the class balance changes too.",
    )


def schnitzel(seed: int) -> DemoDataset:
    """Brain-computer-interface-like: the class boundary itself moves between sessions."""
    rng = rng_for(seed, "schnitzel")
    n_train, n_val, n_test = SIZES["schnitzel"]

    def draw(n, shift, direction):
        inputs = rng.normal(shift, 1.0, (n, 3))
        logit = 1.2 * inputs @ direction
        return inputs, np.where(rng.random(n) < 1 / (1 + np.exp(-logit)), 1, -1)

    train_direction = np.array([1.0, 0.3, 0.0])
    feedback_direction = np.array([0.4, 0.8, 0.3])
    feedback_shift = np.array([0.8, -0.5, 0.3])
    splits = {
        "train": draw(n_train, 0.0, train_direction),
        "val": draw(n_val, feedback_shift, feedback_direction),
    }
    splits["test"], slices = _mixed(
        rng,
        n_test,
        lambda k: draw(k, 0.0, train_direction),
        lambda k: draw(k, feedback_shift, feedback_direction),
    )
    return DemoDataset(
        "schnitzel",
        {
            **CLASSIFICATION,
            "description": "Three features from a brain-computer-interface experiment (synthetic "
            "here). Training data come from the training session, validation and test data from "
            "the feedback session, where not only the inputs but also the relation between inputs "
            "and class have changed.",
        },
        splits,
        input_format="%.5g",
        target_format="%d",
        slices={"test": slices},
    )


def build(seed: int) -> DemoChallenge:
    return DemoChallenge(
        {
            "slug": "covshift",
            "title": "Learning when test and training inputs differ (2006 replica)",
            "description": "A synthetic replica of the PASCAL challenge on covariate shift (NIPS 2006 "
            "workshop): in every dataset the test inputs follow a different distribution from the "
            "training inputs. Probabilistic predictions are strongly encouraged; point predictions "
            "are accepted and ranked separately. Logarithms are natural and the nMSE is normalised "
            "by the variance of the training targets, as in 2006.\n\nThe numbers are generated, "
            "not the original data.",
            "start": "2006-10-01T00:00:00Z",
            "test_start": "2006-11-10T00:00:00Z",
            "deadline": "2006-11-24T23:59:59Z",
            "results_published": True,
            "val_daily_limit": 5,
            "test_daily_limit": 5,
            "test_inputs_release": "test_start",
            "test_targets_release": "after_publication",
            "test_public_fraction": 0.3,
            "final_entries": 2,
        },
        [udon(seed), maki(seed), wheat(seed), barley(seed), schnitzel(seed)],
    )
