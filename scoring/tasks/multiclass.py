"""Multiclass classification (spec §7): each line the L class probabilities of one
example, or an ensemble's M·L (M members, one after the other); targets the class
indices 0 … L−1. The uncertainty-metrics seed's way of measuring classifiers.

Never inferred: a dataset of it says so, and gives L (``classes``) and whether it
accepts ensemble rows (``allow_ensembles``). Its losses (nlp, brier, 01l, ece, rmsce,
sce) share one pass over the n × L probabilities (:func:`scoring.multiclass.summarize`),
computed once per context; ace sorts each class's column. A file with ensemble rows
also reports, unranked, its total and data uncertainty and their difference (tu, du, mi).
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import numpy as np

from .. import certainty, multiclass, selective
from ..classification import ECE_BINS
from ..errors import fmt
from ..hints import CLASS_LABEL, class_summary
from ..losses import Context, register
from ..multiclass_ace import THREADED_SIZE
from ..multiclass_parse import check_multiclass, first_count, read_multiclass
from ..multiclass_rows import ClassRows
from ..options import MAX_CLASSES, MAX_MEMBERS, ScoringOptions, Task
from ..taskspec import TaskSpec, register_task
from . import text
from .multiclass_demo import DEMO

NIXON = "Nixon et al., Measuring Calibration in Deep Learning, CVPR Workshops 2019"


def summary(ctx: Context) -> multiclass.MulticlassSummary:
    """The sums behind nlp, brier, 01l, ece, rmsce and sce, from one pass: the one summed
    while the file was read, when it was read with these targets."""
    rows = ctx.multiclass

    def compute():
        done = rows.summary
        if done is not None and np.array_equal(done.labels, ctx.targets):
            return done
        return multiclass.summarize(rows.probs, ctx.targets, resid=rows.resid, exact=rows.exact)

    return ctx.memo("summary", compute)


def _exact_side(exact: Fraction, p: float) -> float:
    """The side of ``p`` its exact value lies on, scaled as ClassRows.resid is: (exact − p)/p
    · 2^180, or exact · 2^1074 where p is 0 (nonzero for any exact value a file can give)."""
    if p == 0:
        return float(exact * 2**1074)
    return float((exact - Fraction(p)) / Fraction(p) * 2**180)


def _bad_labels(values: np.ndarray, classes: int | None) -> np.ndarray:
    """Which values are no class label 0 … L−1 (L unknown: no whole number ≥ 0 below
    MAX_CLASSES)."""
    top = classes if classes else MAX_CLASSES
    return ~((values >= 0) & (values < top) & (values == np.floor(values)))


def _label_message(value: float, classes: int | None) -> str:
    last = (classes or MAX_CLASSES) - 1
    if value == math.floor(value):
        return f"class label {fmt(value)} is outside 0..{last}"
    return f"class label {fmt(value)} is not a whole number (expected 0..{last})"


class MulticlassClassification(TaskSpec):
    name = Task.MULTICLASS
    label = "Multiclass classification"
    settings = ("classes", "allow_ensembles")
    inference = None  # never inferred (spec §7)
    readme_targets = (
        "a class label: the index of the example's class, a whole number from 0 to L-1 "
        "(3 or 3.0000000e+00)."
    )
    demo = DEMO
    certain_what = "some class given probability 0"
    certain_risk = "a single such example whose true class is one ruled out makes nlp infinite"

    # --- files ------------------------------------------------------------------------

    def target_error(self, targets, options):
        bad = _bad_labels(targets, options.classes)
        if not bad.any():
            return None
        i = int(np.flatnonzero(bad)[0])
        return f"{_label_message(targets[i], options.classes)} (target {i + 1})"

    def check_target_lines(self, lines, ok, values, problems, options):
        wrong = ok & _bad_labels(values, options.classes)
        found = values[wrong]
        problems.add_lines(
            lines[wrong],
            lambda i: _label_message(found[i], options.classes),
            class_summary(CLASS_LABEL, options.classes),
        )

    def resolve_options(self, source, options, *, path):
        """L from the first prediction line when it is not given (spec §7, ``--classes``);
        unchanged when that line cannot say (its reader then reports why)."""
        if options.classes is not None:
            return options
        try:
            count = first_count(source, path)
        except (OSError, TypeError):
            return options  # (the reader reports an unreadable file)
        if count is None or not 2 <= count <= MAX_CLASSES:
            return options
        return dataclasses.replace(options, classes=count)

    def read(self, source, *, path, targets, options, reader):
        return read_multiclass(
            source,
            path=path,
            n_expected=targets.size,
            options=options,
            reader=reader,
            labels=targets.astype(np.int64),  # (checked: whole numbers in 0 … L−1)
        )

    def check(self, source, *, path, options, n_expected, reader):
        check_multiclass(
            source,
            path=path,
            options=options or ScoringOptions(),
            n_expected=n_expected,
            reader=reader,
        )

    # --- scoring ----------------------------------------------------------------------

    def context(self, targets, options, train_targets, prediction):
        if options.classes is None:
            options = dataclasses.replace(options, classes=prediction.classes)
        return Context(self.name, targets, options, train_targets, multiclass=prediction)

    def baseline(self, train_targets, targets, options):
        """The training targets' class frequencies for every example (a class absent from
        them gets 0, so the baseline's nlp may be +inf)."""
        classes = options.classes
        if classes is None:  # (a dataset always gives L; the largest label says at least)
            classes = max(2, int(max(train_targets.max(), targets.max())) + 1)
            options = dataclasses.replace(options, classes=classes)
        freq = multiclass.class_frequencies(train_targets, classes)
        rows = ClassRows.single(np.tile(freq, (targets.size, 1)))
        return Context(self.name, targets, options, train_targets, multiclass=rows)

    def ahead(self, ctx):
        """A large file's retention (its gathers and its sort of n keys, for rauc and aurc)
        is computed on a second thread while the calibration losses run (ace's kernels)."""
        rows = ctx.multiclass
        if rows.n * rows.classes < THREADED_SIZE:
            return []
        return [lambda: selective.retention_of(ctx)]

    def retention_inputs(self, ctx):
        """Errors 1 − a_i, keys the confidence c_i = p_i,ŷ_i, surest first (spec §8 and §7):
        the double and the side its exact value lies on (ClassRows.resid), so that equal
        doubles are ordered by their exact values as ŷ and the bins are."""
        found = summary(ctx)
        rows = ctx.multiclass
        predicted = found.predicted
        if found.confidence is not None:  # (written as the file was read)
            confidence, side = found.confidence, found.confidence_sides.astype(np.float64)
        else:
            # Row i's predicted class in the flat n × L arrays (one gather each, no 2-D
            # index).
            flat = np.arange(0, found.n * rows.classes, rows.classes) + predicted
            side = np.zeros(found.n) if rows.resid is None else rows.resid.ravel()[flat]
            side = side.astype(np.float64)
            confidence = rows.probs.ravel()[flat]
        # The double-double normalisation leaves sides of about 2^-106 relative where the
        # exact value is the double itself (three uniform members and a one-hot one: 0.5
        # exactly): below its accuracy a side is no evidence, and equal values must tie.
        side[np.abs(side) < selective.SIDE_NOISE] = 0.0
        for i, values in (rows.exact or {}).items():
            # Rows holding values below 2^-900 are known exactly (no double-double noise):
            # their side is the exact one, however small (1e-300 apart is not a tie).
            side[i] = _exact_side(values[predicted[i]], float(confidence[i]))
        keys = (confidence, side)
        return (predicted != found.labels).astype(np.float64), keys, False

    def is_point(self, ctx):
        """Every row one-hot, decided on the whole file: a part of it (a subset) keeps the
        file's decision (spec §7)."""
        decided = ctx.multiclass.point
        return summary(ctx).point if decided is None else decided

    def certain(self, ctx):
        """Rows ruling out a class after normalisation and averaging
        (:func:`scoring.certainty.multiclass_certain`)."""
        return certainty.multiclass_certain(ctx.multiclass)

    def subset(self, ctx, mask):
        rows = dataclasses.replace(ctx.multiclass.subset(mask), point=self.is_point(ctx))
        return Context(ctx.task, ctx.targets[mask], ctx.options, ctx.train_targets, multiclass=rows)

    def reported(self, ctx):
        """tu, du and mi (spec §7) in the options' log base, over the examples with
        ensemble rows; none without such rows."""
        rows = ctx.multiclass
        if not rows.has_ensembles:
            return {}
        tu, du, mi, _ = multiclass.ensemble_uncertainty(
            rows.probs, rows.members, rows.member_entropy, base=ctx.options.log_base
        )
        return {"tu": tu, "du": du, "mi": mi}

    def plot_data(self, ctx):
        """``top_label`` (the ECE reliability diagram), ``classwise`` (the SCE bins, L ≤ 20),
        ``confusion`` and, with ensemble rows, ``ensemble`` (tu, du, mi):
        :func:`scoring.multiclass.plot_data`; ``retention`` (:func:`scoring.selective.plot_of`,
        None for a non-probabilistic file)."""
        rows = ctx.multiclass
        out = multiclass.plot_data(
            rows.probs,
            ctx.targets,
            summary=summary(ctx),
            members=rows.members,
            member_entropy=rows.member_entropy,
            base=ctx.options.log_base,
        )
        out["retention"] = selective.plot_of(ctx)
        return out

    def probe_values(self, ctx):
        """The L probabilities (normalised, members averaged)."""
        return ctx.multiclass.probs

    # --- texts ------------------------------------------------------------------------

    def format_help(self, options: ScoringOptions) -> list[str]:
        classes = options.classes
        count = str(classes) if classes else "L"
        last = str(classes - 1) if classes else "L-1"
        parts = [
            text.heading("Predictions (multiclass classification)"),
            text.wrap(
                f"One line per example, holding {count} numbers: your probabilities of"
                f" classes 0 to {last}, in that order, each between 0 and 1, separated by"
                " spaces or tabs. Each line must sum to 1 (within 0.01; it is divided by its"
                " sum). For example, in a dataset of 3 classes:"
            ),
            text.example(["0.7 0.2 0.1", "0.05 0.9 0.05", "2.5000000e-01 2.5000000e-01 5e-01"]),
            text.wrap(
                "From a model's logits z, with numpy: write the softmax, not the logits"
                " or the predicted class:"
            ),
            text.example(
                [
                    "import numpy as np",
                    "def softmax(z):",
                    "    e = np.exp(z - z.max(axis=1, keepdims=True))",
                    "    return e / e.sum(axis=1, keepdims=True)",
                    'np.savetxt(path, softmax(logits), fmt="%.6g")',
                ]
            ),
            text.wrap(
                "A probability of exactly 0 for the true class costs an infinite log loss."
                " A file whose every line is one-hot (a 1 and 0s) is a non-probabilistic"
                " entry, scored only by the classification error (01l)."
            ),
        ]
        if options.allow_ensembles:
            parts += [
                text.wrap(
                    f"An ensemble may give each of its M members' {count} probabilities on one"
                    f" line, member after member (M x {count} numbers, 2 <= M <= {MAX_MEMBERS});"
                    " each member sums to 1 and the prediction is their mean. Such lines may"
                    " be mixed with single ones, and the ensemble's total and data uncertainty"
                    " and their difference (tu, du, mi) are reported beside the scores. Two"
                    " members of 3 classes, then a single line:"
                ),
                text.example(["0.7 0.2 0.1 0.5 0.3 0.2", "0.05 0.9 0.05"]),
                text.wrap("With numpy, from an array of shape (examples, members, classes):"),
                text.example(['np.savetxt(path, probs.reshape(len(probs), -1), fmt="%.6g")']),
            ]
        else:
            parts.append(
                text.wrap(
                    "This dataset does not accept ensemble rows: write the members' mean,"
                    f" {count} probabilities per line."
                )
            )
        return parts


