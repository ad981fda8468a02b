"""Synthetic replica of the 2004 PASCAL Evaluating Predictive Uncertainty Challenge.

Input dimensions, split sizes and dates are the paper's (Quiñonero-Candela et al.
2006, Table 1 and Sect. 2); the numbers are invented to show the quirks the paper
describes, not the real data (two of the five sets were never made public).
"""

import numpy as np

from .common import DemoChallenge, DemoDataset, rng_for

SIZES = {
    "catalysis": (873, 300, 700),
    "gatineau": (3000, 2176, 3000),
    "stereopsis": (192, 300, 500),
    "gaze": (150, 300, 427),
    "outaouais": (20000, 9000, 20000),
}


def _splits(name: str, inputs: np.ndarray, targets: np.ndarray, rng: np.random.Generator):
    """Shuffle the examples and cut them into the paper's train/val/test sizes."""
    order = rng.permutation(len(targets))
    inputs, targets = inputs[order], targets[order]
    n_train, n_val, _ = SIZES[name]
    cuts = [0, n_train, n_train + n_val, len(targets)]
    return {
        split: (inputs[a:b], targets[a:b])
        for split, a, b in zip(("train", "val", "test"), cuts, cuts[1:], strict=False)
    }


def catalysis(seed: int) -> DemoDataset:
    """Gene expression levels (617) of yeast genes; protein catalytic or not, balanced."""
    rng = rng_for(seed, "catalysis")
    n = sum(SIZES["catalysis"])
    factors = rng.standard_normal((n, 25))
    inputs = factors @ (0.6 * rng.standard_normal((25, 617))) + 0.8 * rng.standard_normal((n, 617))
    score = factors @ rng.standard_normal(25) / 5 + rng.standard_normal(n)
    targets = np.where(score > np.median(score), 1, -1)
    return DemoDataset(
        "catalysis",
        {
            "task": "classification",
            "description": "Synthetic stand-in for the Catalysis set: 617 gene expression levels per "
            "yeast gene; the class says whether its protein is catalytic. About as many positive as "
            "negative examples.",
            "log_base": 10.0,
        },
        _splits("catalysis", inputs, targets, rng),
        input_format="%.4g",
        target_format="%d",
    )


def gatineau(seed: int) -> DemoDataset:
    """1092 sparse count features; about 9 % positives and a weak signal (hard to model)."""
    rng = rng_for(seed, "gatineau")
    n = sum(SIZES["gatineau"])
    rates = rng.gamma(0.3, 0.15, size=1092)
    inputs = rng.poisson(rates, size=(n, 1092))
    informative = rng.choice(1092, size=20, replace=False)
    latent = inputs[:, informative] @ rng.normal(0.0, 1.0, 20) + rng.logistic(scale=1.5, size=n)
    targets = np.where(latent > np.quantile(latent, 0.91), 1, -1)
    return DemoDataset(
        "gatineau",
        {
            "task": "classification",
            "description": "Synthetic stand-in for the secret Gatineau set: 1092 sparse count features, "
            "about 9% positive examples and a weak signal, so the 0/1 loss says little and the "
            "probabilities are what count.",
            "log_base": 10.0,
        },
        _splits("gatineau", inputs, targets, rng),
        input_format="%d",
        target_format="%d",
    )


def stereopsis(seed: int) -> DemoDataset:
    """Two cameras see a pointer; the depth to predict clusters on 10 parallel planes."""
    rng = rng_for(seed, "stereopsis")
    n = sum(SIZES["stereopsis"])
    planes = np.linspace(60.0, 150.0, 10)
    x, y = rng.uniform(-30, 30, n), rng.uniform(-20, 20, n)
    # Structure inside each cluster: the planes are slightly tilted and bumpy.
    depth = planes[rng.integers(0, 10, n)] + 0.04 * x + 0.6 * np.sin(y / 6) + rng.normal(0, 0.15, n)
    focal, baseline = 800.0, 12.0
    inputs = np.column_stack(
        [
            320 + focal * (x + baseline / 2) / depth,
            240 + focal * y / depth,
            320 + focal * (x - baseline / 2) / depth,
            241 + focal * y / depth,
        ]
    ) + rng.normal(0, 0.25, (n, 4))
    return DemoDataset(
        "stereopsis",
        {
            "task": "regression",
            "description": "Synthetic stand-in for Stereopsis: the image coordinates (x, y) of a pointer "
            "in two cameras; predict its depth. The depths were measured on 10 parallel planes, so the "
            "targets cluster around 10 values (with some structure inside each cluster).",
        },
        _splits("stereopsis", inputs, depth, rng),
        input_format="%.6g",
        target_format="%.6g",
    )


