"""The loss registry: everything the site needs to show, sort and explain a loss.

The site builds its leaderboard columns from :data:`LOSSES`; a loss added here
(with :func:`register`) is computed for every new submission and, after a
rescore, for every earlier one, with no change to the site.
"""

from __future__ import annotations

import functools
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
            return self.summary.point
        return self.rows.is_point

    @functools.cached_property
    def summary(self) -> classification.Summary:
        """Classification: the sums behind nlp, 01l, brier and ece, from one pass."""
        return classification.summarize(self.p, self.targets)


Terms = Callable[[Context], np.ndarray | None]


@dataclass(frozen=True, kw_only=True)
class Loss:
    """A loss: lower is better. Everything the site needs to show, sort and explain it.

    name, title, task: how it is named and which files it scores.
    probabilistic: n/a for a non-probabilistic file (spec §3); False for 01l and nmse.
    compute: the value from a :class:`Context`: a float (maybe inf) or None (n/a).
    terms: the per-example terms (float64, one per example) behind the value, or None
        when there are none (n/a); ``terms_key`` names them in :func:`compute_terms`
        (default ``name``). When ``terms_key == name`` the value is the mean of the terms;
        nmse's terms are the squared errors ``se``, whose mean over var(t) is nmse.
    legacy_number: the 2006 challenge's evaluate.py loss_type (1-4), if any.
    log_scale: an average of −log p (nlp, nlpd): a difference of two values is
        information, in the dataset's log base.
    default_ranking: ranks a dataset of its task that names no ranking loss.
    reference, description: where it comes from and what it measures, for the site.
    """

    name: str
    title: str
    task: Task
    probabilistic: bool
    compute: Callable[[Context], float | None] = field(repr=False)
    terms: Terms | None = field(default=None, repr=False)
    terms_key: str = ""
    legacy_number: int | None = None
    log_scale: bool = False
    default_ranking: bool = False
    reference: str = ""
    description: str = ""

    def __post_init__(self):
        object.__setattr__(self, "task", Task(self.task))
        if self.terms is not None and not self.terms_key:
            object.__setattr__(self, "terms_key", self.name)


LOSSES: dict[str, Loss] = {}


def register(**fields) -> Loss:
    """Add a loss, given by the keyword arguments of :class:`Loss`; returns it."""
    loss = Loss(**fields)
    if loss.name in LOSSES:
        raise ValueError(f"a loss named {loss.name!r} is already registered")
    same_task = losses_for(loss.task)
    if loss.legacy_number is not None and by_legacy_number(loss.legacy_number) is not None:
        raise ValueError(f"legacy number {loss.legacy_number} is already registered")
    if loss.default_ranking and any(other.default_ranking for other in same_task):
        raise ValueError(f"the {loss.task} task already has a default ranking loss")
    if loss.terms is not None and any(
        other.terms is not None and other.terms_key == loss.terms_key for other in same_task
    ):
        raise ValueError(f"terms named {loss.terms_key!r} are already registered")
    LOSSES[loss.name] = loss
    return loss


def losses_for(task: Task | str) -> list[Loss]:
    """The task's losses in display order."""
    return [loss for loss in LOSSES.values() if loss.task == Task(task)]


def by_legacy_number(number: int) -> Loss | None:
    return next((loss for loss in LOSSES.values() if loss.legacy_number == number), None)


def default_ranking_loss(task: Task | str) -> Loss:
    """The loss that ranks a dataset of ``task`` naming none (nlp, nlpd): the one registered
    with ``default_ranking=True``, else the task's first."""
    losses = losses_for(task)
    return next((loss for loss in losses if loss.default_ranking), losses[0])


def _nmse(ctx: Context) -> float | None:
    variance = None
    if ctx.options.nmse_normaliser == NmseNormaliser.TRAINING:
        if ctx.train_targets is None:
            raise ValueError("nmse normalised by the training targets needs train_targets")
        variance = regression.variance(ctx.train_targets)
    return regression.nmse(ctx.rows.stats.mean, ctx.targets, variance=variance)


_PAPER = "Quiñonero-Candela et al., Evaluating Predictive Uncertainty Challenge (2006)"

