"""The slices of a dataset split (scoring.md §8) as the boards see them: their names, which
examples each holds, and whether a user may learn of them at all.

A slices file (``NAME_{val,test}_slices.txt``, a DatasetFile of kind ``slices``) labels
each example of the validation or test split with a slice name. Its scores are Score rows
whose loss is ``LOSS@SLICE`` (challenge_site.submissions.evaluation writes them); a board
of one slice (``?slice=NAME``) ranks those rows as the whole split's board ranks its own.
Until ``challenges.policy.slices_visible`` says so, nothing here reaches a page: an unknown
slice and a hidden one get the same answer, and a board never lists slices it may not show.

The file is read (and checked by the scoring package) once per process and stored
version (its sha256): a page that names a slice costs one query for the file's row.
"""

import hashlib
import logging
import re
from dataclasses import replace
from datetime import datetime
from functools import lru_cache

import numpy as np
from django.core.files.storage import storages

import scoring
from challenge_site.challenges import policy
from challenge_site.query_params import BadOptions
from datasets.models import Dataset, DatasetFile

from .queries import Board, Entry, pivot

logger = logging.getLogger(__name__)

KIND = "slices"
# scoring.md §8: a slice name (checked again by scoring.read_slices when the file is read).
NAME = re.compile(r"[a-z0-9_-]{1,32}")
# The answer to any slice name where none may be shown: the name is not echoed, and
# nothing says whether the split has slices.
NONE_SHOWN = "no slice of that name can be shown on this board"
# The separator of a slice score's loss key: "nlp@shifted".
SEPARATOR = "@"


def key(loss: str, slice_name: str) -> str:
    """The Score.loss of ``loss`` on a slice ("" for the whole split): "nlp@shifted"."""
    return f"{loss}{SEPARATOR}{slice_name}" if slice_name else loss


def split_key(stored: str) -> tuple[str, str]:
    """(loss, slice) of a Score.loss: ("nlp", "shifted"), or ("nlp", "") for the split."""
    loss, _, slice_name = stored.partition(SEPARATOR)
    return loss, slice_name


@lru_cache(maxsize=32)
def _read(alias: str, path: str, sha256: str, filename: str, rows: int) -> np.ndarray:
    """The file's names, one per example (read-only: shared between requests)."""
    with storages[alias].open(path, "rb") as handle:
        data = handle.read()
    names = np.asarray(scoring.read_slices(data, path=filename, n=rows)).astype(str)
    names.flags.writeable = False
    return names


def _file(dataset: Dataset, split: str) -> DatasetFile | None:
    """The split's slices file: both splits' read in one query, kept on the dataset
    object for the rest of the request (parsing ``?slice=`` and drawing the selector)."""
    if split not in policy.SLICED_SPLITS:
        return None
    found = getattr(dataset, "_slices_files", None)
    if found is None:
        found = {datafile.split: datafile for datafile in dataset.files.filter(kind=KIND)}
        dataset._slices_files = found
    return found.get(split)


def membership(dataset: Dataset, split: str) -> np.ndarray | None:
    """The slice name of every example of ``split`` (None: the split has no slices)."""
    datafile = _file(dataset, split)
    if datafile is None:
        return None
    datafile.dataset = dataset  # its filename names the dataset: no query for it
    return _read(
        datafile.storage_alias, datafile.path, datafile.sha256, datafile.filename, datafile.rows
    )


def fingerprint(labels: np.ndarray) -> str:
    """A digest of a labelling (what resamples kept between runs were drawn for)."""
    return hashlib.sha256("\n".join(labels.tolist()).encode()).hexdigest()


def names(dataset: Dataset, split: str) -> list[str]:
    """The split's slices in order of first appearance (scoring.md §8); [] without any."""
    labels = membership(dataset, split)
    if labels is None:
        return []
    unique, first = np.unique(labels, return_index=True)
    return [str(name) for _, name in sorted(zip(first, unique, strict=True))]


def visible_names(dataset: Dataset, split: str, *, user, now: datetime) -> list[str]:
    """The slices ``user`` may see on the split's boards: none before slices_visible
    (and then the file is not even looked for)."""
    if not policy.slices_visible(dataset.challenge, split, user=user, now=now):
        return []
    try:
        return names(dataset, split)
    except (OSError, scoring.ScoringError):
        # A stored file gone or unreadable: the boards go on without slices (the
        # intervals' run, which needs them, fails loudly instead).
        logger.exception("slices of %s/%s unreadable", dataset.pk, split)
        return []


def parse(
    dataset: Dataset, split: str, value: str | None, *, user, now: datetime
) -> tuple[str, list[str]]:
    """(the slice a ``?slice=`` parameter names, or ""; the slices ``user`` may pick).

    BadOptions for a slice that is not among the visible ones, in the same words whether
    it does not exist or is hidden, so an answer never tells that a hidden slice exists.
    """
    if not value:
        return "", visible_names(dataset, split, user=user, now=now)
    shown = value[:40]
    available = visible_names(dataset, split, user=user, now=now)
    if value in available:
        return value, available
    if available:
        raise BadOptions({"slice": f"expected one of {', '.join(available)}, found {shown!r}"})
    raise BadOptions({"slice": NONE_SHOWN})


# --- The results page's column blocks -------------------------------------------------


def entries_on(board: Board, names, ids: list[int]) -> dict[str, dict[int, Entry]]:
    """Slice → {submission id: its queries.Entry on the slice's board}: the results rows
    ``ids`` with their scores and intervals on each slice, one pivot per slice."""
    return {
        name: {entry.pk: entry for entry in pivot(replace(board, slice=name), ids)}
        for name in names
    }


def cells(by_slice: dict[str, dict[int, Entry]], pk: int, losses) -> list[tuple]:
    """(value, interval) of each slice's ``losses`` for submission ``pk``, slice by slice
    ((None, None) where it has no scores on a slice)."""
    found = []
    for entries in by_slice.values():
        entry = entries.get(pk)
        for loss in losses:
            if entry is None:
                found.append((None, None))
            else:
                found.append((entry.values[loss.name], entry.intervals[loss.name]))
    return found
