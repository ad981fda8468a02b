"""From a stored submission (or a dataset's baseline) to an Outcome, writing nothing.

services.score_submission claims the submission, calls evaluate() here, and writes
the Outcome in one transaction.

An upload is handled in two stages, so that nothing its participant sees can depend on
a hidden target (scoring.md §1): first every prediction file is checked completely,
against the split's row count (public: the inputs have as many rows) and nothing else
(scoring.upload_check, the check an upload gets when it arrives), and any problem makes
the submission invalid; only then are the targets read
and the losses computed. A failure after that, on a hidden split, is a fault of ours:
the participant gets GENERIC_FAILURE, the staff the cause (services.py).
"""

import hashlib
import math
import tempfile
from collections.abc import Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from functools import partial

import numpy as np
from django.core.files.storage import storages

import scoring
import scoring.ladder
import scoring.probing
from challenge_site.challenges import policy
from datasets.models import SLICED_SPLITS, TEST_PARTS, Dataset, Kind, ScoredSplit, Split
from scoring.upload_check import (  # noqa: F401 - REPORT_MAX_BYTES: the site's name for it
    REPORT_MAX_BYTES,
    DatasetFacts,
    bounded_report,
    check_files,
)

from .archive import ArchiveError, HeldArchive, Limits, inspect, open_member, open_zip
from .kept_files import KeptFiles
from .models import Status, Submission
from .storage import read_bytes, reading

SPLIT_ORDER = [Split.TRAIN, Split.VAL, Split.TEST]
# Prediction files inflated once and held in memory for the run, at most (scoring.archive
# .HeldArchive): most uploads, a small part of the run's memory cap.
HELD_BYTES = 16 * 1024 * 1024
# The plot data's key for the values reported beside the losses and not ranked
# (scoring.Evaluation.reported: a multiclass file's tu, du and mi), stored with them.
REPORTED_KEY = "reported"
# What a participant reads when scoring failed after a hidden split's targets were read.
GENERIC_FAILURE = (
    "scoring failed because of a fault on our side, not in your files; the organisers "
    "have been told and can score it again"
)


@dataclass
class Progress:
    """How far a run got; services words a failure by it."""

    hidden_targets_read: bool = False


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
    # Rows standing out of the file's bulk, else off its most common prediction (scoring.probing).
    rows_off_mode: int | None = None
    # Every loss on each slice of a validation or test split (scoring.md §8), keyed
    # "LOSS@SLICE" (slice_key) in order of first appearance; stored as Score rows beside
    # the split's own, shown by policy.slices_visible only.
    slice_scores: dict[str, float | None] = field(default_factory=dict, compare=False)
    # Examples of the whole file claiming certainty (scoring.Evaluation.certain: a test
    # part's outcome carries the whole test file's count); None for a non-probabilistic
    # file, whose every example is (the page says "non-probabilistic" instead).
    certain: int | None = None


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


# Parsed target and slices files kept by each worker process (kept_files.py): a run
# reads the same few files as the run before it. An entry is found by everything its
# parse depends on (the stored file's name, size and sha256, the task and options), so a
# replaced file or changed options are read afresh.
KEPT = KeptFiles(64 * 1024 * 1024)


def _file_key(datafile, *extra) -> tuple:
    return (datafile.storage_alias, datafile.path, datafile.size, datafile.sha256, *extra)


def _read_stored(datafile) -> bytes:
    return read_bytes(datafile.path, storage=storages[datafile.storage_alias])


def _parse_targets(datafile, options) -> np.ndarray:
    dataset = datafile.dataset
    return scoring.read_targets(
        _read_stored(datafile), path=datafile.filename, task=dataset.task, options=options
    )


def read_dataset_targets(dataset: Dataset, splits=None, *, files=None) -> dict[Split, np.ndarray]:
    """The dataset's stored target files (those of ``splits``, or all), read (and checked)
    by the scoring package. ``files``: the dataset's DatasetFile rows, if already read."""
    if files is None:
        files = dataset.files.filter(kind=Kind.TARGETS)
        if splits is not None:
            files = files.filter(split__in=[str(split) for split in splits])
    wanted = None if splits is None else {str(split) for split in splits}
    options = dataset.scoring_options
    targets = {}
    for datafile in files:
        if datafile.kind != Kind.TARGETS or (wanted is not None and datafile.split not in wanted):
            continue
        datafile.dataset = dataset  # (its filename names the dataset)
        key = _file_key(datafile, "targets", dataset.task, repr(options))
        targets[Split(datafile.split)] = KEPT.get(key, partial(_parse_targets, datafile, options))
    return targets