def gaze(seed: int) -> DemoDataset:
    """Head-mounted camera measurements; the target is an integer pixel column, with outliers."""
    rng = rng_for(seed, "gaze")
    n = sum(SIZES["gaze"])
    column = rng.integers(0, 1280, n)
    row = rng.integers(0, 1024, n)
    head = rng.normal(0, 1, (n, 3))
    design = np.column_stack([column / 640 - 1, row / 512 - 1, head, (column / 640 - 1) ** 2])
    inputs = 100 + 10 * design @ rng.normal(0, 1, (6, 12)) + rng.normal(0, 1, (n, 12))
    # The cameras occasionally lose their calibration: severe outliers in the inputs.
    lost = rng.random(n) < 0.04
    inputs[lost] += rng.choice([-1, 1], (int(lost.sum()), 12)) * rng.uniform(
        150, 400, (int(lost.sum()), 12)
    )
    return DemoDataset(
        "gaze",
        {
            "task": "regression",
            "description": "Synthetic stand-in for Gaze: 12 measurements from head-mounted cameras "
            "watching markers on a monitor; predict the horizontal pixel position of the target the "
            "subject looks at. Targets are whole pixels (discrete!) and the cameras sometimes lose "
            "their calibration, which makes severe outliers.",
            "min_quantile_gap": 0.0,
        },
        _splits("gaze", inputs, column, rng),
        input_format="%.5g",
        target_format="%d",
    )


def outaouais(seed: int) -> DemoDataset:
    """37 inputs drawn from a few tight clusters (12 of them integer codes); large splits."""
    rng = rng_for(seed, "outaouais")
    n = sum(SIZES["outaouais"])
    clusters = 60
    cluster = rng.choice(clusters, size=n, p=rng.dirichlet(np.full(clusters, 0.7)))
    centres = rng.normal(0, 3, (clusters, 25))
    codes = rng.integers(0, 8, (clusters, 12))
    continuous = centres[cluster] + rng.normal(0, 0.05, (n, 25))
    inputs = np.column_stack([codes[cluster], continuous])
    effect = rng.normal(0, 1, clusters)
    targets = (
        effect[cluster] + 0.3 * continuous[:, :5] @ rng.normal(0, 1, 5) + rng.normal(0, 0.2, n)
    )
    return DemoDataset(
        "outaouais",
        {
            "task": "regression",
            "description": "Synthetic stand-in for the secret Outaouais set: 37 inputs with very "
            "strong cluster structure (the first 12 are integer codes), and large splits.",
        },
        _splits("outaouais", inputs, targets, rng),
        input_format="%.5g",
        target_format="%.5g",
    )


def build(seed: int) -> DemoChallenge:
    return DemoChallenge(
        {
            "slug": "epuc",
            "title": "Evaluating Predictive Uncertainty (2004 replica)",
            "description": "A synthetic replica of the PASCAL Evaluating Predictive Uncertainty "
            "Challenge (NIPS 2004 workshop): two classification and three regression datasets with "
            "the original input dimensions and split sizes. Predict distributions, not just points: "
            "classification is ranked by the negative log probability (base 10, as in the 2004 "
            "tables) and regression by the negative log predictive density.\n\nThe numbers are "
            "generated, not the original measurements.",
            "start": "2004-11-10T00:00:00Z",
            "test_start": "2004-12-03T00:00:00Z",
            "deadline": "2004-12-10T23:59:59Z",
            "results_published": True,
            "test_daily_limit": 5,
            "test_inputs_release": "test_start",
            "test_targets_release": "never",
        },
        [catalysis(seed), gatineau(seed), stereopsis(seed), gaze(seed), outaouais(seed)],
    )
