"""Dataset files: checking, storing, releasing by the challenge clock."""

import hashlib
import io
import re
import secrets
from collections.abc import Iterable
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from django.core.files import File
from django.core.files.storage import storages
from django.db import transaction
from django.db.models import F
from django.utils import timezone

import scoring
from challenge_site.challenges.models import Challenge, TestInputsRelease, TestTargetsRelease
from challenge_site.challenges.policy import ALWAYS_RELEASED, file_details_visible, released_parts
from challenge_site.challenges.services import record_target_change

from .capacity import capacity_problems
from .models import (
    RELEASED_KINDS,
    SLICED_SPLITS,
    Dataset,
    DatasetFile,
    Kind,
    Split,
    StorageAlias,
)
from .signals import dataset_files_changed
from .signals import losses_changed as losses_changed_signal
from .signals import ranking_loss_changed as ranking_loss_changed_signal

FILENAME_RE = re.compile(
    r"^(?P<name>[a-z][a-z0-9-]*)_"
    r"(?:(?P<split>train|val|test)_(?P<kind>inputs|targets)"
    r"|(?P<sliced>val|test)_(?P<slices>slices))\.txt$"
)
SPLITS = [Split.TRAIN, Split.VAL, Split.TEST]
# The six files every dataset has, released by the challenge clock (the only files any
# participant-facing list, download, size or count is made of).
PARTS = [(split, kind) for split in SPLITS for kind in RELEASED_KINDS]
# The optional slices files (scoring.md §8): stored privately, never released, never
# listed outside the admin; only the scoring workers read them.
SLICE_PARTS = [(split, Kind.SLICES) for split in SLICED_SPLITS]


class DatasetFilesError(Exception):
    """Files that cannot be accepted; ``problems`` are lines like ``PATH:LINE: message``."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


@dataclass(frozen=True)
class CheckedFile:
    """A file that passed the scoring parser; ``source``: bytes, a path or a binary file object."""

    split: Split
    kind: Kind
    filename: str
    source: Any
    rows: int
    columns: int
    size: int
    sha256: str

    def open(self):
        return open_source(self.source)


@contextmanager
def open_source(source):
    """A binary handle on bytes, a path or a (rewound) file object; only paths get closed."""
    if isinstance(source, bytes):
        yield io.BytesIO(source)
    elif isinstance(source, str | Path):
        with open(source, "rb") as handle:
            yield handle
    else:
        source.seek(0)
        yield source


def expected_filename(name: str, split: str, kind: str) -> str:
    return f"{name}_{split}_{kind}.txt"


def sort_key(part: tuple[str, str]) -> int:
    """Display order: train, val, test; inputs before targets (slices last: the admin)."""
    return [*PARTS, *SLICE_PARTS].index(part)


def storage_alias_for(*, split: str, kind: str) -> StorageAlias:
    """Anything not released from the start lives where no URL reaches."""
    return StorageAlias.DEFAULT if (split, kind) in ALWAYS_RELEASED else StorageAlias.PRIVATE


# --- Release by the clock ------------------------------------------------------


def released_files(dataset: Dataset, *, now: datetime) -> list[DatasetFile]:
    """The dataset's stored files released at ``now``, in display order."""
    parts = released_parts(dataset.challenge, now=now)
    files = [f for f in dataset.files.all() if (f.split, f.kind) in parts]
    return sorted(files, key=lambda f: sort_key((f.split, f.kind)))


@dataclass(frozen=True)
class PartStatus:
    """One of a dataset's six files as ``user`` sees it: ``file`` is None unless its
    details may be shown (policy.file_details_visible), whether it exists or not."""

    split: Split
    kind: Kind
    filename: str
    file: DatasetFile | None
    released: bool
    release_rule: str
    release_date: datetime | None


