"""The hostile upload corpus: each case builds its bytes for a dataset and says what the
site must answer.

Used in-process by tests/submissions/test_hostile_corpus.py (Django's test client, tasks
run eagerly) and over HTTP against gunicorn and real workers by tests/stack/test_hostile.py.
A case is either *refused* in the request (400 with the message, nothing stored) or
*accepted* (its zip is sound) and then scored as *invalid* with the message in its report.
tests/submissions/test_archive.py checks the zip reader itself, case by case.
"""

from __future__ import annotations

import io
import struct
import zipfile
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

# Which marker a path-traversal entry carries: a file with it must never appear anywhere.
TRAVERSAL_MARKER = "escaped-from-the-zip"


@dataclass(frozen=True)
class Target:
    """What a case is built for: a dataset of the challenge, its validation rows, and the
    name of another dataset of the same challenge."""

    dataset: str
    val_rows: int
    other_dataset: str


@dataclass(frozen=True)
class Case:
    id: str
    build: Callable[[Target], bytes]
    # "refused": 400 in the request; "invalid": accepted, then scored as invalid.
    outcome: str
    # A substring of one of the messages (API field errors, form page, or error report).
    expected: Callable[[Target], str]
    # The API field that holds the message when refused ("file", "dataset", ...).
    field: str = "file"
    # What to send as the dataset field: the target dataset unless this says otherwise.
    dataset_field: Callable[[Target], str] | None = None
    # The form's own wording when it differs from the API's (its dataset field is a choice).
    form_expected: Callable[[Target], str] | None = None


def _zip(entries: list[tuple[zipfile.ZipInfo | str, bytes]], *, level: int = 6) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=level) as z:
        for info, data in entries:
            z.writestr(info, data)
    return buffer.getvalue()


def _val(target: Target) -> str:
    return f"{target.dataset}_val_predict.txt"


def gaussian_rows(rows: int, *, seed: int = 7) -> bytes:
    rng = np.random.default_rng(seed)
    return "".join(
        f"1 {m:.6g} {v:.6g}\n"
        for m, v in zip(rng.normal(size=rows), 0.5 + rng.random(rows), strict=True)
    ).encode()


def path_traversal(target: Target) -> bytes:
    return _zip(
        [
            (f"../../{TRAVERSAL_MARKER}/{_val(target)}", gaussian_rows(target.val_rows)),
            (f"results/../../../{TRAVERSAL_MARKER}.txt", b"1 0 1\n"),
        ]
    )


def absolute_path(target: Target) -> bytes:
    return _zip([(f"/tmp/{TRAVERSAL_MARKER}/{_val(target)}", gaussian_rows(target.val_rows))])


def zip_bomb_ratio(target: Target) -> bytes:
    """12 MB of one repeated line in a zip of about 12 KB."""
    return _zip([(_val(target), b"1 0 1\n" * 2_000_000)], level=9)


def zip_bomb_size(target: Target) -> bytes:
    """300 MB of zeros (more than the 256 MB a zip may hold) deflated to about 300 KB,
    written in chunks: the bomb never exists uncompressed here either."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        info = zipfile.ZipInfo(_val(target))
        info.compress_type = zipfile.ZIP_DEFLATED
        with z.open(info, "w", force_zip64=True) as member:
            chunk = bytes(1 << 20)
            for _ in range(300):
                member.write(chunk)
    return buffer.getvalue()


def many_entries(target: Target) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as z:
        for i in range(100_000):
            z.writestr(f"junk/{i}", b"")
        z.writestr(_val(target), gaussian_rows(target.val_rows))
    return buffer.getvalue()


def nested_zip(target: Target) -> bytes:
    inner = _zip([(_val(target), gaussian_rows(target.val_rows))])
    return _zip([("predictions.zip", inner)])


def symlink(target: Target) -> bytes:
    link = zipfile.ZipInfo(_val(target))
    link.create_system = 3  # Unix
    link.external_attr = 0o120777 << 16  # a symbolic link
    return _zip([(link, b"/etc/passwd")])


def encrypted(target: Target) -> bytes:
    """The encryption flag set in the local header and the central directory."""
    out = bytearray(_zip([(_val(target), gaussian_rows(target.val_rows))]))
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = out.find(signature)
        (flags,) = struct.unpack_from("<H", out, at + offset)
        struct.pack_into("<H", out, at + offset, flags | 0x1)
    return bytes(out)


def truncated(target: Target) -> bytes:
    data = _zip([(_val(target), gaussian_rows(max(target.val_rows, 200)))])
    return data[: len(data) // 2]


def binary_file(target: Target) -> bytes:
    """A PNG image saved under the prediction file's name."""
    rng = np.random.default_rng(3)
    return _zip([(_val(target), b"\x89PNG\r\n\x1a\n" + rng.bytes(4000))])