def slice_key(loss: str, slice_name: str) -> str:
    """The Score.loss of ``loss`` on a slice: "nlp@shifted" (scoring.md §8)."""
    return f"{loss}@{slice_name}"


def read_dataset_slices(dataset: Dataset, split: str, n: int, *, files=None) -> np.ndarray | None:
    """The slice of each of the split's ``n`` examples (its stored slices file, read and
    checked by the scoring package), or None when the split has none (scoring.md §8).
    ``files``: the dataset's DatasetFile rows, if already read."""
    if split not in SLICED_SPLITS:
        return None
    if files is None:
        datafile = dataset.files.filter(split=split, kind=Kind.SLICES).first()
    else:
        datafile = next((f for f in files if f.split == split and f.kind == Kind.SLICES), None)
    if datafile is None:
        return None
    datafile.dataset = dataset  # (its filename names the dataset)
    read = partial(scoring.read_slices, path=datafile.filename, n=n)
    return KEPT.get(_file_key(datafile, "slices", n), lambda: read(_read_stored(datafile)))


def slice_scores(evaluation: scoring.Evaluation, names: np.ndarray | None) -> dict:
    """Every loss of ``evaluation`` on each slice of ``names``, keyed "LOSS@SLICE"."""
    if names is None:
        return {}
    out = {}
    for slice_name, part in evaluation.by_slice(names).items():
        for loss, value in part.scores.items():
            if value is not None and math.isnan(value):
                raise ValueError(f"loss {loss} of the slice {slice_name} came out as NaN")
            out[slice_key(loss, slice_name)] = value
    return out


