"""scoring.archive: hostile and malformed zips, each with a clear message and none with
an exception; the site (tests/submissions/test_archive.py) and a participant's machine
(scoring.upload_check) read uploads through these functions."""

import gzip
import io
import struct
import zipfile

import numpy as np
import pytest

from scoring.archive import ArchiveError, HeldArchive, Limits, inspect, open_zip, verify


def gaussian_lines(rows: int, *, seed: int = 1) -> bytes:
    rng = np.random.default_rng(seed)
    return "".join(
        f"1 {m:.6g} {v:.6g}\n"
        for m, v in zip(rng.normal(size=rows), 0.5 + rng.random(rows), strict=True)
    ).encode()


VAL = gaussian_lines(4)


def make_zip(files: dict[str, bytes], *, compression=zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


LIMITS = Limits()  # the defaults are the site's


def accepted(data: bytes, *, dataset_name="gaze"):
    """The contents of an upload, read as the site reads it."""
    with open_zip(io.BytesIO(data), size=len(data), limits=LIMITS) as archive:
        contents = inspect(archive, dataset_name=dataset_name, limits=LIMITS)
        verify(archive, contents)
    return contents


def problems(data: bytes, *, dataset_name="gaze") -> list[str]:
    with pytest.raises(ArchiveError) as caught:
        accepted(data, dataset_name=dataset_name)
    return caught.value.problems


def zip_with(infos: list[tuple[zipfile.ZipInfo, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for info, data in infos:
            archive.writestr(info, data)
    return buffer.getvalue()


def patch_headers(data: bytes, *, local_offset: int, central_offset: int, value: int) -> bytes:
    """Overwrite a 2-byte field in every local header and central directory entry."""
    out = bytearray(data)
    for signature, offset in ((b"PK\x03\x04", local_offset), (b"PK\x01\x02", central_offset)):
        at = out.find(signature)
        while at >= 0:
            (old,) = struct.unpack_from("<H", out, at + offset)
            struct.pack_into("<H", out, at + offset, value(old) if callable(value) else value)
            at = out.find(signature, at + 4)
    return bytes(out)


def test_plain_zip_at_the_top_is_accepted():
    contents = accepted(make_zip({"gaze_val_predict.txt": VAL, "gaze_train_predict.txt": b"x"}))
    assert contents.dataset_name == "gaze"
    assert contents.splits == ["train", "val"]  # train, val, test order whatever the zip order
    assert contents.members["val"].name == "gaze_val_predict.txt"


def test_one_top_level_folder_and_os_junk_are_fine():
    data = make_zip(
        {
            "results/": b"",
            "results/gaze_val_predict.txt": VAL,
            "__MACOSX/results/._gaze_val_predict.txt": b"\x00\x05\x16\x07",
            "results/.DS_Store": b"\x00\x00\x00\x01Bud1",
            ".hidden/notes.txt": b"secret",
            "results/Thumbs.db": b"junk",
        }
    )
    contents = accepted(data)
    assert contents.members["val"].name == "results/gaze_val_predict.txt"


def test_dataset_is_inferred_from_the_file_names():
    assert (
        accepted(make_zip({"gaze_val_predict.txt": VAL}), dataset_name=None).dataset_name == "gaze"
    )


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("../gaze_val_predict.txt", "refused: a path that climbs out of the zip ('..')"),
        ("results/../../gaze_val_predict.txt", "refused: a path that climbs out of the zip ('..')"),
        ("/etc/gaze_val_predict.txt", "refused: an absolute path"),
        ("C:/temp/gaze_val_predict.txt", "refused: an absolute path"),
        ("results\\gaze_val_predict.txt", "refused: a backslash in a file name"),
    ],
)
def test_dangerous_names_are_refused(name, reason):
    data = zip_with(
        [(zipfile.ZipInfo(name), VAL), (zipfile.ZipInfo("gaze_train_predict.txt"), VAL)]
    )
    found = problems(data)
    assert len(found) == 1 and found[0].startswith(f"{name}: {reason}")


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("gaze_val_predict.txt\x00.exe", "gaze_val_predict.txt\\x00.exe"),
        ("gaze_val_predict.txt\x1b[2J", "gaze_val_predict.txt\\x1b[2J"),
        ("gaze\x7f_val_predict.txt", "gaze\\x7f_val_predict.txt"),
    ],
)
def test_nul_and_control_characters_in_names_are_refused(name, shown):
    # zipfile cuts a name at NUL when it writes one: write a stand-in, then patch the bytes.
    stand_in = name.replace("\x00", "Z")
    data = zip_with(
        [(zipfile.ZipInfo(stand_in), VAL), (zipfile.ZipInfo("gaze_train_predict.txt"), VAL)]
    )
    data = data.replace(stand_in.encode(), name.encode())
    if "\x00" in name:  # read back, zipfile itself cuts the name there
        assert zipfile.ZipFile(io.BytesIO(data)).infolist()[0].filename == "gaze_val_predict.txt"
    assert problems(data) == [f"{shown}: refused: a NUL or control character in a file name"]