def utf16_file(target: Target) -> bytes:
    text = gaussian_rows(target.val_rows).decode()
    return _zip([(_val(target), text.encode("utf-16"))])


def ten_megabyte_line(target: Target) -> bytes:
    """One line of 10 MB: 1,250,000 random numbers, no newline until the end."""
    rng = np.random.default_rng(5)
    digits = rng.integers(ord("0"), ord("9") + 1, size=10_000_000, dtype=np.uint8)
    digits[::8] = ord(" ")
    return _zip([(_val(target), b"1" + digits.tobytes() + b"\n")], level=1)


def named_for_another_dataset(target: Target) -> bytes:
    return _zip([(f"{target.other_dataset}_val_predict.txt", gaussian_rows(target.val_rows))])


def unknown_dataset_in_file_names(target: Target) -> bytes:
    return _zip([("nosuchdataset_val_predict.txt", gaussian_rows(target.val_rows))])


def valid(target: Target) -> bytes:
    return _zip([(_val(target), gaussian_rows(target.val_rows))])


LYING_ENTRIES = 900_000


def lying_end_record(target: Target) -> bytes:
    """A central directory of 900,000 entries (46.8 MB, under the 50 MB upload limit) whose
    end record claims one: the zip module would parse every entry (6.7 s and ~430 MB)
    before anyone could count them."""
    name_length = 6
    header = struct.pack(
        "<4s4B4HL2L5H2L",
        b"PK\x01\x02",  # central directory header
        20,  # made by version 2.0
        3,  # on Unix
        20,  # needs version 2.0
        0,
        0,  # flags
        0,  # stored
        0,  # time
        0,  # date
        0,  # CRC-32
        0,  # compressed size
        0,  # size
        name_length,
        0,  # extra field length
        0,  # comment length
        0,  # disk
        0,  # internal attributes
        0,  # external attributes
        0,  # local header offset
    )
    directory = b"".join(header + b"%06d" % i for i in range(LYING_ENTRIES))
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 1, 1, len(directory), 0, 0)
    return directory + end


# --- Bombs under the ratio limit ----------------------------------------------------------
# ~3 MB zips that expand to ~260 MB (a stored member of random bytes keeps the zip's ratio
# under 100:1). Each once cost the process that read it 1.4-3.5 GB (review of issue 10);
# the stack suite measures them (tests/stack/test_bombs.py), not the in-process corpus.


def _padded_bomb(dataset: str, data: bytes) -> bytes:
    pad = zipfile.ZipInfo(f"{dataset}_train_predict.txt")
    pad.compress_type = zipfile.ZIP_STORED
    rng = np.random.default_rng(0)
    return _zip([(pad, rng.bytes(2_700_000)), (f"{dataset}_val_predict.txt", data)], level=9)


def one_long_line(dataset: str) -> bytes:
    """One line of 125,000,000 numbers (250 MB)."""
    return _padded_bomb(dataset, b"0 " * 125_000_000 + b"\n")


def blank_lines(dataset: str) -> bytes:
    """260,000,000 blank lines."""
    return _padded_bomb(dataset, b"\n" * 260_000_000)


def too_many_rows(dataset: str) -> bytes:
    """130,000,000 rows of "0" (for a classification dataset)."""
    return _padded_bomb(dataset, b"0\n" * 130_000_000)


def long_folder_name(target: Target, *, length: int = 60_000, bad_lines: int = 101) -> bytes:
    """A folder name of 60,000 characters around a file of unreadable lines: each line's
    message names the file, so an unbounded report would store 6 MB."""
    folder = "f" * length
    return _zip([(f"{folder}/{_val(target)}", b"x\n" * bad_lines)], level=9)


