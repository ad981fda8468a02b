"""One call from files to scores: read, validate, infer the task, compute every loss.

What differs between tasks is asked of the task (scoring.tasks): this module reads,
infers and scores the same way for every task.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import _accel
from .errors import Problem, Problems, ScoringError
from .losses import Context, compute_scores, compute_terms
from .options import MAX_LINE_NUMBERS, ScoringOptions
from .parse import read_targets as _read_targets
from .rows import RowReader
from .slices import first_appearance
from .taskspec import TaskSpec, get_task, inferable


@dataclass
class Evaluation:
    """Scores of one prediction file: ``scores[name]`` is a float (maybe inf) or None (n/a)."""

    task: str
    scores: dict[str, float | None]
    non_probabilistic: bool
    n: int
    context: Context = field(repr=False)
    # Examples of the whole evaluated file whose prediction claims certainty (probability
    # 0 or 1, a class of probability 0, variance 0: TaskSpec.certain, scoring.certainty);
    # a subset or a slice keeps its file's count, as a count per part would tell which
    # examples lie in it. Also counted for a non-probabilistic file (then every example).
    certain: int = field(kw_only=True)
    # Values reported beside the losses, not ranked (TaskSpec.reported): the multiclass
    # ensembles' tu, du and mi in the options' log base, when the file has ensemble rows.
    reported: dict[str, float] = field(default_factory=dict)

    def plot_data(self) -> dict:
        """What the site draws and explains, JSON-ready but for non-finite floats: the
        task's (TaskSpec.plot_data; classification: ``reliability``, ``decomposition``,
        ``recalibration``; regression: ``pit``, ``calibration_test``; multiclass:
        ``top_label``, ``classwise``, ``confusion`` and, with ensemble rows, ``ensemble``)."""
        return self.context.spec.plot_data(self.context)

    def terms(self) -> dict[str, np.ndarray | None]:
        """Per-example terms from the statistics already held (no file is read again).

        Classification: ``nlp``, ``01l``, ``brier``; multiclass: ``nlp``, ``brier``,
        ``01l``; regression: ``nlpd``, ``se`` (the
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
        part's own targets when it normalises by the evaluated split), except that the part
        is non-probabilistic exactly when the whole file is (spec §3 and §7 decide it on the
        file, never per part). Used for the public and private parts of a test split and for
        slices; ``mask`` is a boolean array of length n with at least one True."""
        mask = np.asarray(mask, dtype=bool)
        if mask.shape != (self.n,) or not mask.any():
            raise ValueError(f"expected a boolean mask of {self.n} values with a True")
        part = self.context.spec.subset(self.context, mask)
        part.point = self.non_probabilistic  # (decided on the whole file: spec §3, §7)
        return _score(part, certain=self.certain)

    def by_slice(self, names) -> dict[str, Evaluation]:
        """The evaluation of each slice (spec §8), in order of first appearance: ``names``
        holds the slice of every example (``scoring.read_slices``), and each slice is
        scored as if the file and the targets held its examples alone (its own var(t) in
        nmse, as :meth:`subset`). A non-probabilistic file stays so on every slice."""
        names = np.asarray(names)
        if names.shape != (self.n,):
            raise ValueError(f"expected {self.n} slice names, found {names.size}")
        return {name: self.subset(names == name) for name in first_appearance(names)}


def _score(ctx: Context, *, certain: int | None = None) -> Evaluation:
    """Every loss of ``ctx``; ``certain``: the whole file's count, for a part of it."""
    scores = compute_scores(ctx)
    n = int(ctx.targets.size)
    if certain is None:
        certain = ctx.spec.certain(ctx)
    reported = ctx.spec.reported(ctx)
    return Evaluation(ctx.task, scores, ctx.is_point, n, ctx, reported, certain=certain)


def evaluate(
    predictions,
    targets,
    *,
    task: str | None = None,
    options: ScoringOptions | None = None,
    predictions_path: str = "predictions",
    targets_path: str = "targets",
    train_targets=None,
) -> Evaluation:
    """Validate ``predictions`` against ``targets`` and compute every loss of the task.

    ``predictions`` and ``targets`` are bytes, paths or binary files; ``targets``
    may also be an array already read. What a given task takes from the prediction
    file itself (TaskSpec.resolve_options: the multiclass L from its first line when
    ``options.classes`` is None) is taken before the targets are checked. The task is
    inferred unless given: the first
    inferable task whose targets and prediction lines fit (classification when every
    target is ±1 and every prediction line holds one number), else the fallback
    (regression). Raises :class:`~scoring.errors.ScoringError` listing every problem;
    when the targets file has problems, the predictions are still checked on their own
    (with the task given, or guessed from their lines) and the problems of both are
    listed, the targets' first.
    """
    with _accel.small_pages():
        return _evaluate(
            predictions, targets, task=task, options=options,
            predictions_path=predictions_path, targets_path=targets_path,
            train_targets=train_targets,
        )  # fmt: skip


def _evaluate(
    predictions, targets, *, task, options, predictions_path, targets_path, train_targets
) -> Evaluation:
    options = options or ScoringOptions()
    spec = get_task(task) if task is not None else None
    # What the targets' checks need may come from the predictions (the multiclass L from
    # the first line); the task's reader finds it again, and can then say where it came from.
    target_options = options
    if spec is not None:
        target_options = spec.resolve_options(predictions, options, path=predictions_path)
    checked = False  # (the targets meet the task's rules: its reader said so)
    if isinstance(targets, np.ndarray):
        t = targets.astype(np.float64, copy=False)
    else:
        try:
            t = _read_targets(
                targets,
                path=targets_path,
                task=None if spec is None else spec.name,
                options=target_options,
            )
            checked = spec is not None
        except ScoringError as error:
            raise _with_prediction_problems(
                error, predictions, path=predictions_path, spec=spec, options=options
            ) from None
    if train_targets is not None:
        train_targets = np.asarray(train_targets, dtype=np.float64)
    reader = RowReader(predictions, predictions_path, max_numbers=MAX_LINE_NUMBERS)
    if spec is None:
        spec, prediction = _infer(predictions, t, reader, options)
    else:
        if not checked and (message := spec.target_error(t, target_options)) is not None:
            raise ValueError(f"{targets_path}: {message}")
        prediction = spec.read_fast(predictions, t.size, options)
    if prediction is None:
        prediction = spec.read(
            predictions, path=predictions_path, targets=t, options=options, reader=reader
        )
    return _score(spec.context(t, options, train_targets, prediction))


def _infer(predictions, t: np.ndarray, reader: RowReader, options: ScoringOptions):
    """The task of a file given without one, and its predictions if reading it to decide
    read them: each inferable task in turn whose targets fit is tried with its one-pass
    reader, then its line width (the blocks read stay with ``reader`` for the task's
    careful reader); the fallback when none fits."""
    for spec in inferable():
        inference = spec.inference
        if inference.fallback:
            return spec, None
        if inference.targets is not None and not inference.targets(t):
            continue
        prediction = spec.read_fast(predictions, t.size, options)
        if prediction is not None:
            return spec, prediction
        if _lines_fit(reader, inference.max_numbers):
            return spec, None
    raise ValueError("no task fits these files; give one")


def _infer_from_lines(reader: RowReader) -> TaskSpec:
    """The task of prediction lines with no valid targets: the first inferable task
    whose line width fits, else the fallback."""
    for spec in inferable():
        if spec.inference.fallback or _lines_fit(reader, spec.inference.max_numbers):
            return spec
    raise ValueError("no task fits these predictions; give one")


def _lines_fit(reader: RowReader, max_numbers: int | None) -> bool:
    """Whether no prediction line holds more than ``max_numbers`` numbers. If so, the
    task's reader reuses the tokenized blocks; if not, the next task's reader reads the
    file again (the problems found here are dropped)."""
    tables = []
    for table in reader.tokenized():
        if max_numbers is not None and table.max_count() > max_numbers:
            reader.problems = Problems(reader.problems.path)
            return False
        tables.append(table)
    reader.tables = tables
    return True


def _with_prediction_problems(
    target_error: ScoringError,
    predictions,
    *,
    path: str,
    spec: TaskSpec | None,
    options: ScoringOptions,
) -> ScoringError:
    """The targets' error, followed by the problems of the predictions checked on their
    own: with no valid targets, no row count and no label is checked, and the task is
    the one given or else guessed from the prediction lines alone."""
    try:
        reader = RowReader(predictions, path, max_numbers=MAX_LINE_NUMBERS)
        spec = spec or _infer_from_lines(reader)
        spec.check(predictions, path=path, options=options, n_expected=None, reader=reader)
    except ScoringError as error:
        return ScoringError.combine(target_error, error)
    except OSError as error:
        problem = Problem(path, 0, f"cannot read the file: {error.strerror or error}")
        return ScoringError.combine(target_error, ScoringError([problem]))
    return target_error


def baseline(
    train_targets, targets, *, task: str, options: ScoringOptions | None = None
) -> Evaluation:
    """The input-independent baseline of spec §3, scored like any submission: the task's
    (classification predicts the training frequency of +1 for every example; regression
    a Gaussian with the training targets' mean and variance, ddof 0).
    """
    options = options or ScoringOptions()
    train = np.asarray(train_targets, dtype=np.float64)
    t = np.asarray(targets, dtype=np.float64)
    return _score(get_task(task).baseline(train, t, options))
