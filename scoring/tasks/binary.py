"""Binary classification (spec §1, §3): one probability p(y = +1 | x) per line, targets
+1 or -1; the 2004 challenge's classification task.

The task is inferred when every target is ±1 and every prediction line holds one number.
Its losses (nlp, 01l, lift, brier, ece) share one pass over the examples
(:func:`scoring.classification.summarize`), computed once per context.
"""

from __future__ import annotations

import numpy as np

from .. import certainty, classification, corp_bands, hints, selective
from ..classification import ECE_BINS
from ..decomposition import corp, isotonic, recalibration
from ..errors import fmt
from ..losses import PAPER, Context, register
from ..options import ScoringOptions, Task
from ..parse import is_labels, read_classification, read_probabilities
from ..plots import reliability
from ..taskspec import Inference, TaskSpec, register_task
from . import text
from .binary_demo import DEMO


def summary(ctx: Context) -> classification.Summary:
    """The sums behind nlp, 01l, brier and ece (and lift's sort keys), from one pass."""
    return ctx.memo("summary", lambda: classification.summarize(ctx.p, ctx.targets))


class BinaryClassification(TaskSpec):
    name = Task.CLASSIFICATION
    label = "Classification"
    inference = Inference(targets=is_labels, max_numbers=1)
    readme_targets = "+1 or -1."
    demo = DEMO
    certain_what = "probability 0 or 1"
    certain_risk = "a single such example whose outcome then happens makes nlp infinite"

    def target_error(self, targets, options):
        if is_labels(targets):
            return None
        bad = int(np.flatnonzero(np.abs(targets) != 1)[0])
        return f"classification targets must be +1 or -1 (target {bad + 1} is {targets[bad]})"

    def check_target_lines(self, lines, ok, values, problems, options):
        wrong = ok & (values != 1) & (values != -1)
        found = values[wrong]
        problems.add_lines(
            lines[wrong],
            lambda i: f"expected a class label of +1 or -1, found {fmt(found[i])}",
            hints.LABEL,
        )

    def read_fast(self, source, n, options):
        return read_probabilities(source, n)

    def read(self, source, *, path, targets, options, reader):
        return read_classification(source, path=path, n_expected=targets.size, reader=reader)

    def check(self, source, *, path, options, n_expected, reader):
        read_classification(source, path=path, n_expected=n_expected, reader=reader)

    def context(self, targets, options, train_targets, prediction):
        return Context(self.name, targets, options, train_targets, p=prediction)

    def baseline(self, train_targets, targets, options):
        """The training frequency of +1 for every example."""
        p = np.full(targets.size, float(np.mean(train_targets == 1)))
        return Context(self.name, targets, options, train_targets, p=p)

    def retention_inputs(self, ctx):
        """Errors 1 − a_i, keys the exact confidence max(p, 1 − p), surest first (spec §8,
        a_i and c_i as in ``ece``)."""
        return (
            selective.binary_errors(ctx.p, ctx.targets),
            selective.binary_confidence(ctx.p),
            False,
        )

    def is_point(self, ctx):
        return summary(ctx).point

    def certain(self, ctx):
        """Examples of p = 0 or p = 1 (:func:`scoring.certainty.binary_certain`)."""
        return certainty.binary_certain(ctx.p)

    def subset(self, ctx, mask):
        return Context(ctx.task, ctx.targets[mask], ctx.options, ctx.train_targets, p=ctx.p[mask])

    def plot_data(self, ctx):
        """``reliability`` (binned reliability diagram), ``decomposition``
        (:func:`scoring.decomposition.corp`: brier and nlp, nlp in the options' log base,
        each ``{"score", "mcb", "dsc", "unc"}``; MCB is +inf where nlp is),
        ``recalibration`` (:func:`scoring.decomposition.recalibration`: the PAV curve and
        a 20-bin histogram of p), ``bands`` (:func:`scoring.corp_bands.consistency_bands`:
        the 90 % consistency band of the PAV curve, with ``inside``:
        :func:`scoring.corp_bands.inside`), ``decomposition_intervals``
        (:func:`scoring.corp_bands.decomposition_intervals`: 95 % intervals of each part
        of ``decomposition``) and ``retention`` (:func:`scoring.selective.plot_of`; None
        for a non-probabilistic file). A non-probabilistic file (every p 0 or 1) is
        decomposed too: the decomposition is defined, though its brier and nlp are n/a.
        The resamples' seeds depend on n alone (:func:`scoring.corp_bands.seed_for`), so
        a participant's own run gives the site's values."""
        fit = isotonic(ctx.p, (ctx.targets == 1).astype(np.float64))
        n = ctx.p.size
        bands = corp_bands.consistency_bands(ctx.p, seed=corp_bands.seed_for(n, "bands"))
        bands["inside"] = corp_bands.inside(bands, ctx.p, ctx.targets)
        return {
            "reliability": reliability(ctx.p, ctx.targets),
            "decomposition": corp(ctx.p, ctx.targets, log_base=ctx.options.log_base, fit=fit),
            "decomposition_intervals": corp_bands.decomposition_intervals(
                ctx.p,
                ctx.targets,
                seed=corp_bands.seed_for(n, "intervals"),
                log_base=ctx.options.log_base,
            ),
            "recalibration": recalibration(ctx.p, ctx.targets, fit=fit),
            "bands": bands,
            "retention": selective.plot_of(ctx),
        }

    def probe_values(self, ctx):
        """p(y = +1)."""
        return np.asarray(ctx.p, dtype=np.float64)[:, None]

    def format_help(self, options: ScoringOptions) -> list[str]:
        return [
            text.heading("Predictions (classification)"),
            text.wrap(
                "One number per line: your probability that the example belongs to class +1,"
                " between 0 and 1. For example:"
            ),
            text.example(["0.91", "0.0625", "5.0000000e-01", "1"]),
            text.wrap(
                "A probability of exactly 0 or 1 that turns out wrong costs an infinite log"
                " loss. A file whose every line is 0 or 1 is a non-probabilistic entry, scored"
                " only by the classification error."
            ),
        ]