TASK = register_task(MulticlassClassification())

register(
    name="nlp",
    title="Negative log probability",
    task=TASK.name,
    probabilistic=True,
    compute=lambda c: summary(c).nlp(c.options.log_base),
    terms=lambda c: summary(c).nll_terms / math.log(c.options.log_base),
    log_scale=True,
    default_ranking=True,
    reference="Good, J. R. Stat. Soc. B 14 (1952); spec §7",
    description="−(1/n) Σ log p(true class); infinite if a true class got probability 0.",
)
register(
    name="brier",
    title="Brier score",
    task=TASK.name,
    probabilistic=True,
    compute=lambda c: summary(c).brier_score(),
    terms=lambda c: np.array(summary(c).brier_rows, dtype=np.float64),
    reference="Brier, Monthly Weather Review 78 (1950), over all classes",
    description="(1/n) Σ_i Σ_k (p_ik − 1{k = y_i})², between 0 and 2.",
)
register(
    name="01l",
    title="0/1 loss",
    task=TASK.name,
    probabilistic=False,
    compute=lambda c: summary(c).zero_one(),
    terms=lambda c: summary(c).zero_one_terms(),
    reference="spec §7: the error rate of the most probable class",
    description="Fraction misclassified by the most probable class (the first one on ties).",
)
register(
    name="ece",
    title="Expected calibration error",
    task=TASK.name,
    probabilistic=True,
    compute=lambda c: summary(c).ece(),
    reference=f"Guo et al., ICML 2017; {ECE_BINS} equal-width bins of the top-label confidence",
    description=f"Σ |B|/n · |accuracy − confidence| over {ECE_BINS} bins of the top-label "
    "confidence.",
)
register(
    name="rmsce",
    title="RMS calibration error",
    task=TASK.name,
    probabilistic=True,
    compute=lambda c: summary(c).rmsce(),
    reference="Kumar, Liang & Ma, NeurIPS 2019; the bins of ece",
    description="√(Σ |B|/n · (accuracy − confidence)²) over the ece bins.",
)
register(
    name="sce",
    title="Static calibration error",
    task=TASK.name,
    probabilistic=True,
    compute=lambda c: summary(c).sce(),
    reference=f"{NIXON}; {ECE_BINS} equal-width bins per class",
    description=f"(1/L) Σ_k Σ_m |B_km|/n · |frequency − mean p_k| over {ECE_BINS} bins of "
    "each class's probability.",
)
register(
    name="ace",
    title="Adaptive calibration error",
    task=TASK.name,
    probabilistic=True,
    compute=lambda c: multiclass.ace(
        c.multiclass.probs,
        c.targets,
        summary=summary(c),
        resid=c.multiclass.resid,
        exact=c.multiclass.exact,
    ),
    reference=f"{NIXON}; {ECE_BINS} equal-mass ranges per class",
    description=f"As sce, over {ECE_BINS} ranges of equal count of each class's sorted "
    "probabilities.",
)
selective.register_losses(
    TASK.name,
    error="the errors left when the least confident examples are handed to an oracle",
    classification=True,
)
