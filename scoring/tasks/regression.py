"""Scalar regression (spec §1-§3): each line a Gaussian ``1 m v``, quantiles
``0 a1 q1 … aN qN`` or a sample ``2 s1 … sK``, row types mixed freely; targets any
numbers. The 2004 and 2006 challenges' regression task.

It is the task inferred when no other fits. A dataset of it may forbid sample rows, set a
minimum gap between quantiles, and normalise nmse by the training targets' variance.
"""

from __future__ import annotations

import numpy as np

from .. import certainty, quantile_scores, regression, selective
from ..decomposition import pit_uniformity_test
from ..distributions import gaussian_stats
from ..losses import PAPER, Context, register
from ..options import NmseNormaliser, ScoringOptions, Task
from ..parse import GAUSSIAN, RegressionRows, check_regression, read_regression
from ..pit import MeanPit
from ..plots import pit_summary
from ..taskspec import Inference, TaskSpec, register_task
from . import text
from .regression_demo import DEMO


class Regression(TaskSpec):
    name = Task.REGRESSION
    label = "Regression"
    settings = ("allow_samples", "min_quantile_gap", "nmse_normaliser", "quantile_levels")
    inference = Inference()  # the fallback
    demo = DEMO
    certain_what = "zero predictive variance"
    certain_risk = (
        "a single such example whose target is not exactly the predicted value makes nlpd infinite"
    )

    def read(self, source, *, path, targets, options, reader):
        # A reader of its own: the blocks task inference read are not kept for this task.
        return read_regression(source, path=path, targets=targets, options=options)

    def check(self, source, *, path, options, n_expected, reader):
        check_regression(source, path=path, options=options, n_expected=n_expected, reader=reader)

    def context(self, targets, options, train_targets, prediction):
        return Context(self.name, targets, options, train_targets, rows=prediction)

    def baseline(self, train_targets, targets, options):
        """A Gaussian with the training targets' mean and variance (ddof 0)."""
        n = targets.size
        mean = np.full(n, float(np.mean(train_targets)))
        var = np.full(n, regression.variance(train_targets))
        rows = RegressionRows(
            np.full(n, GAUSSIAN, dtype=np.int8), var, gaussian_stats(mean, var, targets)
        )
        return Context(self.name, targets, options, train_targets, rows=rows)

    def retention_inputs(self, ctx):
        """Errors (t − m)², keys the predictive variance, surest (smallest) first (spec §8)."""
        rows = ctx.rows
        errors, unit = selective.squared(rows.residuals(ctx.targets))
        # (hi, lo) columns: the exact variance's order where one double would tie or
        # misorder two rows (1e200 and 1e200 + 6.2e183)
        keys = tuple(rows.predictive_variance(remainder=True))
        return errors, keys, True, unit

    def is_point(self, ctx):
        return ctx.rows.is_point

    def certain(self, ctx):
        """Zero-variance rows (:func:`scoring.certainty.regression_certain`)."""
        return certainty.regression_certain(ctx.rows)

    def reported(self, ctx):
        """With quantile levels, the coverage ``covP`` of every central interval (spec §8,
        :func:`scoring.quantile_scores.coverages`); none for a non-probabilistic file,
        which spec §3 reports nmse alone for."""
        if ctx.options.quantile_levels is None or ctx.is_point:
            return {}
        return quantile_scores.coverages(_quantiles(ctx), ctx.targets, ctx.options.quantile_levels)

    def subset(self, ctx, mask):
        rows = ctx.rows.subset(mask)
        return Context(ctx.task, ctx.targets[mask], ctx.options, ctx.train_targets, rows=rows)

    def plot_data(self, ctx):
        """``pit`` (histogram and coverage of central intervals), ``calibration_test``
        (:func:`scoring.decomposition.pit_uniformity_test`) and ``retention``
        (:func:`scoring.selective.plot_of`, None for a non-probabilistic file). Both PIT
        figures use each example's PIT interval [F(t−), F(t)] (Czado et al. 2009; a
        sample row's verification rank, :func:`scoring.distributions.sample_stats`)."""
        low, high = ctx.rows.stats.pit_bounds()
        mean_pit = MeanPit.of(high, low)  # (sorted once for both)
        return {
            "pit": pit_summary(mean_pit),
            "calibration_test": pit_uniformity_test(mean_pit),
            "retention": selective.plot_of(ctx),
        }

    def probe_values(self, ctx):
        """The predictive mean with the variance of Gaussian rows (NaN for quantile and
        sample rows) and the row type."""
        rows = ctx.rows
        return np.column_stack([rows.stats.mean, rows.variance, rows.kind.astype(np.float64)])

    def format_help(self, options: ScoringOptions) -> list[str]:
        parts = [
            text.heading("Predictions (regression)"),
            text.wrap(
                "Each line starts with a flag saying how it describes your predictive"
                " distribution of the target. Different lines of one file may use different"
                " kinds."
            ),
            text.wrap(
                "Flag 1, a Gaussian: 1 m v. Mean m and variance v (not the standard deviation),"
                " v >= 0. Variance 0 is a point prediction; a file of point predictions only is"
                " scored by nMSE alone. A mean of 3.1 and variance 1.7:"
            ),
            text.example(["1 3.1 1.7"]),
            text.wrap(
                "Flag 0, quantiles: 0 a1 q1 a2 q2 ... aN qN. Pairs of a probability level a and"
                " its quantile q: your probability that the target is below q is a. Between 2"
                " and 200 pairs; levels strictly increase inside (0, 1) and quantiles strictly"
                " increase. The density is flat between quantiles, with exponential tails"
                " outside carrying the remaining probability."
                + (
                    f" In this dataset consecutive quantiles must be at least"
                    f" {options.min_quantile_gap:g} apart."
                    if options.min_quantile_gap
                    else ""
                )
                + " For example:"
            ),
            text.example(["0 0.2 -2 0.3 -1 0.8 1 0.9 3"]),
        ]
        if options.allow_samples:
            parts += [
                text.wrap(
                    "Flag 2, a sample: 2 s1 s2 ... sK. Between 1 and 1000 values drawn from your"
                    " predictive distribution (an ensemble), scored as their empirical"
                    " distribution; NLPD is not available for a file with sample lines."
                    " For example:"
                ),
                text.example(["2 4.9 5.3 5.1 6.0 5.4"]),
                text.wrap("A file mixing all three:"),
                text.example(
                    [
                        "1 3.1 1.7",
                        "0 0.2 -2 0.3 -1 0.8 1 0.9 3",
                        "2 4.9 5.3 5.1 6.0 5.4",
                        "1 -0.25 0",
                    ]
                ),
            ]
        else:
            parts += [
                text.wrap("Flag 2 (a sample of values) is not accepted for this dataset."),
                text.wrap("A file mixing both kinds:"),
                text.example(["1 3.1 1.7", "0 0.2 -2 0.3 -1 0.8 1 0.9 3", "1 -0.25 0"]),
            ]
        if options.quantile_levels is not None:
            parts.append(text.wrap(_levels_help(options.quantile_levels)))
        return parts