register(
    name="nlp",
    title="Negative log probability",
    task=Task.CLASSIFICATION,
    probabilistic=True,
    compute=lambda c: c.summary.nlp(c.options.log_base),
    terms=lambda c: classification.nlp_terms(c.p, c.targets, base=c.options.log_base),
    legacy_number=3,
    log_scale=True,
    default_ranking=True,
    reference=f"{_PAPER}, eq. (12)",
    description="−(1/n) Σ log p(true class); infinite if a true class got probability 0.",
)
register(
    name="01l",
    title="0/1 loss",
    task=Task.CLASSIFICATION,
    probabilistic=False,
    compute=lambda c: c.summary.zero_one(),
    terms=lambda c: classification.zero_one_terms(c.p, c.targets),
    legacy_number=4,
    reference=f"{_PAPER}, eq. (11)",
    description="Fraction misclassified, thresholding p(y = +1) at 0.5.",
)
register(
    name="lift",
    title="LIFT loss",
    task=Task.CLASSIFICATION,
    probabilistic=True,
    compute=lambda c: classification.lift_of(c.summary, c.p, c.targets),
    reference=f"{_PAPER}, eqs. (13)-(16)",
    description="Area lost to the ideal lift curve, relative to a random predictor (1 = random).",
)
register(
    name="brier",
    title="Brier score",
    task=Task.CLASSIFICATION,
    probabilistic=True,
    compute=lambda c: c.summary.brier_score(),
    terms=lambda c: classification.brier_terms(c.p, c.targets),
    reference="Brier, Monthly Weather Review 78 (1950)",
    description="(1/n) Σ (p − o)², o = 1 for class +1.",
)
register(
    name="ece",
    title="Expected calibration error",
    task=Task.CLASSIFICATION,
    probabilistic=True,
    compute=lambda c: c.summary.ece(),
    reference="Naeini et al., AAAI 2015; 15 equal-width confidence bins",
    description="Σ |B|/n · |accuracy − confidence| over 15 confidence bins.",
)
register(
    name="nlpd",
    title="Negative log predictive density",
    task=Task.REGRESSION,
    probabilistic=True,
    compute=lambda c: regression.nlpd(
        c.rows.stats.logpdf,
        base=c.options.log_base,
        targets=c.targets,
        mean=c.rows.stats.mean,
        variance=c.rows.variance,
    ),
    terms=lambda c: regression.nlpd_terms(c.rows.stats.logpdf, base=c.options.log_base),
    legacy_number=1,
    log_scale=True,
    default_ranking=True,
    reference=f"{_PAPER}, eq. (18)",
    description="−(1/n) Σ log p(t | x); n/a for sample predictions.",
)
register(
    name="nmse",
    title="Normalised mean squared error",
    task=Task.REGRESSION,
    probabilistic=False,
    compute=_nmse,
    terms=lambda c: regression.squared_errors(c.rows.stats.mean, c.targets),
    terms_key="se",
    legacy_number=2,
    reference=f"{_PAPER}, eq. (17)",
    description="Σ (t − mean)² / (n · var(t)); 1 for predicting the mean.",
)
register(
    name="crps",
    title="Continuous ranked probability score",
    task=Task.REGRESSION,
    probabilistic=True,
    compute=lambda c: regression.crps(c.rows.stats.crps),
    terms=lambda c: np.array(c.rows.stats.crps, dtype=np.float64),
    reference="Kohonen & Suomela, Lessons learned in the challenge (2006), §4.2",
    description="(1/n) Σ ∫ (F(u) − 1{u ≥ t})² du, exact for every row type.",
)


def compute_scores(ctx: Context) -> dict[str, float | None]:
    """Every loss of the task; probabilistic ones are n/a for a non-probabilistic file."""
    point = ctx.is_point
    scores: dict[str, float | None] = {}
    for loss in losses_for(ctx.task):
        value = None if point and loss.probabilistic else loss.compute(ctx)
        scores[loss.name] = None if value is None else float(value)
    return scores


def compute_terms(ctx: Context) -> dict[str, np.ndarray | None]:
    """The per-example terms of every loss of the task that has them, by ``terms_key``.

    Each is a float64 array of one term per example, or None where the loss is n/a by
    the rules of :func:`compute_scores` (a non-probabilistic file) or has no terms (nlpd
    of a file with sample rows).
    """
    point = ctx.is_point
    out: dict[str, np.ndarray | None] = {}
    for loss in losses_for(ctx.task):
        if loss.terms is None:
            continue
        terms = None if point and loss.probabilistic else loss.terms(ctx)
        out[loss.terms_key] = None if terms is None else np.asarray(terms, dtype=np.float64)
    return out


def format_value(value: float | None) -> str:
    """As the command line prints it: repr precision, ``inf``, ``n/a``."""
    if value is None:
        return "n/a"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(float(value))