TASK = register_task(BinaryClassification())

register(
    name="nlp",
    title="Negative log probability",
    task=TASK.name,
    probabilistic=True,
    compute=lambda c: summary(c).nlp(c.options.log_base),
    terms=lambda c: classification.nlp_terms(c.p, c.targets, base=c.options.log_base),
    legacy_number=3,
    log_scale=True,
    default_ranking=True,
    reference=f"{PAPER}, eq. (12)",
    description="−(1/n) Σ log p(true class); infinite if a true class got probability 0.",
)
register(
    name="01l",
    title="0/1 loss",
    task=TASK.name,
    probabilistic=False,
    compute=lambda c: summary(c).zero_one(),
    terms=lambda c: classification.zero_one_terms(c.p, c.targets),
    legacy_number=4,
    reference=f"{PAPER}, eq. (11)",
    description="Fraction misclassified, thresholding p(y = +1) at 0.5.",
)
register(
    name="lift",
    title="LIFT loss",
    task=TASK.name,
    probabilistic=True,
    compute=lambda c: classification.lift_of(summary(c), c.p, c.targets),
    reference=f"{PAPER}, eqs. (13)-(16)",
    description="Area lost to the ideal lift curve, relative to a random predictor (1 = random).",
)
register(
    name="brier",
    title="Brier score",
    task=TASK.name,
    probabilistic=True,
    compute=lambda c: summary(c).brier_score(),
    terms=lambda c: classification.brier_terms(c.p, c.targets),
    reference="Brier, Monthly Weather Review 78 (1950)",
    description="(1/n) Σ (p − o)², o = 1 for class +1.",
)
register(
    name="ece",
    title="Expected calibration error",
    task=TASK.name,
    probabilistic=True,
    compute=lambda c: summary(c).ece(),
    reference=f"Naeini et al., AAAI 2015; {ECE_BINS} equal-width confidence bins",
    description=f"Σ |B|/n · |accuracy − confidence| over {ECE_BINS} confidence bins.",
)
selective.register_losses(
    TASK.name,
    error="the errors left when the least confident examples are handed to an oracle",
    classification=True,
)
