"""The loss registry: everything the site needs to show, sort and explain a loss.

The site builds its leaderboard columns from :data:`LOSSES`; a loss added here
(with :func:`register`) is computed for every new submission and, after a
rescore, for every earlier one, with no change to the site.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from . import classification, regression
from .options import NmseNormaliser, ScoringOptions, Task
from .parse import RegressionRows


@dataclass
class Context:
    """What a loss is computed from: targets, options and the parsed predictions."""

    task: Task
    targets: np.ndarray
    options: ScoringOptions
    train_targets: np.ndarray | None = None
    p: np.ndarray | None = None  # classification: p(y = +1) per example
    rows: RegressionRows | None = None  # regression: per-example statistics

    @property
    def is_point(self) -> bool:
        if self.task == Task.CLASSIFICATION:
            return classification.is_point(self.p)
        return self.rows.is_point


@dataclass(frozen=True)
class Loss:
    """A loss: lower is better. ``legacy_number`` is the 2006 evaluate.py's loss_type."""

    name: str
    title: str
    task: Task
    probabilistic: bool
    compute: Callable[[Context], float | None] = field(repr=False)
    legacy_number: int | None = None
    reference: str = ""
    description: str = ""


LOSSES: dict[str, Loss] = {}


def register(loss: Loss) -> Loss:
    if loss.name in LOSSES:
        raise ValueError(f"a loss named {loss.name!r} is already registered")
    LOSSES[loss.name] = loss
    return loss


def losses_for(task: Task | str) -> list[Loss]:
    """The task's losses in display order."""
    return [loss for loss in LOSSES.values() if loss.task == Task(task)]


def by_legacy_number(number: int) -> Loss | None:
    return next((loss for loss in LOSSES.values() if loss.legacy_number == number), None)


def _nmse(ctx: Context) -> float | None:
    variance = None
    if ctx.options.nmse_normaliser == NmseNormaliser.TRAINING:
        if ctx.train_targets is None:
            raise ValueError("nmse normalised by the training targets needs train_targets")
        variance = regression.variance(ctx.train_targets)
    return regression.nmse(ctx.rows.stats.mean, ctx.targets, variance=variance)


_PAPER = "Quiñonero-Candela et al., Evaluating Predictive Uncertainty Challenge (2006)"

register(
    Loss(
        "nlp",
        "Negative log probability",
        Task.CLASSIFICATION,
        True,
        lambda c: classification.nlp(c.p, c.targets, base=c.options.log_base),
        legacy_number=3,
        reference=f"{_PAPER}, eq. (12)",
        description="−(1/n) Σ log p(true class); infinite if a true class got probability 0.",
    )
)
register(
    Loss(
        "01l",
        "0/1 loss",
        Task.CLASSIFICATION,
        False,
        lambda c: classification.zero_one(c.p, c.targets),
        legacy_number=4,
        reference=f"{_PAPER}, eq. (11)",
        description="Fraction misclassified, thresholding p(y = +1) at 0.5.",
    )
)
register(
    Loss(
        "lift",
        "LIFT loss",
        Task.CLASSIFICATION,
        True,
        lambda c: classification.lift(c.p, c.targets),
        reference=f"{_PAPER}, eqs. (13)-(16)",
        description="Area lost to the ideal lift curve, relative to a random predictor (1 = random).",
    )
)
register(
    Loss(
        "brier",
        "Brier score",
        Task.CLASSIFICATION,
        True,
        lambda c: classification.brier(c.p, c.targets),
        reference="Brier, Monthly Weather Review 78 (1950)",
        description="(1/n) Σ (p − o)², o = 1 for class +1.",
    )
)
register(
    Loss(
        "ece",
        "Expected calibration error",
        Task.CLASSIFICATION,
        True,
        lambda c: classification.ece(c.p, c.targets),
        reference="Naeini et al., AAAI 2015; 15 equal-width confidence bins",
        description="Σ |B|/n · |accuracy − confidence| over 15 confidence bins.",
    )
)
register(
    Loss(
        "nlpd",
        "Negative log predictive density",
        Task.REGRESSION,
        True,
        lambda c: regression.nlpd(c.rows.stats.logpdf, base=c.options.log_base),
        legacy_number=1,
        reference=f"{_PAPER}, eq. (18)",
        description="−(1/n) Σ log p(t | x); n/a for sample predictions.",
    )
)
register(
    Loss(
        "nmse",
        "Normalised mean squared error",
        Task.REGRESSION,
        False,
        _nmse,
        legacy_number=2,
        reference=f"{_PAPER}, eq. (17)",
        description="Σ (t − mean)² / (n · var(t)); 1 for predicting the mean.",
    )
)
register(
    Loss(
        "crps",
        "Continuous ranked probability score",
        Task.REGRESSION,
        True,
        lambda c: regression.crps(c.rows.stats.crps),
        reference="Kohonen & Suomela, Lessons learned in the challenge (2006), §4.2",
        description="(1/n) Σ ∫ (F(u) − 1{u ≥ t})² du, exact for every row type.",
    )
)


def compute_scores(ctx: Context) -> dict[str, float | None]:
    """Every loss of the task; probabilistic ones are n/a for a non-probabilistic file."""
    point = ctx.is_point
    scores: dict[str, float | None] = {}
    for loss in losses_for(ctx.task):
        value = None if point and loss.probabilistic else loss.compute(ctx)
        scores[loss.name] = None if value is None else float(value)
    return scores


def format_value(value: float | None) -> str:
    """As the command line prints it: repr precision, ``inf``, ``n/a``."""
    if value is None:
        return "n/a"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(float(value))