def _levels_help(levels: tuple[float, ...]) -> str:
    """What the README says of a dataset's quantile levels (spec §8)."""
    shown = ", ".join(f"{level:g}" for level in levels)
    pairs = quantile_scores.central_intervals(levels)
    covered = (
        " It also reports how often the target falls inside each central interval ("
        + ", ".join(f"{p}%: levels {levels[lo]:g} to {levels[hi]:g}" for p, lo, hi in pairs)
        + "), against its nominal coverage."
        if pairs
        else ""
    )
    return (
        f"Quantile levels: this dataset reads every line, whatever its kind, at the levels"
        f" {shown} (a Gaussian at m + sqrt(v) times the standard normal quantile, quantile"
        f" lines by their own distribution, samples by linear interpolation) and scores them"
        f" by the weighted interval score (wis), the average over the levels a of"
        f" 2(1{{t < q}} - a)(q - t)." + covered
    )


def _quantiles(ctx: Context) -> np.ndarray:
    """Every row read at the dataset's levels (n × K), once per context."""
    return ctx.memo("quantiles", lambda: ctx.rows.quantiles(ctx.options.quantile_levels))


def _wis_terms(ctx: Context) -> np.ndarray:
    levels = ctx.options.quantile_levels
    q = _quantiles(ctx)
    terms = quantile_scores.wis_terms(q, ctx.targets, levels)
    far = ~np.isfinite(q).all(axis=1)
    if far.any():
        # A reading past the largest double (a tail scale bN ≈ 2e308) is +inf, yet the
        # term, a weighted mean of QS, may be finite: those rows are read scaled down by
        # 2**-64 (exact: §2's distribution scales with its values, QS with both) and their
        # terms scaled back, +inf only where the term itself exceeds the largest double.
        scaled = ctx.rows.subset(far).quantiles(levels, scale=_DOWN)
        with np.errstate(over="ignore"):
            terms[far] = quantile_scores.wis_terms(scaled, ctx.targets[far] * _DOWN, levels) / _DOWN
    return terms