def _finite_json(value):
    """Plot data with every non-finite number replaced by None (JSON has no NaN)."""
    if isinstance(value, dict):
        return {key: _finite_json(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        if _finite_numbers(value):  # most of the plot data: curves of finite floats
            return list(value)
        return [_finite_json(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _finite_numbers(items) -> bool:
    """Whether every item is a finite number, in one pass in C: a sum of numbers is
    finite only when each is (NaN and ±inf carry through, inf − inf is NaN; an overflow
    to inf merely sends the items one by one). False for anything else (None, strings,
    lists): those items are then looked at one by one."""
    try:
        return math.isfinite(sum(items))
    except (TypeError, ValueError, OverflowError):  # not numbers; an int too large
        return False


def _split_outcome(
    split: Split, filename: str, evaluation: scoring.Evaluation, slices: np.ndarray | None = None
) -> SplitOutcome:
    for loss, value in evaluation.scores.items():
        if value is not None and math.isnan(value):
            raise ValueError(f"loss {loss} of the {split} split came out as NaN")
    plot_data = _finite_json(evaluation.plot_data())
    if evaluation.reported:  # kept with the plot data, shown and served by the same rules
        # As [name, value] pairs: PostgreSQL's jsonb does not keep an object's key order,
        # and the values read in scoring's order (tu, du, mi).
        plot_data[REPORTED_KEY] = _finite_json([list(item) for item in evaluation.reported.items()])
    return SplitOutcome(
        split,
        filename,
        evaluation.n,
        evaluation.non_probabilistic,
        dict(evaluation.scores),
        plot_data,
        evaluation.terms(),
        scoring.probing.rows_off_mode(evaluation),
        slice_scores(evaluation, slices),
        None if evaluation.non_probabilistic else evaluation.certain,
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
    dataset: Dataset, split: Split, filename: str, evaluation: scoring.Evaluation, *, files=None
) -> list[SplitOutcome]:
    """The split's outcome (with its slices' scores, when it has slices), followed for a
    test split by its public and private parts' (scored as if each were the whole file)
    when the challenge has a public part."""
    slices = read_dataset_slices(dataset, split, evaluation.n, files=files)
    outcomes = [_split_outcome(split, filename, evaluation, slices)]
    mask = public_mask(dataset, evaluation.n) if split == Split.TEST else None
    if mask is not None:
        for part, rows in ((ScoredSplit.PUBLIC, mask), (ScoredSplit.PRIVATE, ~mask)):
            outcomes.append(_split_outcome(part, filename, evaluation.subset(rows)))
    return outcomes


def evaluate(
    submission: Submission, *, progress: Progress | None = None, fetched: Future | None = None
) -> Outcome:
    """Score every prediction file (or the baseline); raises only on faults of ours.

    ``progress`` records whether a hidden split's targets were read when it raised.
    ``fetched``: the upload's zip being read from the storage meanwhile (``fetch``).
    """
    if submission.is_baseline:
        return evaluate_baseline(submission.dataset)
    return evaluate_upload(submission, progress=progress or Progress(), fetched=fetched)


def evaluate_baseline(dataset: Dataset) -> Outcome:
    targets = read_dataset_targets(dataset)
    if Split.TRAIN not in targets:
        return Outcome.failed(
            f"{dataset.name}: the baseline needs the training targets, which are not stored yet"
        )
    options = dataset.scoring_options
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


def fetch(submission: Submission, *, on: Executor) -> Future:
    """Start reading the upload's zip from the storage on ``on``'s thread (``_spool``),
    while this thread scores another one."""
    return on.submit(_spool, submission, Limits.from_settings())


def _spool(submission: Submission, limits: Limits):
    """The stored zip in a seekable temporary file (in memory while small), size-bounded."""
    spooled = tempfile.SpooledTemporaryFile(max_size=8 * 1024 * 1024)  # noqa: SIM115 - returned
    with reading(submission.file.name) as stored:
        for chunk in iter(partial(stored.read, 1 << 20), b""):
            spooled.write(chunk)
            if spooled.tell() > limits.upload_bytes:
                break
    size = spooled.tell()
    spooled.seek(0)
    return spooled, size


def evaluate_upload(
    submission: Submission, *, progress: Progress, fetched: Future | None = None
) -> Outcome:
    dataset = submission.dataset
    limits = Limits.from_settings()
    spooled, size = fetched.result() if fetched is not None else _spool(submission, limits)
    with spooled:
        try:
            archive = open_zip(spooled, size=size, limits=limits)
        except ArchiveError as error:
            return Outcome(Status.INVALID, errors=error.problems)
        with archive:
            return _evaluate_archive(archive, dataset, limits, progress)


def dataset_facts(dataset: Dataset) -> DatasetFacts:
    """What checking the dataset's prediction files needs, all public: its task and
    options, and its rows per split as stored (datasets.services.refresh_shape: the
    inputs' rows, which a participant can count)."""
    rows = {str(split): getattr(dataset, f"n_{split}") for split in SPLIT_ORDER}
    return DatasetFacts(
        name=dataset.name,
        task=dataset.task,
        rows={split: n for split, n in rows.items() if n is not None},
        allow_samples=dataset.allow_samples,
        min_quantile_gap=dataset.min_quantile_gap,
        classes=dataset.scoring_options.classes,
        allow_ensembles=dataset.allow_ensembles,
    )


def dataset_names(dataset: Dataset) -> list[str]:
    """The names of the dataset's challenge's datasets (for "did you mean …?")."""
    return list(dataset.challenge.datasets.values_list("name", flat=True))


class _DatasetNames(Sequence):
    """``dataset_names(dataset)``, read when first needed: only a misnamed file's report
    reads them ("did you mean …?"), so a well-named upload costs no query for them."""

    def __init__(self, dataset: Dataset):
        self._dataset = dataset
        self._names: list[str] | None = None

    def _read(self) -> list[str]:
        if self._names is None:
            self._names = dataset_names(self._dataset)
        return self._names

    def __getitem__(self, index):
        return self._read()[index]

    def __len__(self) -> int:
        return len(self._read())


def _evaluate_archive(archive, dataset: Dataset, limits: Limits, progress: Progress) -> Outcome:
    try:
        contents = inspect(
            archive,
            dataset_name=dataset.name,
            limits=limits,
            dataset_names=_DatasetNames(dataset),
        )
    except ArchiveError as error:
        return Outcome(Status.INVALID, errors=error.problems)
    # Small prediction files are inflated once and read from memory after (they are read
    # three times: checked, scored, fingerprinted).
    archive = HeldArchive(archive, max_bytes=HELD_BYTES, total_bytes=HELD_BYTES)
    options = dataset.scoring_options
    # The dataset's target and slices files, read once for the run.
    files = _scoring_files(dataset)
    stored_targets = {datafile.split for datafile in files if datafile.kind == Kind.TARGETS}

    # 1. Every file checked in full before any target is read (a split with no file yet
    # is not: it is reported as missing below). The same check as at upload.
    errors = check_files(archive, contents, dataset_facts(dataset))
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
    targets = read_dataset_targets(dataset, splits={*contents.members, Split.TRAIN}, files=files)
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
        splits.extend(_with_parts(dataset, split, member.name, evaluation, files=files))
    return Outcome(Status.SCORED, splits, fingerprint=_fingerprint(archive, contents))


def _scoring_files(dataset: Dataset) -> list:
    """The dataset's target and slices files, read once per Dataset row read: the runs
    of a batch share their dataset's (batches.claim_more), a later run reads its own."""
    files = getattr(dataset, "_scoring_files", None)
    if files is None:
        files = list(dataset.files.filter(kind__in=[Kind.TARGETS, Kind.SLICES]))
        dataset._scoring_files = files
    return files


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
