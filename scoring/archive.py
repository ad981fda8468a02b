"""Reading a submission zip defensively: any bytes give either its contents or clear problems.

Nothing is ever extracted to disk: members are read into memory, each read bounded
by the size the archive declares (the zip module stops there and checks the CRC).
The site checks every upload with this module, and participants' machines can run it
too (scoring.upload_check): the same problems, in the same words.
"""

from __future__ import annotations

import io
import re
import struct
import zipfile
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from functools import partial

from .filenames import suggest
from .zipdirectory import (
    UnreadableEndRecord,
    check_end_record,
    read_end_record,
    too_many_entries,
)


class Split(StrEnum):
    """A dataset split, as in the prediction file names (equal to the site's splits)."""

    TRAIN = "train"
    VAL = "val"
    TEST = "test"

    @property
    def label(self) -> str:
        return {"train": "Training", "val": "Validation", "test": "Test"}[self.value]


PREDICTION_RE = re.compile(r"^(?P<name>[a-z][a-z0-9-]*)_(?P<split>train|val|test)_predict\.txt$")
TARGETS_RE = re.compile(r"^(?P<name>.+)_(?P<split>train|val|test)_targets\.txt$", re.IGNORECASE)
ARCHIVE_SUFFIXES = (".zip", ".gz", ".tgz", ".tar", ".bz2", ".xz", ".7z", ".rar")
OS_JUNK = {"__MACOSX", "Thumbs.db", "desktop.ini"}
SUPPORTED_METHODS = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA}
SPLIT_ORDER = [Split.TRAIN, Split.VAL, Split.TEST]
# The compression ratio limit applies once the members are this large together, so
# a small file of one repeated line (which deflates 500:1) is never mistaken for a bomb.
RATIO_APPLIES_ABOVE = 8 * 1024 * 1024
CHUNK = 1 << 20
# Member names in messages: a longer one is shown as "…" and its last characters.
NAME_SHOWN = 100
# Any one problem message, whatever it quotes, is cut to this many characters.
MESSAGE_MAX = 1000
# What the zip module raises on damaged archives (BadZipFile, and lower-level errors
# it lets through from struct, zlib, bz2 and lzma).
READ_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    zlib.error,
    struct.error,
    EOFError,
    OSError,
    ValueError,
    NotImplementedError,
    UnicodeDecodeError,
    IndexError,
    KeyError,
    RuntimeError,
)


class ArchiveError(Exception):
    """The upload is not an acceptable submission zip; ``problems`` says every reason."""

    def __init__(self, problems: list[str]):
        self.problems = [bounded(problem) for problem in problems]
        super().__init__("\n".join(self.problems))


def short_name(name: str) -> str:
    """A member name for messages: a name longer than NAME_SHOWN characters becomes "…"
    and its last NAME_SHOWN characters (where the file's own name is)."""
    return name if len(name) <= NAME_SHOWN + 20 else "…" + name[-NAME_SHOWN:]


def bounded(message: str, limit: int = MESSAGE_MAX) -> str:
    """``message`` cut to ``limit`` characters, marked with "…" where it was cut."""
    return message if len(message) <= limit else message[: limit - 1] + "…"


@dataclass(frozen=True)
class Limits:
    """What a submission zip may hold; the defaults are the site's (its settings
    SUBMISSION_MAX_UPLOAD_BYTES, …_UNCOMPRESSED_BYTES, …_COMPRESSION_RATIO, …_ZIP_ENTRIES)."""

    upload_bytes: int = 50 * 1024 * 1024
    uncompressed_bytes: int = 256 * 1024 * 1024
    ratio: int = 100
    entries: int = 100


@dataclass(frozen=True)
class Member:
    split: Split
    info: zipfile.ZipInfo

    @property
    def name(self) -> str:
        """The member's path as messages and the scores show it (long ones shortened)."""
        return short_name(self.info.filename)


@dataclass(frozen=True)
class Contents:
    """The prediction files of one dataset, by split (in the order train, val, test)."""

    dataset_name: str
    members: dict[Split, Member]

    @property
    def splits(self) -> list[Split]:
        return list(self.members)