def release_rule(challenge: Challenge, *, split: str, kind: str) -> tuple[str, datetime | None]:
    """When (split, kind) is released, in words and as a date if it has one."""
    if (split, kind) in ALWAYS_RELEASED:
        return "when the challenge opens", challenge.start
    if (split, kind) == (Split.VAL, Kind.TARGETS):
        return "when the test phase begins", challenge.test_start
    if kind == Kind.INPUTS:
        if challenge.test_inputs_release == TestInputsRelease.AT_START:
            return "when the challenge opens", challenge.start
        return "when the test phase begins", challenge.test_start
    if challenge.test_targets_release == TestTargetsRelease.AFTER_PUBLICATION:
        return "after the deadline, once the results are published", None
    return "never", None


def part_statuses(dataset: Dataset, *, user, now: datetime) -> list[PartStatus]:
    released = released_parts(dataset.challenge, now=now)
    files = {(f.split, f.kind): f for f in dataset.files.all()}
    return [
        PartStatus(
            split,
            kind,
            expected_filename(dataset.name, split, kind),
            files.get((split, kind))
            if file_details_visible(dataset.challenge, split=split, kind=kind, user=user, now=now)
            else None,
            (split, kind) in released,
            *release_rule(dataset.challenge, split=split, kind=kind),
        )
        for split, kind in PARTS
    ]


# --- Checking -----------------------------------------------------------------


def sha256_and_size(source) -> tuple[str, int]:
    digest = hashlib.sha256()
    size = 0
    with open_source(source) as handle:
        for chunk in iter(partial(handle.read, 1 << 20), b""):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


def parse_filename(filename: str, *, name: str) -> tuple[Split, Kind]:
    """Split and kind from ``NAME_split_kind.txt``; DatasetFilesError if it is not one."""
    match = FILENAME_RE.match(filename)
    if match is None or match["name"] != name:
        allowed = ", ".join(expected_filename(name, s, k) for s, k in PARTS)
        optional = " or ".join(expected_filename(name, s, k) for s, k in SLICE_PARTS)
        raise DatasetFilesError(
            [f"{filename}: unexpected file name; expected one of {allowed} (or {optional})"]
        )
    if match["slices"]:
        return Split(match["sliced"]), Kind.SLICES
    return Split(match["split"]), Kind(match["kind"])


def check_file(
    *,
    name: str,
    task: str,
    filename: str,
    source,
    display_path: str | None = None,
    options: scoring.ScoringOptions | None = None,
) -> CheckedFile:
    """Parse one dataset file with the scoring package; DatasetFilesError lists its problems.

    Targets are read as ``task`` with the dataset's ``options`` (a multiclass dataset's
    labels must lie in 0 … classes − 1)."""
    split, kind = parse_filename(filename, name=name)
    path = display_path or filename
    with open_source(source) as handle:
        try:
            if kind == Kind.INPUTS:
                array = scoring.read_inputs(handle, path=path)
            elif kind == Kind.SLICES:  # one name per line; the count is cross-checked
                array = scoring.read_slices(handle, path=path)
            else:
                array = scoring.read_targets(handle, path=path, task=task, options=options)
        except scoring.ScoringError as error:
            raise DatasetFilesError(str(error).splitlines()) from None
    rows = int(array.shape[0])
    columns = int(array.shape[1]) if array.ndim == 2 else 1
    sha256, size = sha256_and_size(source)
    return CheckedFile(split, kind, filename, source, rows, columns, size, sha256)


