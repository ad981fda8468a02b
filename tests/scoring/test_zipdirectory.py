"""scoring.zipdirectory: the end of a zip is read, and the size of its directory checked
against the entry limit, before the zip module walks the directory (scoring.archive's
open_zip asks it first)."""

import io
import struct
import zipfile

import pytest

from scoring import archive
from scoring.archive import ArchiveError, Limits, inspect, open_zip
from scoring.zipdirectory import read_end_record

VAL = b"1 0.5 1\n1 -0.25 2\n1 1.5 0.5\n1 0 1\n"


def make_zip(files: dict[str, bytes], *, compression=zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as zipped:
        for name, data in files.items():
            zipped.writestr(name, data)
    return buffer.getvalue()


def problems(data: bytes) -> list[str]:
    with pytest.raises(ArchiveError) as caught:
        accepted(data)
    return caught.value.problems


def accepted(data: bytes):
    with open_zip(io.BytesIO(data), size=len(data), limits=Limits()) as opened:
        return inspect(opened, dataset_name="gaze", limits=Limits())


def test_too_many_entries_are_refused_before_reading_the_directory():
    data = make_zip({f"junk/{i}": b"" for i in range(100_000)}, compression=zipfile.ZIP_STORED)
    assert problems(data) == ["the zip holds 100000 entries; at most 100 are allowed"]


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
