"""One call from files to scores: read, validate, infer the task, compute every loss."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .decomposition import corp, isotonic, pit_uniformity_test, recalibration
from .distributions import gaussian_stats
from .errors import Problem, Problems, ScoringError
from .losses import Context, compute_scores, compute_terms
from .options import MAX_LINE_NUMBERS, ScoringOptions, Task
from .parse import (
    GAUSSIAN,
    RegressionRows,
    RowReader,
    check_regression,
    is_labels,
    read_classification,
    read_probabilities,
    read_regression,
)
from .parse import read_targets as _read_targets
from .plots import pit_summary, reliability
from .regression import variance


@dataclass
class Evaluation:
    """Scores of one prediction file: ``scores[name]`` is a float (maybe inf) or None (n/a)."""

    task: Task
    scores: dict[str, float | None]
    non_probabilistic: bool
    n: int
    context: Context = field(repr=False)

    def plot_data(self) -> dict:
        """What the site draws and explains, JSON-ready but for non-finite floats.

        Classification: ``reliability`` (binned reliability diagram), ``decomposition``
        (:func:`scoring.decomposition.corp`: brier and nlp, nlp in the options' log base,
        each ``{"score", "mcb", "dsc", "unc"}``; MCB is +inf where nlp is) and
        ``recalibration`` (:func:`scoring.decomposition.recalibration`: the PAV curve and
        a 20-bin histogram of p). A non-probabilistic file (every p 0 or 1) is decomposed
        too: the decomposition is defined, though its brier and nlp are n/a.
        Regression: ``pit`` (histogram and coverage of central intervals) and
        ``calibration_test`` (:func:`scoring.decomposition.pit_uniformity_test`).
        """
        ctx = self.context
        if self.task == Task.CLASSIFICATION:
            fit = isotonic(ctx.p, (ctx.targets == 1).astype(np.float64))
            return {
                "reliability": reliability(ctx.p, ctx.targets),
                "decomposition": corp(ctx.p, ctx.targets, log_base=ctx.options.log_base, fit=fit),
                "recalibration": recalibration(ctx.p, ctx.targets, fit=fit),
            }
        pit = ctx.rows.stats.pit
        return {"pit": pit_summary(pit), "calibration_test": pit_uniformity_test(pit)}

    def terms(self) -> dict[str, np.ndarray | None]:
        """Per-example terms from the statistics already held (no file is read again).

        Classification: ``nlp``, ``01l``, ``brier``; regression: ``nlpd``, ``se`` (the
        squared errors (t − m)² behind nmse: nmse = mean(se)/var(t)) and ``crps``. Each is a
        float64 array of n terms whose mean is the loss (nlp and nlpd in the options' log
        base, +inf where the probability or density is 0), or None where the loss is n/a:
        every probabilistic loss of a non-probabilistic file, nlpd of a file with sample
        rows. See :func:`scoring.losses.compute_terms`.
        """
        return compute_terms(self.context)

    def subset(self, mask) -> Evaluation:
        """The evaluation of the examples where ``mask`` is True alone, as if the file and
        the targets held only them: every loss, term and plot of that part (nmse over the
        part's own targets when it normalises by the evaluated split). Used for the public
        and private parts of a test split; ``mask`` is a boolean array of length n with at
        least one True."""
        mask = np.asarray(mask, dtype=bool)
        if mask.shape != (self.n,) or not mask.any():
            raise ValueError(f"expected a boolean mask of {self.n} values with a True")
        ctx = self.context
        part = Context(
            ctx.task,
            ctx.targets[mask],
            ctx.options,
            ctx.train_targets,
            p=None if ctx.p is None else ctx.p[mask],
            rows=None if ctx.rows is None else ctx.rows.subset(mask),
        )
        return _score(part)


def _score(ctx: Context) -> Evaluation:
    scores = compute_scores(ctx)
    return Evaluation(ctx.task, scores, ctx.is_point, int(ctx.targets.size), ctx)


def evaluate(
    predictions,
    targets,
    *,
    task: Task | str | None = None,
    options: ScoringOptions | None = None,
    predictions_path: str = "predictions",
    targets_path: str = "targets",
    train_targets=None,
) -> Evaluation:
    """Validate ``predictions`` against ``targets`` and compute every loss of the task.

    ``predictions`` and ``targets`` are bytes, paths or binary files; ``targets``
    may also be an array already read. The task is classification when every
    target is ±1 and every prediction line holds one number, unless given.
    Raises :class:`~scoring.errors.ScoringError` listing every problem; when the
    targets file has problems, the predictions are still checked on their own (with
    the task given, or guessed from their lines) and the problems of both are listed,
    the targets' first.
    """
    options = options or ScoringOptions()
    task = Task(task) if task is not None else None
    if isinstance(targets, np.ndarray):
        t = targets.astype(np.float64, copy=False)
    else:
        try:
            t = _read_targets(targets, path=targets_path, task=task)
        except ScoringError as error:
            raise _with_prediction_problems(
                error, predictions, path=predictions_path, task=task, options=options
            ) from None
    if train_targets is not None:
        train_targets = np.asarray(train_targets, dtype=np.float64)
    labels = is_labels(t)
    # A valid classification file (one probability per line) in one pass: the task too.
    p = read_probabilities(predictions, t.size) if labels and task != Task.REGRESSION else None
    if p is not None:
        task = Task.CLASSIFICATION
    reader = RowReader(predictions, predictions_path, max_numbers=MAX_LINE_NUMBERS)
    if task is None:
        task = _task_of_lines(reader) if labels else Task.REGRESSION
    if task == Task.CLASSIFICATION:
        if not labels:
            bad = int(np.flatnonzero(np.abs(t) != 1)[0])
            raise ValueError(
                f"{targets_path}: classification targets must be +1 or -1 "
                f"(target {bad + 1} is {t[bad]})"
            )
        if p is None:
            p = read_classification(
                predictions, path=predictions_path, n_expected=t.size, reader=reader
            )
        ctx = Context(task, t, options, train_targets, p=p)
    else:
        rows = read_regression(predictions, path=predictions_path, targets=t, options=options)
        ctx = Context(task, t, options, train_targets, rows=rows)
    return _score(ctx)


def _task_of_lines(reader: RowReader) -> Task:
    """Regression if a prediction line holds more than one number, else classification.

    The classification reader then reuses the tokenized blocks; the regression reader
    reads the file again (its problems are dropped here)."""
    tables = []
    for table in reader.tokenized():
        if table.max_count() > 1:
            reader.problems = Problems(reader.problems.path)
            return Task.REGRESSION
        tables.append(table)
    reader.tables = tables
    return Task.CLASSIFICATION


def _with_prediction_problems(
    target_error: ScoringError,
    predictions,
    *,
    path: str,
    task: Task | None,
    options: ScoringOptions,
) -> ScoringError:
    """The targets' error, followed by the problems of the predictions checked on their
    own: with no valid targets, no row count and no label is checked, and the task is
    the one given or else guessed from the prediction lines alone."""
    try:
        reader = RowReader(predictions, path, max_numbers=MAX_LINE_NUMBERS)
        if (task or _task_of_lines(reader)) == Task.CLASSIFICATION:
            read_classification(predictions, path=path, reader=reader)
        else:
            check_regression(predictions, path=path, options=options)
    except ScoringError as error:
        return ScoringError.combine(target_error, error)
    except OSError as error:
        problem = Problem(path, 0, f"cannot read the file: {error.strerror or error}")
        return ScoringError.combine(target_error, ScoringError([problem]))
    return target_error


def baseline(
    train_targets, targets, *, task: Task | str, options: ScoringOptions | None = None
) -> Evaluation:
    """The input-independent baseline of spec §3, scored like any submission.

    Classification predicts the training frequency of +1 for every example;
    regression a Gaussian with the training targets' mean and variance (ddof 0).
    """
    options = options or ScoringOptions()
    task = Task(task)
    train = np.asarray(train_targets, dtype=np.float64)
    t = np.asarray(targets, dtype=np.float64)
    if task == Task.CLASSIFICATION:
        p = np.full(t.size, float(np.mean(train == 1)))
        return _score(Context(task, t, options, train, p=p))
    mean = np.full(t.size, float(np.mean(train)))
    var = np.full(t.size, variance(train))
    rows = RegressionRows(
        np.full(t.size, GAUSSIAN, dtype=np.int8), var, gaussian_stats(mean, var, t)
    )
    return _score(Context(task, t, options, train, rows=rows))
