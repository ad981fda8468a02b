"""Hostile and malformed zips: each gets a clear message, none an exception or a 500."""

import gzip
import io
import random
import struct
import zipfile

import pytest

from challenge_site.submissions.archive import Limits
from challenge_site.submissions.services import Rejected, read_upload
from tests.factories import make_zip

from .helpers import gaussian_lines, upload_file

VAL = gaussian_lines(4)


def problems(data: bytes, *, dataset_name="gaze") -> list[str]:
    with pytest.raises(Rejected) as caught:
        read_upload(upload_file(data), dataset_name=dataset_name, limits=Limits.from_settings())
    assert set(caught.value.errors) == {"file"}
    return caught.value.errors["file"]


def accepted(data: bytes, *, dataset_name="gaze"):
    return read_upload(upload_file(data), dataset_name=dataset_name, limits=Limits.from_settings())


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


def test_total_uncompressed_size_limit(settings):
    settings.SUBMISSION_MAX_UNCOMPRESSED_BYTES = 50
    data = make_zip({"gaze_val_predict.txt": VAL, "gaze_train_predict.txt": VAL})
    assert problems(data) == [
        f"the files add up to {2 * len(VAL) / 1e6:.1f} MB uncompressed; at most 0.0 MB are allowed"
    ]


def test_too_many_entries_are_refused_before_reading_the_directory():
    data = make_zip({f"junk/{i}": b"" for i in range(100_000)}, compression=zipfile.ZIP_STORED)
    assert problems(data) == ["the zip holds 100000 entries; at most 100 are allowed"]


def test_entry_limit_is_a_setting(settings):
    settings.SUBMISSION_MAX_ZIP_ENTRIES = 2
    data = make_zip({"gaze_val_predict.txt": VAL, "a/": b"", "b/": b""})
    assert problems(data) == ["the zip holds 3 entries; at most 2 are allowed"]


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


def test_random_damage_never_escapes_as_an_exception():
    """Truncations and flipped bytes anywhere: accepted or Rejected, nothing else."""
    original = make_zip(
        {"res/gaze_val_predict.txt": gaussian_lines(50), "res/gaze_train_predict.txt": VAL}
    )
    rng = random.Random(20040)
    outcomes = set()
    for _ in range(400):
        data = bytearray(original)
        if rng.random() < 0.3:
            data = data[: rng.randrange(len(data))]
        for _ in range(rng.randint(1, 8)):
            if data:
                data[rng.randrange(len(data))] = rng.randrange(256)
        try:
            accepted(bytes(data))
            outcomes.add("accepted")
        except Rejected as rejected:
            assert rejected.errors["file"] and all(rejected.errors["file"])
            outcomes.add("rejected")
    assert outcomes == {"accepted", "rejected"}


# --- The end record is read before the zip module walks the directory -----------------


def central_directory(count: int, *, name_length: int = 6) -> bytes:
    header = struct.pack(
        "<4s4B4HL2L5H2L", b"PK\x01\x02", 20, 3, 20, 0, 0, 0, 0, 0, 0, 0, 0, name_length, 0, 0, 0,
        0, 0, 0,
    )  # fmt: skip
    return b"".join(header + b"%0*d" % (name_length, i) for i in range(count))


def end_record(*, entries: int, size: int, offset: int = 0, comment: bytes = b"") -> bytes:
    return struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, entries, entries, size, offset,
                       len(comment)) + comment  # fmt: skip


def zip64_end(*, entries: int, size: int, offset: int) -> bytes:
    """A zip64 end record and its locator, then a plain end record that defers to them."""
    record = struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, entries, entries, size,
                         offset)  # fmt: skip
    locator = struct.pack("<4sLQL", b"PK\x06\x07", 0, offset + size, 1)
    plain = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF,
                        0xFFFFFFFF, 0)  # fmt: skip
    return record + locator + plain


@pytest.fixture
def zip_module_must_not_run(monkeypatch):
    """Fails the test if the zip module is asked to read the directory."""
    from challenge_site.submissions import archive

    def refuse(*args, **kwargs):
        raise AssertionError("zipfile.ZipFile was called")

    monkeypatch.setattr(archive.zipfile, "ZipFile", refuse)


def test_an_end_record_that_understates_the_directory_is_refused_unread(zip_module_must_not_run):
    directory = central_directory(20_000)  # 1.04 MB of entries
    assert problems(directory + end_record(entries=1, size=len(directory))) == [
        "the zip is damaged or forged: its end record lists 1 entry, but its table of "
        "contents takes 1.0 MB; create the zip again"
    ]


