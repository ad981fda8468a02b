"""From a stored submission (or a dataset's baseline) to an Outcome, writing nothing.

services.score_submission claims the submission, calls evaluate() here, and writes
the Outcome in one transaction.
"""

import math
import tempfile
from dataclasses import dataclass, field
from functools import partial

import numpy as np
from django.core.files.storage import storages

import scoring
from datasets.models import Dataset, Kind, Split

from .archive import ArchiveError, Limits, inspect, open_zip, read_member
from .models import Status, Submission

SPLIT_ORDER = [Split.TRAIN, Split.VAL, Split.TEST]


@dataclass(frozen=True)
class SplitOutcome:
    split: Split
    filename: str
    rows: int
    non_probabilistic: bool
    scores: dict[str, float | None]
    plot_data: dict


@dataclass(frozen=True)
class Outcome:
    status: Status
    splits: list[SplitOutcome] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    failure: str = ""

    @classmethod
    def failed(cls, failure: str) -> "Outcome":
        return cls(Status.FAILED, failure=failure)


def scoring_options(dataset: Dataset) -> scoring.ScoringOptions:
    return scoring.ScoringOptions(
        log_base=dataset.log_base,
        allow_samples=dataset.allow_samples,
        min_quantile_gap=dataset.min_quantile_gap,
        nmse_normaliser=dataset.nmse_normaliser,
    )


def read_dataset_targets(dataset: Dataset) -> dict[Split, np.ndarray]:
    """The dataset's stored target files, read (and checked) by the scoring package."""
    targets = {}
    for datafile in dataset.files.filter(kind=Kind.TARGETS):
        with storages[datafile.storage_alias].open(datafile.path, "rb") as handle:
            data = handle.read()
        targets[Split(datafile.split)] = scoring.read_targets(
            data, path=datafile.filename, task=dataset.task
        )
    return targets


def _finite_json(value):
    """Plot data with every non-finite number replaced by None (JSON has no NaN)."""
    if isinstance(value, dict):
        return {key: _finite_json(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite_json(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _split_outcome(split: Split, filename: str, evaluation: scoring.Evaluation) -> SplitOutcome:
    for loss, value in evaluation.scores.items():
        if value is not None and math.isnan(value):
            raise ValueError(f"loss {loss} of the {split} split came out as NaN")
    return SplitOutcome(
        split,
        filename,
        evaluation.n,
        evaluation.non_probabilistic,
        dict(evaluation.scores),
        _finite_json(evaluation.plot_data()),
    )


def evaluate(submission: Submission) -> Outcome:
    """Score every prediction file (or the baseline); raises only on faults of ours."""
    if submission.is_baseline:
        return evaluate_baseline(submission.dataset)
    return evaluate_upload(submission)


def evaluate_baseline(dataset: Dataset) -> Outcome:
    targets = read_dataset_targets(dataset)
    if Split.TRAIN not in targets:
        return Outcome.failed(
            f"{dataset.name}: the baseline needs the training targets, which are not stored yet"
        )
    options = scoring_options(dataset)
    splits = [
        _split_outcome(
            split,
            "",
            scoring.baseline(
                targets[Split.TRAIN], targets[split], task=dataset.task, options=options
            ),
        )
        for split in SPLIT_ORDER
        if split in targets
    ]
    return Outcome(Status.SCORED, splits)


def _spool(submission: Submission, limits: Limits):
    """The stored zip in a seekable temporary file (in memory while small), size-bounded."""
    spooled = tempfile.SpooledTemporaryFile(max_size=8 * 1024 * 1024)  # noqa: SIM115 - returned
    with submission.file.open("rb") as stored:
        for chunk in iter(partial(stored.read, 1 << 20), b""):
            spooled.write(chunk)
            if spooled.tell() > limits.upload_bytes:
                break
    size = spooled.tell()
    spooled.seek(0)
    return spooled, size


def evaluate_upload(submission: Submission) -> Outcome:
    dataset = submission.dataset
    limits = Limits.from_settings()
    spooled, size = _spool(submission, limits)
    with spooled:
        try:
            archive = open_zip(spooled, size=size, limits=limits)
        except ArchiveError as error:
            return Outcome(Status.INVALID, errors=error.problems)
        with archive:
            return _evaluate_archive(archive, dataset, limits)


def _evaluate_archive(archive, dataset: Dataset, limits: Limits) -> Outcome:
    try:
        contents = inspect(archive, dataset_name=dataset.name, limits=limits)
    except ArchiveError as error:
        return Outcome(Status.INVALID, errors=error.problems)
    targets = read_dataset_targets(dataset)
    options = scoring_options(dataset)
    errors: list[str] = []
    missing: list[str] = []
    splits: list[SplitOutcome] = []
    for split, member in contents.members.items():
        try:
            data = read_member(archive, member)
        except ArchiveError as error:
            errors.extend(error.problems)
            continue
        if split not in targets:
            missing.append(split.label.lower())
            continue
        try:
            evaluation = scoring.evaluate(
                data,
                targets[split],
                task=dataset.task,
                options=options,
                predictions_path=member.name,
                train_targets=targets.get(Split.TRAIN),
            )
        except scoring.ScoringError as error:
            errors.extend(error.lines)
            continue
        splits.append(_split_outcome(split, member.name, evaluation))
    if errors:
        return Outcome(Status.INVALID, errors=errors)
    if missing:
        return Outcome.failed(
            f"the {' and '.join(missing)} targets of {dataset.name} are not on the server yet; "
            "the submission is scored as soon as the organisers add them"
        )
    return Outcome(Status.SCORED, splits)