CASES = [
    Case(
        "path-traversal",
        path_traversal,
        "refused",
        lambda t: (
            f"../../{TRAVERSAL_MARKER}/{_val(t)}: refused: a path that climbs out of the zip ('..')"
        ),
    ),
    Case(
        "absolute-path",
        absolute_path,
        "refused",
        lambda t: f"/tmp/{TRAVERSAL_MARKER}/{_val(t)}: refused: an absolute path",
    ),
    Case(
        "zip-bomb-ratio",
        zip_bomb_ratio,
        "refused",
        lambda t: ":1, more than 100:1 (this looks like a zip bomb)",
    ),
    Case(
        "zip-bomb-300mb",
        zip_bomb_size,
        "refused",
        lambda t: "the files add up to 314.6 MB uncompressed; at most 268.4 MB are allowed",
    ),
    Case(
        "100000-entries",
        many_entries,
        "refused",
        lambda t: "the zip holds 100001 entries; at most 100 are allowed",
    ),
    Case(
        "lying-end-record",
        lying_end_record,
        "refused",
        lambda t: (
            "the zip is damaged or forged: its end record lists 1 entry, but its table of "
            "contents takes 46.8 MB; create the zip again"
        ),
    ),
    Case(
        "60000-character-folder",
        long_folder_name,
        "invalid",
        lambda t: f"…{('f' * 60_000 + '/' + _val(t))[-100:]}:1: ",
    ),
    Case(
        "nested-zip",
        nested_zip,
        "refused",
        lambda t: (
            "predictions.zip: an archive inside the zip; put the prediction files "
            "themselves in the zip"
        ),
    ),
    Case("symlink", symlink, "refused", lambda t: f"{_val(t)}: refused: a symbolic link"),
    Case(
        "encrypted",
        encrypted,
        "refused",
        lambda t: f"{_val(t)}: encrypted (password-protected); zip it without a password",
    ),
    Case(
        "truncated",
        truncated,
        "refused",
        lambda t: (
            "the zip is incomplete or damaged: its table of contents is missing or "
            "unreadable (was the upload cut off?)"
        ),
    ),
    Case(
        "binary-file",
        binary_file,
        "invalid",
        lambda t: f"{_val(t)}:1: unexpected byte 0x89 at column 1; expected plain ASCII numbers",
    ),
    Case(
        "utf16-file",
        utf16_file,
        "invalid",
        lambda t: f"{_val(t)}:1: the file is UTF-16 text; save it as plain ASCII",
    ),
    Case(
        "10mb-single-line",
        ten_megabyte_line,
        "invalid",
        # The scoring package stops reading a line past its longest possible row.
        lambda t: f"{_val(t)}:1: expected at most 1001 numbers on a line, found 1250001",
    ),
    Case(
        "file-named-for-another-dataset",
        named_for_another_dataset,
        "refused",
        lambda t: (
            f"{t.other_dataset}_val_predict.txt: named for dataset "
            f"'{t.other_dataset}', but this submission is for '{t.dataset}'"
        ),
    ),
    Case(
        "file-named-for-no-dataset",
        unknown_dataset_in_file_names,
        "refused",
        lambda t: (
            "nosuchdataset_val_predict.txt: this challenge has no dataset "
            "'nosuchdataset'; its datasets are"
        ),
        dataset_field=lambda t: "",
    ),
    Case(
        "dataset-field-names-no-dataset",
        valid,
        "refused",
        lambda t: "no dataset 'nosuchdataset'; choose one of",
        field="dataset",
        dataset_field=lambda t: "nosuchdataset",
        form_expected=lambda t: (
            "Select a valid choice. nosuchdataset is not one of the available choices."
        ),
    ),
]


def case_ids() -> list[str]:
    return [case.id for case in CASES]


# --- The oracle ---------------------------------------------------------------------------
# Two test-phase uploads alike but for one value placed just above, then just below, the
# first hidden test target must look exactly alike to their participant: status, messages,
# whether they count against the limits, the API's answer and the submission's page.


@dataclass(frozen=True)
class Probe:
    id: str
    # The first row of the test file, for the value placed near the target.
    row: Callable[[str], str]


ORACLE_PROBES = [
    # The mean on either side of the target: both score, the scores stay hidden.
    Probe("gaussian-mean", lambda v: f"1 {v} 1"),
    # A first level gap of 1e-16 under a value gap of 1e300: b1 overflows, and a target
    # below q1 used to make the CRPS inf·0 = NaN (a failed upload), one above it not (a
    # scored one, with infinite losses).
    Probe("quantile-overflow", lambda v: f"0 0.5 {v} 0.5000000000000001 1e300 0.9 1.5e300"),
    # The same shape within ±1e100: scored either way.
    Probe("quantile-tiny-gap", lambda v: f"0 0.5 {v} 0.5000000000000001 1e100 0.9 1.5e100"),
]


def oracle_values(target: float) -> tuple[str, str]:
    """Just above and just below ``target``, written with the same number of characters."""
    delta = 1e-6 * max(1.0, abs(target))
    return f"{target + delta:+.17e}", f"{target - delta:+.17e}"


def oracle_zips(dataset: str, test_rows: int, target: float, probe: Probe) -> tuple[bytes, bytes]:
    """The two uploads (stored, so that their sizes are equal too) of ``probe`` for a
    dataset whose first test target is ``target``."""
    zips = []
    for value in oracle_values(target):
        lines = [probe.row(value)] + ["1 0 1"] * (test_rows - 1)
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as z:
            z.writestr(f"{dataset}_test_predict.txt", "\n".join(lines) + "\n")
        zips.append(buffer.getvalue())
    return zips[0], zips[1]