def test_an_end_record_that_overstates_the_entries_is_refused(zip_module_must_not_run):
    directory = central_directory(2)
    assert problems(directory + end_record(entries=50, size=len(directory))) == [
        "the zip is damaged or forged: its end record lists 50 entries, but its table of "
        "contents takes 104 bytes; create the zip again"
    ]


def test_a_directory_larger_than_the_entry_limit_needs_is_refused(zip_module_must_not_run):
    # 100 entries of 4,000-character names: consistent, but 404,600 bytes for 100 entries.
    directory = central_directory(100, name_length=4000)
    assert problems(directory + end_record(entries=100, size=len(directory))) == [
        "the zip's table of contents takes 404600 bytes; a zip of at most 100 entries needs "
        "at most 209400 bytes (are the file names or their extra fields very long?)"
    ]


def test_the_zip64_end_record_is_read_too(zip_module_must_not_run):
    directory = central_directory(20_000)
    data = directory + zip64_end(entries=1, size=len(directory), offset=0)
    assert problems(data) == [
        "the zip is damaged or forged: its end record lists 1 entry, but its table of "
        "contents takes 1.0 MB; create the zip again"
    ]
    many = directory + zip64_end(entries=20_000, size=len(directory), offset=0)
    assert problems(many) == ["the zip holds 20000 entries; at most 100 are allowed"]


def test_an_end_record_behind_a_comment_is_found(zip_module_must_not_run):
    directory = central_directory(20_000)
    data = directory + end_record(entries=1, size=len(directory), comment=b"made by hand")
    assert problems(data)[0].startswith("the zip is damaged or forged")


def test_a_zip64_archive_with_an_honest_record_is_accepted():
    """Rewritten with a zip64 end record (as zip writers do past 65,535 entries)."""
    data = make_zip({"gaze_val_predict.txt": VAL})
    at = data.rfind(b"PK\x05\x06")
    _, _, _, entries, _, size, offset, _ = struct.unpack("<4s4H2LH", data[at : at + 22])
    rewritten = data[:at] + zip64_end(entries=entries, size=size, offset=offset)
    with zipfile.ZipFile(io.BytesIO(rewritten)) as archive:
        assert archive.namelist() == ["gaze_val_predict.txt"]
    assert accepted(rewritten).splits == ["val"]


def test_the_end_record_is_found_where_the_zip_module_finds_it():
    """read_end_record mirrors zipfile._EndRecData, signatures in odd places included."""
    from scoring.zipdirectory import read_end_record

    plain = make_zip({"gaze_val_predict.txt": VAL})
    at = plain.rfind(b"PK\x05\x06")
    body, record = plain[:at], plain[at : at + 20]
    samples = [
        plain,
        body + record + struct.pack("<H", 5) + b"PK\x05\x06",  # a signature in the comment
        body + record + struct.pack("<H", 3) + b"abc",
        body + record[:16] + b"PK\x05\x06" + b"\x00\x00",  # offset field holds a signature
        plain + b"PK\x05\x06",  # a stray signature too near the end
        plain[:-1],
        b"PK\x05\x06" + bytes(18),
        bytes(30),
        plain[: len(plain) // 2],
    ]
    for data in samples:
        expected = zipfile._EndRecData(io.BytesIO(data))
        found = read_end_record(io.BytesIO(data), len(data))
        if expected is None:
            assert found is None
        else:
            assert (found.entries, found.size, found.offset) == (
                expected[4],
                expected[5],
                expected[6],
            )


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


def test_near_miss_names_say_which_name_they_meant():
    """The challenge's datasets are the names a misnamed file may have meant."""

    def refused(files, *, dataset_name):
        with pytest.raises(Rejected) as caught:
            read_upload(
                upload_file(make_zip(files)),
                dataset_name=dataset_name,
                limits=Limits.from_settings(),
                dataset_names=["gaze", "catalysis"],
            )
        return caught.value.errors["file"]

    assert refused({"Catalysis_Validation_Predictions.csv": VAL}, dataset_name=None) == [
        "Catalysis_Validation_Predictions.csv: unexpected file name; did you mean "
        "catalysis_val_predict.txt?"
    ]
    assert refused({"results/GAZE_TEST.txt": VAL}, dataset_name="gaze") == [
        "results/GAZE_TEST.txt: unexpected file name; did you mean gaze_test_predict.txt?"
    ]
    assert refused({"catalysis_val_predict.txt": VAL}, dataset_name="gaze") == [
        "catalysis_val_predict.txt: named for dataset 'catalysis', but this submission is "
        "for 'gaze'; did you mean gaze_val_predict.txt? (or submit it to catalysis)"
    ]