_DOWN = 2.0**-64


def _nmse(ctx: Context) -> float | None:
    variance = None
    if ctx.options.nmse_normaliser == NmseNormaliser.TRAINING:
        if ctx.train_targets is None:
            raise ValueError("nmse normalised by the training targets needs train_targets")
        variance = regression.variance(ctx.train_targets)
    return regression.nmse(
        ctx.rows.stats.mean, ctx.targets, variance=variance, residuals=_residuals(ctx)
    )


def _residuals(ctx: Context) -> np.ndarray:
    """t − m from the rows' exact means (spec §3), once per context."""
    return ctx.memo("residuals", lambda: ctx.rows.residuals(ctx.targets))


def _squared_errors(ctx: Context) -> np.ndarray:
    with np.errstate(over="ignore"):  # +inf only beyond the largest double
        return _residuals(ctx) ** 2


TASK = register_task(Regression())

register(
    name="nlpd",
    title="Negative log predictive density",
    task=TASK.name,
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
    reference=f"{PAPER}, eq. (18)",
    description="−(1/n) Σ log p(t | x); n/a for sample predictions.",
)
register(
    name="nmse",
    title="Normalised mean squared error",
    task=TASK.name,
    probabilistic=False,
    compute=_nmse,
    terms=_squared_errors,
    terms_key="se",
    legacy_number=2,
    reference=f"{PAPER}, eq. (17)",
    description="Σ (t − mean)² / (n · var(t)); 1 for predicting the mean.",
)
register(
    name="crps",
    title="Continuous ranked probability score",
    task=TASK.name,
    probabilistic=True,
    compute=lambda c: regression.crps(c.rows.stats.crps),
    terms=lambda c: np.array(c.rows.stats.crps, dtype=np.float64),
    reference="Kohonen & Suomela, Lessons learned in the challenge (2006), §4.2",
    description="(1/n) Σ ∫ (F(u) − 1{u ≥ t})² du, exact for every row type.",
)
selective.register_losses(
    TASK.name,
    error="the squared errors left when the examples of largest predictive variance are"
    " handed to an oracle",
    classification=False,
)
register(
    name="wis",
    title="Weighted interval score",
    task=TASK.name,
    probabilistic=True,
    compute=lambda c: quantile_scores.mean(_wis_terms(c)),
    terms=_wis_terms,
    applies=lambda options: options.quantile_levels is not None,
    reference="Bracher et al., Evaluating epidemic forecasts in an interval format, PLoS"
    " Comput. Biol. 17 (2021); spec §8",
    description="(1/n) Σ (1/K) Σ_k 2(1{t < q_k} − α_k)(q_k − t) over the dataset's quantile"
    " levels α_k; only for a dataset with quantile levels.",
)