def cross_check(
    name: str, parts: dict[tuple[str, str], tuple[int, int]], *, folder: str = ""
) -> list[str]:
    """Rows agree between inputs and targets of a split; one input dimension throughout.

    ``parts`` maps (split, kind) to (rows, columns) for the files the dataset will hold;
    ``folder`` (ending in "/") goes before the name of the file a problem is about.
    """
    problems = []
    for split in SPLITS:
        inputs, targets = parts.get((split, Kind.INPUTS)), parts.get((split, Kind.TARGETS))
        if inputs and targets and inputs[0] != targets[0]:
            problems.append(
                f"{folder}{expected_filename(name, split, Kind.TARGETS)}: expected {inputs[0]} rows "
                f"(one per row of {expected_filename(name, split, Kind.INPUTS)}), found {targets[0]}"
            )
    problems += _slice_count_problems(name, parts, folder=folder)
    dims = [
        (split, parts[(split, Kind.INPUTS)][1]) for split in SPLITS if (split, Kind.INPUTS) in parts
    ]
    for split, dim in dims[1:]:
        first_split, first_dim = dims[0]
        if dim != first_dim:
            problems.append(
                f"{folder}{expected_filename(name, split, Kind.INPUTS)}: "
                f"expected {first_dim} numbers per row "
                f"(as in {expected_filename(name, first_split, Kind.INPUTS)}), found {dim}"
            )
    return problems


def _slice_count_problems(
    name: str, parts: dict[tuple[str, str], tuple[int, int]], *, folder: str = ""
) -> list[str]:
    """A slices file names every example of its split (scoring.md §8): as many names as
    the split's inputs (or targets) have rows. The line is where the next name should
    have been, or the first name too many (a checked file has no blank line before its
    last name)."""
    problems = []
    for split, kind in SLICE_PARTS:
        labels = parts.get((split, kind))
        other = parts.get((split, Kind.INPUTS)) or parts.get((split, Kind.TARGETS))
        if labels is None or other is None or labels[0] == other[0]:
            continue
        of = Kind.INPUTS if (split, Kind.INPUTS) in parts else Kind.TARGETS
        line = labels[0] + 1 if labels[0] < other[0] else other[0] + 1
        problems.append(
            f"{folder}{expected_filename(name, split, kind)}:{line}: expected {other[0]} slice "
            f"names (one per row of {expected_filename(name, split, of)}), found {labels[0]}"
        )
    return problems


def check_files(
    *,
    name: str,
    task: str,
    uploads: list[tuple[str, Any, str]],
    existing: Iterable[DatasetFile] = (),
    folder: str = "",
    options: scoring.ScoringOptions | None = None,
) -> list[CheckedFile]:
    """Check new files (filename, source, display path) together with the ones kept.

    Every problem of every file is collected before DatasetFilesError is raised;
    problems between files name them inside ``folder``. ``options``: the dataset's
    scoring options, which the targets must fit (check_file), and whose number of
    classes must let a prediction file fit the submission limits (capacity.py).
    """
    problems: list[str] = []
    checked: list[CheckedFile] = []
    seen: dict[tuple[str, str], str] = {}
    for filename, source, display_path in uploads:
        try:
            result = check_file(
                name=name,
                task=task,
                filename=filename,
                source=source,
                display_path=display_path,
                options=options,
            )
        except DatasetFilesError as error:
            problems.extend(error.problems)
            continue
        part = (result.split, result.kind)
        if part in seen:
            problems.append(f"{display_path}: given twice (also {seen[part]})")
            continue
        seen[part] = display_path
        checked.append(result)
    if problems:
        raise DatasetFilesError(problems)
    parts = {(f.split, f.kind): (f.rows, f.columns) for f in existing}
    parts.update({(c.split, c.kind): (c.rows, c.columns) for c in checked})
    problems = cross_check(name, parts, folder=folder)
    if not problems and options is not None:
        rows = {split: rows for (split, _kind), (rows, _columns) in parts.items()}
        problems = capacity_problems(name=name, classes=options.classes, rows=rows)
    if problems:
        raise DatasetFilesError(problems)
    return checked


def check_stored_targets(
    dataset: Dataset, *, task: str, options: scoring.ScoringOptions | None = None
) -> None:
    """Re-read the stored target files as ``task`` with ``options`` (before the task of a
    dataset, or its number of classes, changes)."""
    problems = []
    for datafile in dataset.files.filter(kind=Kind.TARGETS):
        with storages[datafile.storage_alias].open(datafile.path, "rb") as handle:
            try:
                scoring.read_targets(
                    handle.read(), path=datafile.filename, task=task, options=options
                )
            except scoring.ScoringError as error:
                problems.extend(str(error).splitlines())
    if problems:
        raise DatasetFilesError(problems)