def megabytes(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB"


def expected_names(dataset_name: str | None) -> str:
    name = dataset_name or "DATASET"
    return ", ".join(f"{name}_{split}_predict.txt" for split in SPLIT_ORDER)


def open_zip(fileobj, *, size: int, limits: Limits) -> zipfile.ZipFile:
    """The upload as a ZipFile, or ArchiveError saying what it is instead.

    The zip module reads the whole central directory, as large as the end record says,
    before anyone can count its entries; so the end record is read here first and the
    directory's size bounded by the entry limit (see check_end_record).
    """
    if size > limits.upload_bytes:
        raise ArchiveError(
            [
                f"the file is {megabytes(size)}; a submission zip may be at most "
                f"{megabytes(limits.upload_bytes)}"
            ]
        )
    if size == 0:
        raise ArchiveError(["the file is empty (0 bytes); upload a zip of your prediction files"])
    fileobj.seek(0)
    head = fileobj.read(512)
    try:
        record = read_end_record(fileobj, size)
    except (UnreadableEndRecord, OSError, struct.error):
        record = None
    if record is None:
        raise ArchiveError([_not_a_zip(head)])
    if problems := check_end_record(record, max_entries=limits.entries):
        raise ArchiveError(problems)
    fileobj.seek(0)
    try:
        return zipfile.ZipFile(fileobj)
    except READ_ERRORS:
        raise ArchiveError([_not_a_zip(head)]) from None


def _not_a_zip(head: bytes) -> str:
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")):
        return (
            "the zip is incomplete or damaged: its table of contents is missing or unreadable "
            "(was the upload cut off?); create the zip again and upload it once more"
        )
    kinds = [
        (b"\x1f\x8b", "a gzip file (.gz or .tar.gz)"),
        (b"Rar!", "a RAR archive"),
        (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
        (b"BZh", "a bzip2 file"),
        (b"\xfd7zXZ", "an xz file"),
    ]
    what = next((label for magic, label in kinds if head.startswith(magic)), None)
    if what is None and head[257:262] == b"ustar":
        what = "a tar archive"
    if what is None and _looks_like_text(head):
        what = "a text file"
    if what is None:
        return "the file is not a zip archive; upload a .zip of your prediction files"
    return f"the file is {what}, not a zip archive; put your prediction files in a .zip"


def _looks_like_text(head: bytes) -> bool:
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return all(ch.isprintable() or ch in "\r\n\t" for ch in text)


_CONTROL_CHARS = re.compile("[\x00-\x1f\x7f]")


def _escaped(match: re.Match) -> str:
    return f"\\x{ord(match[0]):02x}"


def _unsafe_name(name: str) -> str | None:
    """Why a member name is refused outright, or None."""
    if "\\" in name:
        return "a backslash in a file name (zip it with a tool that writes '/')"
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
        return "a NUL or control character in a file name"
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        return "an absolute path"
    if ".." in name.split("/"):
        return "a path that climbs out of the zip ('..')"
    return None


def _is_symlink(info: zipfile.ZipInfo) -> bool:
    return info.create_system == 3 and (info.external_attr >> 16) & 0o170000 == 0o120000


def _is_ignored(parts: list[str]) -> bool:
    """macOS resource forks, dot-files and folders, Windows thumbnails."""
    return any(part in OS_JUNK or part.startswith(".") for part in parts)


def _explain_unknown(
    base: str, path: str, dataset_name: str | None, dataset_names: Sequence[str]
) -> str:
    if (match := TARGETS_RE.match(base)) is not None:
        name = dataset_name or short_name(match["name"].lower())
        return (
            f"{path}: prediction files end in _predict.txt; rename it to "
            f"{name}_{match['split'].lower()}_predict.txt"
        )
    if base.lower().endswith(ARCHIVE_SUFFIXES):
        return f"{path}: an archive inside the zip; put the prediction files themselves in the zip"
    meant = suggest(base, [dataset_name] if dataset_name else dataset_names)
    if meant is not None:
        return f"{path}: unexpected file name; did you mean {meant}?"
    return f"{path}: unexpected file; expected {expected_names(dataset_name)}"


def _other_dataset(path: str, name: str, split: Split, dataset_name: str, others) -> str:
    """A file named for dataset ``name`` in a submission for ``dataset_name``."""
    meant = f"{dataset_name}_{split}_predict.txt"
    if name in others:  # the challenge's other dataset: a copied name, or the wrong choice
        return (
            f"{path}: named for dataset {name!r}, but this submission is for "
            f"{dataset_name!r}; did you mean {meant}? (or submit it to {name})"
        )
    if suggest(f"{name}_{split}_predict.txt", [dataset_name]) == meant:
        return (
            f"{path}: named for dataset {name!r}, but this submission is for "
            f"{dataset_name!r}; did you mean {meant}?"
        )
    return (
        f"{path}: named for dataset {name!r}, but this submission is for "
        f"{dataset_name!r}; expected {expected_names(dataset_name)}"
    )


def inspect(
    archive: zipfile.ZipFile,
    *,
    dataset_name: str | None,
    limits: Limits,
    dataset_names: Sequence[str] = (),
) -> Contents:
    """The prediction files of ``archive``; ArchiveError lists every problem.

    ``dataset_name``: the dataset the participant chose, or None to take it from the
    file names (which must then agree on one). ``dataset_names``: the challenge's
    datasets, for the names a misnamed file may have meant ("did you mean …?").
    """
    infos = archive.infolist()
    if len(infos) > limits.entries:
        raise ArchiveError([too_many_entries(len(infos), limits.entries)])
    problems: list[str] = []
    files: list[tuple[zipfile.ZipInfo, list[str]]] = []
    for info in infos:
        name = info.filename
        # zipfile cuts a name at its first NUL (orig_filename keeps it whole): checked
        # whole, "x_test_predict.txt\0.exe" is refused rather than read as the .txt.
        if (why := _unsafe_name(info.orig_filename)) is not None:
            shown = short_name(_CONTROL_CHARS.sub(_escaped, info.orig_filename))
            problems.append(f"{shown}: refused: {why}")
            continue
        if _is_symlink(info):
            problems.append(f"{short_name(name)}: refused: a symbolic link")
            continue
        parts = [part for part in name.split("/") if part not in ("", ".")]
        if info.is_dir() or not parts or _is_ignored(parts):
            continue
        files.append((info, parts))
    if not files and not problems:
        raise ArchiveError(["the zip holds no files; expected " + expected_names(dataset_name)])

    folders = {tuple(parts[:-1]) for _, parts in files}
    if len(folders) > 1 or any(len(folder) > 1 for folder in folders):
        listing = ", ".join(short_name(info.filename) for info, _ in files)
        problems.append(
            "the files must sit at the top of the zip or together in one folder; found " + listing
        )

    found: dict[tuple[str, Split], Member] = {}
    for info, parts in files:
        base, path = parts[-1], short_name(info.filename)
        match = PREDICTION_RE.match(base)
        if match is None:
            problems.append(_explain_unknown(base, path, dataset_name, dataset_names))
        elif info.flag_bits & 0x1:
            problems.append(f"{path}: encrypted (password-protected); zip it without a password")
        elif info.compress_type not in SUPPORTED_METHODS:
            problems.append(
                f"{path}: compressed with method {info.compress_type}, which cannot be read; "
                "use ordinary zip compression (deflate)"
            )
        elif (key := (match["name"], Split(match["split"]))) in found:
            problems.append(f"{path}: a second file for the {key[1].label.lower()} split")
        else:
            found[key] = Member(key[1], info)

    names = sorted({name for name, _ in found})
    if dataset_name is not None:
        problems.extend(
            _other_dataset(member.name, name, split, dataset_name, dataset_names)
            for (name, split), member in found.items()
            if name != dataset_name
        )
    elif len(names) > 1:
        problems.append(
            "one zip per dataset: the file names name the datasets "
            + ", ".join(repr(n) for n in names)
        )
    members = {split: member for (_, split), member in found.items()}
    total_size = sum(m.info.file_size for m in found.values())
    total_compressed = sum(m.info.compress_size for m in found.values())
    if total_size > limits.uncompressed_bytes:
        problems.append(
            f"the files add up to {megabytes(total_size)} uncompressed; "
            f"at most {megabytes(limits.uncompressed_bytes)} are allowed"
        )
    elif total_size > RATIO_APPLIES_ABOVE and total_size > limits.ratio * max(total_compressed, 1):
        problems.append(
            f"the files compress {total_size // max(total_compressed, 1)}:1, more than "
            f"{limits.ratio}:1 (this looks like a zip bomb)"
        )
    if problems:
        raise ArchiveError(problems)
    if not members:
        raise ArchiveError(["the zip holds no prediction files; expected " + expected_names(None)])
    ordered = {split: members[split] for split in SPLIT_ORDER if split in members}
    return Contents(dataset_name or names[0], ordered)


class MemberStream:
    """A member read as a stream (the scoring package reads it a block at a time), never
    past what it declares; a damaged member raises ArchiveError, whoever reads it."""

    def __init__(self, handle, name: str):
        self._handle = handle
        self._name = name

    def _damaged(self, error: Exception) -> ArchiveError:
        return ArchiveError([f"{self._name}: damaged, cannot be read ({_reason(error)})"])

    def read(self, size: int = -1) -> bytes:
        try:
            return self._handle.read(size)
        except READ_ERRORS as error:
            raise self._damaged(error) from None

    def seek(self, offset: int, whence: int = 0) -> int:
        try:
            return self._handle.seek(offset, whence)
        except READ_ERRORS as error:
            raise self._damaged(error) from None


class HeldArchive:
    """A zip whose small prediction files are decompressed once, when first opened, and
    then read from memory: a scoring run reads each file three times (checked, scored,
    fingerprinted), and inflating a small file again costs as much as parsing it.

    Only members that declare at most ``max_bytes`` (``total_bytes`` together) are held,
    and what is held is what the zip's reader gave (never past the declared size, its
    CRC checked); a member that cannot be read is not held, so that its next reader meets
    the same error. Anything else is read from the zip as before."""

    def __init__(self, archive: zipfile.ZipFile, *, max_bytes: int, total_bytes: int):
        self._archive = archive
        self._max_bytes = max_bytes
        self._room = total_bytes
        self._held: dict[str, bytes] = {}

    def open(self, info: zipfile.ZipInfo):
        data = self._held.get(info.filename)
        if data is None and info.file_size <= min(self._max_bytes, self._room):
            try:
                with self._archive.open(info) as handle:
                    data = handle.read(info.file_size + 1)
            except READ_ERRORS:
                data = None
            if data is not None and len(data) == info.file_size:
                self._held[info.filename] = data
                self._room -= len(data)
            else:
                data = None
        if data is None:
            return self._archive.open(info)
        return io.BytesIO(data)


@contextmanager
def open_member(archive: zipfile.ZipFile, member: Member) -> Iterator[MemberStream]:
    """The member as a :class:`MemberStream`: a file of any size costs a block of memory."""
    try:
        handle = archive.open(member.info)
    except READ_ERRORS as error:
        raise ArchiveError([f"{member.name}: damaged, cannot be read ({_reason(error)})"]) from None
    with handle:
        yield MemberStream(handle, member.name)


def verify(archive: zipfile.ZipFile, contents: Contents) -> None:
    """Decompress every prediction file (discarding the bytes) to check its CRC."""
    problems = []
    for member in contents.members.values():
        try:
            with archive.open(member.info) as handle:
                for _ in iter(partial(handle.read, CHUNK), b""):
                    pass
        except READ_ERRORS as error:
            problems.append(f"{member.name}: damaged, cannot be read ({_reason(error)})")
    if problems:
        raise ArchiveError(problems)


def _reason(error: Exception) -> str:
    text = str(error) or type(error).__name__
    return text[:200]