def test_symlink_entry_is_refused():
    link = zipfile.ZipInfo("gaze_val_predict.txt")
    link.create_system = 3
    link.external_attr = 0o120777 << 16
    data = zip_with([(link, b"/etc/passwd")])
    assert problems(data) == ["gaze_val_predict.txt: refused: a symbolic link"]


def test_zip_bomb_by_compression_ratio():
    data = make_zip({"gaze_val_predict.txt": b"1 0 1\n" * 2_000_000})  # 12 MB of one line
    assert len(data) < 100_000
    (message,) = problems(data)
    assert message.startswith("the files compress ")
    assert message.endswith(":1, more than 100:1 (this looks like a zip bomb)")


def test_small_repetitive_file_is_not_a_bomb():
    data = make_zip({"gaze_val_predict.txt": b"   5.0000000e-01\n" * 20_000})
    assert len(data) * 300 < 20_000 * 17  # compresses far more than 100:1 ...
    assert accepted(data).splits == ["val"]  # ... but is small, so it is fine


def test_nested_zip_is_named():
    inner = make_zip({"gaze_val_predict.txt": VAL})
    assert problems(make_zip({"predictions.zip": inner})) == [
        "predictions.zip: an archive inside the zip; put the prediction files themselves in the zip"
    ]


def test_encrypted_member():
    data = patch_headers(
        make_zip({"gaze_val_predict.txt": VAL}),
        local_offset=6,
        central_offset=8,
        value=lambda flags: flags | 0x1,
    )
    assert problems(data) == [
        "gaze_val_predict.txt: encrypted (password-protected); zip it without a password"
    ]


def test_unsupported_compression_method():
    data = patch_headers(
        make_zip({"gaze_val_predict.txt": VAL}), local_offset=8, central_offset=10, value=9
    )
    assert problems(data) == [
        "gaze_val_predict.txt: compressed with method 9, which cannot be read; "
        "use ordinary zip compression (deflate)"
    ]


def test_truncated_upload():
    data = make_zip({"gaze_val_predict.txt": gaussian_lines(200)})
    (message,) = problems(data[: len(data) // 2])
    assert message.startswith("the zip is incomplete or damaged: its table of contents is missing")


def test_corrupt_member_fails_its_crc():
    data = bytearray(make_zip({"gaze_val_predict.txt": VAL}, compression=zipfile.ZIP_STORED))
    at = data.find(VAL[:10])
    data[at] ^= 0x01
    (message,) = problems(bytes(data))
    assert message.startswith("gaze_val_predict.txt: damaged, cannot be read (Bad CRC-32")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "the file is empty (0 bytes); upload a zip of your prediction files"),
        (
            b"1 0.5 1\n1 0.2 1\n",
            "the file is a text file, not a zip archive; put your prediction files in a .zip",
        ),
        (
            gzip.compress(b"1 0.5 1\n", mtime=0),  # the same bytes in every process (xdist)
            "the file is a gzip file (.gz or .tar.gz), not a zip archive; "
            "put your prediction files in a .zip",
        ),
        (
            b"Rar!\x1a\x07\x00" + bytes(40),
            "the file is a RAR archive, not a zip archive; put your prediction files in a .zip",
        ),
        (
            bytes(range(256)),
            "the file is not a zip archive; upload a .zip of your prediction files",
        ),
    ],
)
def test_not_a_zip(data, message):
    assert problems(data) == [message]


def test_empty_zip():
    assert problems(make_zip({})) == [
        "the zip holds no files; expected gaze_train_predict.txt, gaze_val_predict.txt, "
        "gaze_test_predict.txt"
    ]
    assert problems(make_zip({"__MACOSX/._x": b"", "folder/": b""})) == [
        "the zip holds no files; expected gaze_train_predict.txt, gaze_val_predict.txt, "
        "gaze_test_predict.txt"
    ]