# --- Storing --------------------------------------------------------------------


def _storage_name(dataset: Dataset, checked: CheckedFile) -> str:
    return (
        f"datasets/{dataset.challenge.slug}/{dataset.name}/{checked.sha256[:16]}/{checked.filename}"
    )


def save_files(
    dataset: Dataset, checked: list[CheckedFile], *, now: datetime, user=None, via: str = ""
) -> list[CheckedFile]:
    """Store checked files, replacing those whose content changed; returns what changed.

    Old bytes are deleted and dataset_files_changed is sent once the transaction commits.
    A replaced target file is recorded (who: ``user`` or ``via``) as a ChallengeEvent.
    """
    existing = {(f.split, f.kind): f for f in dataset.files.all()}
    changed, written, obsolete = [], [], []
    try:
        with transaction.atomic():
            for item in checked:
                alias = storage_alias_for(split=item.split, kind=item.kind)
                old = existing.get((item.split, item.kind))
                if old is not None and old.sha256 == item.sha256 and old.storage_alias == alias:
                    continue
                with item.open() as handle:
                    path = storages[alias].save(
                        _storage_name(dataset, item), File(handle, name=item.filename)
                    )
                written.append((alias, path))
                fields = dict(
                    storage_alias=alias,
                    path=path,
                    size=item.size,
                    rows=item.rows,
                    columns=item.columns,
                    sha256=item.sha256,
                    uploaded=now,
                )
                DatasetFile.objects.update_or_create(
                    dataset=dataset, split=item.split, kind=item.kind, defaults=fields
                )
                if old is not None:
                    obsolete.append((old.storage_alias, old.path))
                    if item.kind == Kind.TARGETS and old.sha256 != item.sha256:
                        record_target_change(
                            dataset=dataset,
                            filename=item.filename,
                            split=item.split,
                            old_sha256=old.sha256,
                            new_sha256=item.sha256,
                            user=user,
                            via=via,
                            now=now,
                        )
                changed.append(item)
            if changed:
                refresh_shape(dataset)
                transaction.on_commit(partial(_delete_stored, obsolete))
                transaction.on_commit(partial(on_dataset_files_changed, dataset))
    except BaseException:
        _delete_stored(written)
        raise
    return changed


def delete_file(
    datafile: DatasetFile, *, user=None, via: str = "", now: datetime | None = None
) -> None:
    dataset = datafile.dataset
    with transaction.atomic():
        datafile.delete()
        if datafile.kind == Kind.TARGETS:
            record_target_change(
                dataset=dataset,
                filename=datafile.filename,
                split=datafile.split,
                old_sha256=datafile.sha256,
                new_sha256="",
                user=user,
                via=via,
                now=now or timezone.now(),
            )
        refresh_shape(dataset)
        transaction.on_commit(partial(_delete_stored, [(datafile.storage_alias, datafile.path)]))
        transaction.on_commit(partial(on_dataset_files_changed, dataset))


def _delete_stored(paths: list[tuple[str, str]]) -> None:
    for alias, path in paths:
        storages[alias].delete(path)


def refresh_shape(dataset: Dataset) -> None:
    """Input dimension and split sizes, read from the stored files' rows and columns."""
    files = {(f.split, f.kind): f for f in dataset.files.all()}
    inputs = [files[(s, Kind.INPUTS)] for s in SPLITS if (s, Kind.INPUTS) in files]
    dataset.input_dim = inputs[0].columns if inputs else None
    for split in SPLITS:
        source = files.get((split, Kind.INPUTS)) or files.get((split, Kind.TARGETS))
        setattr(dataset, f"n_{split}", source.rows if source else None)
    if dataset.test_parts_seed is None and (Split.TEST, Kind.TARGETS) in files:
        # Drawn once, from the operating system: which test examples are public must not
        # be guessable, and must not change when the organisers fix a target file.
        dataset.test_parts_seed = secrets.randbits(62)
    dataset.save(update_fields=["input_dim", "n_train", "n_val", "n_test", "test_parts_seed"])


