"""From a stored submission (or a dataset's baseline) to an Outcome, writing nothing.

services.score_submission claims the submission, calls evaluate() here, and writes
the Outcome in one transaction.

An upload is handled in two stages, so that nothing its participant sees can depend on
a hidden target (scoring.md §1): first every prediction file is checked completely,
against the split's row count (public: the inputs have as many rows) and placeholder
targets, and any problem makes the submission invalid; only then are the targets read
and the losses computed. A failure after that, on a hidden split, is a fault of ours:
the participant gets GENERIC_FAILURE, the staff the cause (services.py).
"""

import hashlib
import json
import math
import tempfile
from dataclasses import dataclass, field
from functools import partial

import numpy as np
from django.core.files.storage import storages

import scoring
import scoring.ladder
import scoring.probing
from challenge_site import policy
from datasets.models import TEST_PARTS, Dataset, Kind, ScoredSplit, Split

from .archive import ArchiveError, Limits, bounded, inspect, open_member, open_zip
from .models import Status, Submission

SPLIT_ORDER = [Split.TRAIN, Split.VAL, Split.TEST]
# What a participant reads when scoring failed after a hidden split's targets were read.
GENERIC_FAILURE = (
    "scoring failed because of a fault on our side, not in your files; the organisers "
    "have been told and can score it again"
)
# An error report is stored in at most this many bytes (as JSON); one line in at most
# REPORT_LINE_MAX characters.
REPORT_MAX_BYTES = 20_000
REPORT_LINE_MAX = 1000


@dataclass
class Progress:
    """How far a run got; services words a failure by it."""

    hidden_targets_read: bool = False


def bounded_report(lines: list[str]) -> list[str]:
    """``lines`` cut to REPORT_MAX_BYTES (as stored, in JSON), each line to REPORT_LINE_MAX
    characters; a last line says how many were left out."""
    lines = [bounded(line, REPORT_LINE_MAX) for line in lines]
    room = REPORT_MAX_BYTES - 2 - 120  # the brackets, and the closing line
    kept: list[str] = []
    for line in lines:
        room -= len(json.dumps(line)) + 2
        if room < 0:
            break
        kept.append(line)
    if len(kept) < len(lines):
        kept.append(
            f"… and {len(lines) - len(kept)} more lines of this report, left out (over 20 KB)"
        )
    return kept


@dataclass(frozen=True)
class SplitOutcome:
    split: Split
    filename: str
    rows: int
    non_probabilistic: bool
    scores: dict[str, float | None]
    plot_data: dict
    # Per-example terms by key (scoring.compute_terms), stored by services as a file.
    terms: dict[str, np.ndarray | None] = field(default_factory=dict, repr=False, compare=False)
    # Predictions that differ from the file's most common one (scoring.probing).
    rows_off_mode: int | None = None


@dataclass(frozen=True)
class Outcome:
    status: Status
    splits: list[SplitOutcome] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    failure: str = ""
    failure_detail: str = ""  # for staff only
    fingerprint: str = ""  # sha256 of the prediction files' bytes, in split order

    @classmethod
    def failed(cls, failure: str, detail: str = "") -> "Outcome":
        return cls(Status.FAILED, failure=failure, failure_detail=detail or failure)


def scoring_options(dataset: Dataset) -> scoring.ScoringOptions:
    return scoring.ScoringOptions(
        log_base=dataset.log_base,
        allow_samples=dataset.allow_samples,
        min_quantile_gap=dataset.min_quantile_gap,
        nmse_normaliser=dataset.nmse_normaliser,
    )


def read_dataset_targets(dataset: Dataset, splits=None) -> dict[Split, np.ndarray]:
    """The dataset's stored target files (those of ``splits``, or all), read (and checked)
    by the scoring package."""
    targets = {}
    files = dataset.files.filter(kind=Kind.TARGETS)
    if splits is not None:
        files = files.filter(split__in=[str(split) for split in splits])
    for datafile in files:
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
        evaluation.terms(),
        scoring.probing.rows_off_mode(evaluation),
    )


def public_mask(dataset: Dataset, n: int) -> np.ndarray | None:
    """Which of the ``n`` test examples form the public part, or None when the challenge
    has no public part (or the test targets were never stored, so no seed was drawn)."""
    fraction = dataset.challenge.test_public_fraction
    if fraction <= 0 or dataset.test_parts_seed is None or n < 2:
        return None
    return scoring.ladder.public_mask(n, fraction, dataset.test_parts_seed)


def scored_targets(dataset: Dataset, split: str) -> dict[str, np.ndarray]:
    """{split, "train"}: the targets a score of ``split`` was computed with (a test part's
    are the test targets where the part lies) and the training targets (if stored)."""
    whole = Split.TEST if split in TEST_PARTS else Split(split)
    targets = read_dataset_targets(dataset, splits={whole, Split.TRAIN})
    scored = targets[whole]
    if split in TEST_PARTS:
        mask = public_mask(dataset, scored.size)
        if mask is None:
            raise ValueError(f"{dataset}: the challenge has no public part")
        scored = scored[mask if split == ScoredSplit.PUBLIC else ~mask]
    found = {str(split): scored}
    if Split.TRAIN in targets:
        found[str(Split.TRAIN)] = targets[Split.TRAIN]
    return found


def _with_parts(
    dataset: Dataset, split: Split, filename: str, evaluation: scoring.Evaluation
) -> list[SplitOutcome]:
    """The split's outcome, followed for a test split by its public and private parts'
    (scored as if each were the whole file) when the challenge has a public part."""
    outcomes = [_split_outcome(split, filename, evaluation)]
    mask = public_mask(dataset, evaluation.n) if split == Split.TEST else None
    if mask is not None:
        for part, rows in ((ScoredSplit.PUBLIC, mask), (ScoredSplit.PRIVATE, ~mask)):
            outcomes.append(_split_outcome(part, filename, evaluation.subset(rows)))
    return outcomes