def test_targets_file_gets_a_rename_hint_and_unknown_files_are_named():
    data = make_zip(
        {
            "gaze_val_targets.txt": VAL,
            "notes.txt": b"hello",
            "gaze_val_predict.csv": VAL,
        }
    )
    assert problems(data) == [
        "gaze_val_targets.txt: prediction files end in _predict.txt; "
        "rename it to gaze_val_predict.txt",
        "notes.txt: unexpected file; expected gaze_train_predict.txt, gaze_val_predict.txt, "
        "gaze_test_predict.txt",
        "gaze_val_predict.csv: unexpected file name; did you mean gaze_val_predict.txt?",
    ]


def test_files_for_another_dataset():
    assert problems(make_zip({"wheat_val_predict.txt": VAL})) == [
        "wheat_val_predict.txt: named for dataset 'wheat', but this submission is for 'gaze'; "
        "expected gaze_train_predict.txt, gaze_val_predict.txt, gaze_test_predict.txt"
    ]
    assert problems(
        make_zip({"wheat_val_predict.txt": VAL, "gaze_val_predict.txt": VAL}), dataset_name=None
    ) == ["one zip per dataset: the file names name the datasets 'gaze', 'wheat'"]


def test_files_in_several_folders_or_deeper():
    data = make_zip({"a/gaze_val_predict.txt": VAL, "b/gaze_train_predict.txt": VAL})
    assert problems(data) == [
        "the files must sit at the top of the zip or together in one folder; found "
        "a/gaze_val_predict.txt, b/gaze_train_predict.txt"
    ]
    assert problems(make_zip({"a/b/gaze_val_predict.txt": VAL}))[0].startswith(
        "the files must sit at the top of the zip or together in one folder"
    )


def test_the_same_split_twice():
    with pytest.warns(UserWarning, match="Duplicate name"):
        data = zip_with(
            [
                (zipfile.ZipInfo("gaze_val_predict.txt"), VAL),
                (zipfile.ZipInfo("gaze_val_predict.txt"), VAL),
            ]
        )
    assert problems(data) == ["gaze_val_predict.txt: a second file for the validation split"]


def test_long_member_names_are_shortened_in_messages():
    folder = "f" * 60_000
    data = make_zip({f"{folder}/notes.txt": b"x", f"{folder}/gaze_val_predict.txt": VAL})
    (message,) = problems(data)
    assert message == (
        "…" + f"{folder}/notes.txt"[-100:] + ": unexpected file; expected "
        "gaze_train_predict.txt, gaze_val_predict.txt, gaze_test_predict.txt"
    )
    contents = accepted(make_zip({f"{folder}/gaze_val_predict.txt": VAL}))
    assert contents.members["val"].name == "…" + f"{folder}/gaze_val_predict.txt"[-100:]


def _members(data: bytes):
    archive = zipfile.ZipFile(io.BytesIO(data))
    return archive, {info.filename: info for info in archive.infolist()}


def test_a_held_archive_inflates_a_small_member_once_and_reads_it_whole_each_time(
    monkeypatch,
):
    big = gaussian_lines(300)
    archive, infos = _members(make_zip({"gaze_val_predict.txt": VAL, "gaze_test_predict.txt": big}))
    opened = []
    real = archive.open
    monkeypatch.setattr(archive, "open", lambda info: opened.append(info.filename) or real(info))
    held = HeldArchive(archive, max_bytes=len(big) - 1, total_bytes=10**6)
    for _ in range(3):
        assert held.open(infos["gaze_val_predict.txt"]).read() == VAL
        assert held.open(infos["gaze_test_predict.txt"]).read() == big  # too big: not held
    assert opened.count("gaze_val_predict.txt") == 1
    assert opened.count("gaze_test_predict.txt") == 3
    # A total too small for the next member: it is read from the zip each time.
    archive, infos = _members(make_zip({"a.txt": VAL, "b.txt": VAL}))
    held = HeldArchive(archive, max_bytes=10**6, total_bytes=len(VAL) + 1)
    assert held.open(infos["a.txt"]).read() == held.open(infos["b.txt"]).read() == VAL
    assert list(held._held) == ["a.txt"]


def test_a_held_archive_holds_no_damaged_member_and_each_reader_meets_its_error():
    data = bytearray(make_zip({"gaze_val_predict.txt": VAL}, compression=zipfile.ZIP_STORED))
    data[data.find(VAL[:10])] ^= 0x01
    archive, infos = _members(bytes(data))
    held = HeldArchive(archive, max_bytes=10**6, total_bytes=10**6)
    for _ in range(2):
        with pytest.raises(zipfile.BadZipFile, match="Bad CRC-32"):
            held.open(infos["gaze_val_predict.txt"]).read()
    assert held._held == {}
