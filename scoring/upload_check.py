"""A submission zip checked as the site checks it, with no target at all.

The site runs these checks on every upload (the zip's structure and file names when it
arrives, the prediction files' format on the scoring worker, and the format again when
an upload is refused for a limit: a broken file gets its line errors, not a 429), and a
participant's machine can run them before uploading::

    python -m scoring check predictions.zip --dataset gaze --task regression \\
        --rows train=6,val=4,test=5

Nothing here reads a target: every message depends on the prediction files and on
public facts of the dataset (its task, options and rows per split, which the inputs
show), so that no outcome can reveal a hidden target (scoring.md §1).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from .archive import (
    ArchiveError,
    Contents,
    Limits,
    Split,
    bounded,
    inspect,
    open_member,
    open_zip,
    verify,
)
from .errors import ScoringError
from .options import MAX_LINE_NUMBERS, ScoringOptions
from .rows import RowReader
from .taskspec import get_task

# A report is stored in at most this many bytes (as JSON), one line in at most
# REPORT_LINE_MAX characters: what the site keeps and shows of a report.
REPORT_MAX_BYTES = 20_000
REPORT_LINE_MAX = 1000
# Splits a phase accepts, and the one it requires (None: any one will do).
PHASE_SPLITS = {
    "validation": ({Split.TRAIN, Split.VAL}, Split.VAL),
    "test": ({Split.TRAIN, Split.VAL, Split.TEST}, Split.TEST),
    "post": ({Split.TRAIN, Split.VAL, Split.TEST}, None),
}
PHASE_LABELS = {"validation": "Validation phase", "test": "Test phase", "post": "Post-challenge"}


@dataclass(frozen=True)
class DatasetFacts:
    """What checking a dataset's prediction files needs to know of it: all public.

    ``rows``: examples per split (the inputs' rows), ``{"train": 6, "val": 4, "test": 5}``;
    the file of a split missing here (no file stored yet) is not checked, as on the site.
    """

    name: str
    task: str
    rows: Mapping[str, int | None] = field(default_factory=dict)
    allow_samples: bool = True
    min_quantile_gap: float = 0.0
    classes: int | None = None  # multiclass: L (None: the first line's count, spec §7)
    allow_ensembles: bool = True

    def __post_init__(self):
        object.__setattr__(self, "task", get_task(self.task).name)

    @classmethod
    def from_json(cls, data: Mapping) -> DatasetFacts:
        """From the API's ``check`` object of a dataset (see /tmp/s/check_interface.md):
        {"name", "task", "rows": {"train": n, …}, "allow_samples", "min_quantile_gap",
        "classes", "allow_ensembles"} (the last two absent before multiclass datasets)."""
        classes = data.get("classes")
        return cls(
            name=data["name"],
            task=data["task"],
            rows={split: n for split, n in dict(data.get("rows") or {}).items()},
            allow_samples=bool(data.get("allow_samples", True)),
            min_quantile_gap=float(data.get("min_quantile_gap", 0.0)),
            classes=None if classes is None else int(classes),
            allow_ensembles=bool(data.get("allow_ensembles", True)),
        )

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "task": str(self.task),
            "rows": {str(split): n for split, n in self.rows.items()},
            "allow_samples": self.allow_samples,
            "min_quantile_gap": self.min_quantile_gap,
            "classes": self.classes,
            "allow_ensembles": self.allow_ensembles,
        }

    @property
    def options(self) -> ScoringOptions:
        return ScoringOptions(
            allow_samples=self.allow_samples,
            min_quantile_gap=self.min_quantile_gap,
            classes=self.classes,
            allow_ensembles=self.allow_ensembles,
        )


def check_upload(
    source,
    *,
    datasets: Sequence[DatasetFacts],
    dataset: str | None = None,
    phase: str | None = None,
    test_start: datetime | None = None,
    limits: Limits | None = None,
    time_limit: float | None = None,
) -> list[str]:
    """Every problem the site would report for the zip ``source``, as its report lines;
    [] when it finds none.

    ``source``: a path or a seekable binary file. ``datasets``: every dataset of the
    challenge. ``dataset``: the one the submission names (None: read from the file names,
    as the site does when none is named). ``phase`` ("validation", "test" or "post") and
    ``test_start``: the splits the phase accepts are checked too. ``limits``: the site's
    zip limits. ``time_limit``: seconds to spend reading prediction files, at most.
    """
    limits = limits or Limits()
    by_name = {facts.name: facts for facts in datasets}
    if dataset and dataset not in by_name:
        return [f"no dataset {dataset!r}; choose one of {', '.join(by_name)}"]
    stream, close = (open(source, "rb"), True) if _is_path(source) else (source, False)  # noqa: SIM115
    try:
        size = stream.seek(0, os.SEEK_END)
        stream.seek(0)
        try:
            with open_zip(stream, size=size, limits=limits) as archive:
                contents = inspect(
                    archive,
                    dataset_name=dataset or None,
                    limits=limits,
                    dataset_names=list(by_name),
                )
                verify(archive, contents)
                facts = by_name.get(contents.dataset_name)
                if facts is None:
                    return unknown_dataset(contents, list(by_name))
                if phase is not None and (problems := check_phase(contents, phase, test_start)):
                    return problems
                deadline = None if time_limit is None else time.monotonic() + time_limit
                return bounded_report(check_files(archive, contents, facts, deadline=deadline))
        except ArchiveError as error:
            return error.problems
    finally:
        if close:
            stream.close()


def _is_path(source) -> bool:
    return isinstance(source, str | os.PathLike)


def unknown_dataset(contents: Contents, names: Sequence[str]) -> list[str]:
    known = f"its datasets are {', '.join(names)}" if names else "it has none yet"
    return [
        f"{member.name}: this challenge has no dataset {contents.dataset_name!r}; " + known
        for member in contents.members.values()
    ]


def check_phase(contents: Contents, phase: str, test_start: datetime | None) -> list[str]:
    """The splits the phase does not accept, and the one it requires if missing."""
    if phase not in PHASE_SPLITS:
        return []
    allowed, required = PHASE_SPLITS[phase]
    begins = f", which begins {test_start:%d %b %Y %H:%M} UTC" if test_start else ""
    problems = [
        f"{member.name}: test predictions are accepted from the test phase{begins}"
        for split, member in contents.members.items()
        if split not in allowed
    ]
    if required is not None and required not in contents.members:
        found = ", ".join(m.name for m in contents.members.values())
        problems.append(
            f"the {PHASE_LABELS[phase].lower()} needs "
            f"{contents.dataset_name}_{required}_predict.txt (the zip holds {found})"
        )
    return problems


def check_files(
    archive, contents: Contents, facts: DatasetFacts, *, deadline: float | None = None
) -> list[str]:
    """Every format problem of the zip's prediction files, split by split (the zip's
    damaged members too); a split of unknown rows is left unchecked.

    Each file is streamed: a member of any size (a bomb of one line, of blank lines, of
    too many rows) costs the readers' blocks, not its size. Past ``deadline``
    (time.monotonic()) reading stops: the problems found so far are reported, none if
    there were none.
    """
    lines: list[str] = []
    options = facts.options
    for split, member in contents.members.items():
        rows = facts.rows.get(str(split))
        if rows is None:
            continue
        try:
            with open_member(archive, member) as stream:
                lines.extend(
                    check_file(
                        stream,
                        path=member.name,
                        task=facts.task,
                        rows=rows,
                        options=options,
                        deadline=deadline,
                    )
                )
        except ArchiveError as error:
            lines.extend(error.problems)
    return lines


class _TimeUp(Exception):
    pass


class _Timed:
    """A binary stream that stops being readable at ``deadline``."""

    def __init__(self, stream, deadline: float):
        self._stream = stream
        self._deadline = deadline

    def read(self, size: int = -1) -> bytes:
        if time.monotonic() > self._deadline:
            raise _TimeUp
        return self._stream.read(size)

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._stream.seek(offset, whence)


def check_file(
    source,
    *,
    path: str,
    task: str,
    rows: int,
    options: ScoringOptions | None = None,
    deadline: float | None = None,
) -> list[str]:
    """The report lines of one prediction file of ``rows`` examples ([] if valid): what
    scoring it would report, found without any target."""
    if deadline is not None:
        source = _Timed(source, deadline)
    spec = get_task(task)
    reader = RowReader(source, path, max_numbers=MAX_LINE_NUMBERS)
    problems = reader.problems
    try:
        spec.check(source, path=path, options=options, n_expected=rows, reader=reader)
    except ScoringError as error:
        return error.lines
    except _TimeUp:
        problems.stop()  # what was found holds; the rest of the file is unknown
        return problems.error().lines if problems else []
    return []


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