def levels_changed(*, dataset: Dataset) -> None:
    """An existing dataset's quantile levels changed (inside the save): every entry's wis
    and coverages change with them, so its cached boards go, and once the save commits
    the baseline and every finished entry are scored again, as after new targets."""
    Dataset.objects.filter(pk=dataset.pk).update(generation=F("generation") + 1)
    transaction.on_commit(partial(on_dataset_files_changed, dataset))


def on_dataset_files_changed(dataset: Dataset) -> None:
    """Extension point (baseline scoring hooks in here): tell receivers the files changed."""
    dataset_files_changed.send(sender=Dataset, dataset=dataset)


def check_ranking_loss(*, task: str, ranking_loss: str) -> str | None:
    """None if ``ranking_loss`` (empty = the task's default) ranks ``task``; else why not."""
    if not ranking_loss:
        return None
    names = [loss.name for loss in scoring.losses_for(task)]
    if ranking_loss not in names:
        return f"expected one of {', '.join(names)} for a {task} dataset, found {ranking_loss!r}"
    return None


def check_losses(*, task: str, options, losses, ranking_loss: str) -> list[str]:
    """Why ``losses`` (a dataset's shown losses, Dataset.losses) cannot be ``task``'s
    under ``options``; empty when they can. Each unknown name is listed with the task's
    losses; the ranking loss (empty = the task's default) must be one of them."""
    if not isinstance(losses, list) or not all(isinstance(name, str) for name in losses):
        return [f"expected a list of loss names, found {losses!r}"]
    known = [loss.name for loss in scoring.losses_for(task, options)]
    loss = scoring.find_loss(task, ranking_loss) if ranking_loss else None
    if options is not None and loss is not None and ranking_loss not in known:
        # A loss that applies under some options only (wis: quantile levels, spec §8).
        return [
            f"the ranking loss {ranking_loss!r} is not computed for this dataset as set up"
            f" ({loss.description}); its losses are {', '.join(known)}"
        ]
    if not losses:
        return []
    problems = []
    unknown = [name for name in losses if name not in known]
    if unknown:
        problems.append(
            f"unknown {'loss' if len(unknown) == 1 else 'losses'} "
            f"{', '.join(map(repr, unknown))} for this {task} dataset; its losses are "
            f"{', '.join(known)}"
        )
    repeated = sorted({name for name in losses if losses.count(name) > 1})
    if repeated:
        problems.append(f"{', '.join(map(repr, repeated))} named more than once")
    ranking = ranking_loss or scoring.default_ranking_loss(task).name
    if ranking not in losses:
        problems.append(
            f"the ranking loss {ranking!r} must be one of the losses shown"
            + ("" if ranking_loss else " (the task's default, as ranking_loss is empty)")
        )
    return problems


def losses_changed(*, dataset: Dataset) -> None:
    """A dataset's shown losses changed (inside the save): its cached boards are out of
    date, and the entries scored before a loss now shown existed (a plug-in installed
    since) are scored again (signals.losses_changed)."""
    Dataset.objects.filter(pk=dataset.pk).update(generation=F("generation") + 1)
    losses_changed_signal.send(sender=Dataset, dataset=dataset)


def ranking_loss_changed(*, dataset: Dataset) -> None:
    """A dataset's ranking loss changed (inside the save): the apps above recompute the
    Ladder's shown scores and the entries that count for the final ranking
    (signals.ranking_loss_changed)."""
    ranking_loss_changed_signal.send(sender=Dataset, dataset=dataset)