def evaluate(submission: Submission, *, progress: Progress | None = None) -> Outcome:
    """Score every prediction file (or the baseline); raises only on faults of ours.

    ``progress`` records whether a hidden split's targets were read when it raised.
    """
    if submission.is_baseline:
        return evaluate_baseline(submission.dataset)
    return evaluate_upload(submission, progress=progress or Progress())


def evaluate_baseline(dataset: Dataset) -> Outcome:
    targets = read_dataset_targets(dataset)
    if Split.TRAIN not in targets:
        return Outcome.failed(
            f"{dataset.name}: the baseline needs the training targets, which are not stored yet"
        )
    options = scoring_options(dataset)
    splits = [
        outcome
        for split in SPLIT_ORDER
        if split in targets
        for outcome in _with_parts(
            dataset,
            split,
            "",
            scoring.baseline(
                targets[Split.TRAIN], targets[split], task=dataset.task, options=options
            ),
        )
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


def evaluate_upload(submission: Submission, *, progress: Progress) -> Outcome:
    dataset = submission.dataset
    limits = Limits.from_settings()
    spooled, size = _spool(submission, limits)
    with spooled:
        try:
            archive = open_zip(spooled, size=size, limits=limits)
        except ArchiveError as error:
            return Outcome(Status.INVALID, errors=error.problems)
        with archive:
            return _evaluate_archive(archive, dataset, limits, progress)


def _placeholder_targets(task: str, rows: int) -> np.ndarray:
    """Targets that stand in for the real ones while a file is checked: alternately
    +1 and -1 (classification) or 1 and 0 (regression). Nothing the check reports may
    depend on them (scoring.md §1: every check comes before any target is looked at)."""
    alternate = np.arange(rows) % 2 == 0
    if task == scoring.Task.CLASSIFICATION:
        return np.where(alternate, 1.0, -1.0)
    return alternate.astype(np.float64)


def _row_counts(dataset: Dataset) -> dict[Split, int]:
    """Rows per split from the stored files' records (the inputs' first: they are public
    once a participant may submit predictions for the split), without reading a file."""
    counts: dict[Split, int] = {}
    for datafile in dataset.files.all():
        if datafile.kind == Kind.INPUTS or datafile.split not in counts:
            counts[Split(datafile.split)] = datafile.rows
    return counts


def _check(data, *, rows: int, dataset: Dataset, options, path: str) -> None:
    """ScoringError with every problem of the file, found without any target."""
    scoring.evaluate(
        data,
        _placeholder_targets(dataset.task, rows),
        task=dataset.task,
        options=options,
        predictions_path=path,
        train_targets=_placeholder_targets(dataset.task, 2),
    )


def _evaluate_archive(archive, dataset: Dataset, limits: Limits, progress: Progress) -> Outcome:
    try:
        contents = inspect(archive, dataset_name=dataset.name, limits=limits)
    except ArchiveError as error:
        return Outcome(Status.INVALID, errors=error.problems)
    options = scoring_options(dataset)
    rows = _row_counts(dataset)
    stored_targets = set(dataset.files.filter(kind=Kind.TARGETS).values_list("split", flat=True))

    # 1. Every file checked in full before any target is read.
    errors: list[str] = []
    for split, member in contents.members.items():
        if split not in rows:
            continue  # no file of the split yet: reported as missing below
        try:
            # Streamed: a member of any size (a bomb of one line, of blank lines, of too
            # many rows) costs the scoring package's blocks, not its size.
            with open_member(archive, member) as stream:
                _check(stream, rows=rows[split], dataset=dataset, options=options, path=member.name)
        except ArchiveError as error:
            errors.extend(error.problems)
        except scoring.ScoringError as error:
            errors.extend(error.lines)
    if errors:
        return Outcome(Status.INVALID, errors=errors)
    missing = [split for split in contents.members if split not in stored_targets]
    if missing:
        return Outcome.failed(
            f"the {' and '.join(split.label.lower() for split in missing)} targets of "
            f"{dataset.name} are not on the server yet; the submission is scored as soon as "
            "the organisers add them"
        )

    # 2. The targets, and the losses. Past this point a failure on a hidden split is ours
    # and must not show (services.py words it).
    if not all(policy.scores_public(dataset.challenge, split) for split in contents.members):
        progress.hidden_targets_read = True
    targets = read_dataset_targets(dataset, splits={*contents.members, Split.TRAIN})
    splits: list[SplitOutcome] = []
    for split, member in contents.members.items():
        with open_member(archive, member) as stream:
            evaluation = scoring.evaluate(
                stream,
                targets[split],
                task=dataset.task,
                options=options,
                predictions_path=member.name,
                train_targets=targets.get(Split.TRAIN),
            )
        splits.extend(_with_parts(dataset, split, member.name, evaluation))
    return Outcome(Status.SCORED, splits, fingerprint=_fingerprint(archive, contents))


def _fingerprint(archive, contents) -> str:
    """sha256 over the prediction files' bytes in split order (two uploads of the same
    files match whatever their zips' names, dates or compression)."""
    digest = hashlib.sha256()
    for split in SPLIT_ORDER:
        member = contents.members.get(split)
        if member is None:
            continue
        digest.update(f"{split}:".encode())
        with open_member(archive, member) as stream:
            for chunk in iter(partial(stream.read, 1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()
