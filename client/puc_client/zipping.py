"""A submission zip from a folder, from files, or an existing zip as it is.

Prediction files sit at the top of the zip under their own names
(``NAME_{train,val,test}_predict.txt``), which the site reads to know the dataset and
split. The zip is written to a temporary file, never built in memory.
"""

from __future__ import annotations

import os
import tempfile
import zipfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from . import errors
from .errors import ClientError

# What a folder may hold beside its prediction files: the dataset's own files, notes.
JUNK = {"__MACOSX", "Thumbs.db", "desktop.ini", ".DS_Store"}


@dataclass
class Prepared:
    """The zip to check and send: ``path``; ``members``: its files (zip name → source);
    ``skipped``: files of a folder left out (not prediction files)."""

    path: Path
    members: dict[str, Path] = field(default_factory=dict)
    skipped: list[Path] = field(default_factory=list)
    built: bool = False


def is_prediction_name(name: str) -> bool:
    """Files of a folder that go into the zip: anything named like a prediction file,
    near misses included (``gaze_val_predict.TXT``, ``gaze_validation_predict.csv``),
    so that the check can say what is wrong with them rather than skip them silently."""
    return "predict" in name.lower() and not name.startswith(".")


def select(paths: Sequence[Path]) -> tuple[dict[str, Path], list[Path]]:
    """(zip member name → file, skipped files) for the given files and folders."""
    members: dict[str, Path] = {}
    skipped: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.is_file() and p.name not in JUNK)
            chosen = [p for p in found if is_prediction_name(p.name)]
            skipped += [p for p in found if not is_prediction_name(p.name)]
            if not chosen:
                raise ClientError(
                    f"{path}: no prediction files in this folder "
                    "(expected files named NAME_val_predict.txt, NAME_test_predict.txt, …)",
                    errors.USAGE,
                )
        elif path.is_file():
            chosen = [path]
        else:
            raise ClientError(f"{path}: no such file or folder", errors.USAGE)
        for file in chosen:
            if file.name in members and members[file.name].resolve() != file.resolve():
                raise ClientError(
                    f"two files named {file.name}: {members[file.name]} and {file}",
                    errors.USAGE,
                )
            members[file.name] = file
    return members, skipped


def write_zip(members: dict[str, Path], target: Path) -> None:
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, source in members.items():
            archive.write(source, arcname=name)


@contextmanager
def prepared(paths: Sequence[Path | str]) -> Iterator[Prepared]:
    """The zip to check and submit for ``paths``; a zip built here is deleted afterwards.

    One ``.zip`` file is taken as it is (the site will read it as the user made it).
    """
    paths = [Path(p) for p in paths]
    if not paths:
        raise ClientError("name a folder, prediction files or a zip", errors.USAGE)
    if len(paths) == 1 and paths[0].suffix.lower() == ".zip":
        if not paths[0].is_file():
            raise ClientError(f"{paths[0]}: no such file", errors.USAGE)
        yield Prepared(paths[0])
        return
    zips = [p for p in paths if p.suffix.lower() == ".zip"]
    if zips:
        raise ClientError(
            f"{zips[0]}: give a zip on its own, or the prediction files to zip", errors.USAGE
        )
    members, skipped = select(paths)
    handle, name = tempfile.mkstemp(prefix="puc-submission-", suffix=".zip")
    os.close(handle)
    target = Path(name)
    try:
        try:
            write_zip(members, target)
        except OSError as error:
            raise ClientError(
                f"cannot zip {error.filename or 'the files'}: {error.strerror}", errors.USAGE
            ) from None
        yield Prepared(target, members, skipped, built=True)
    finally:
        target.unlink(missing_ok=True)
