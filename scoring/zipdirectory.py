"""The end of a zip, read before the zip module walks its central directory.

The zip module reads the whole directory, as large as the end record says, before anyone
can count its entries: 900,000 entries behind a record claiming one cost 6.7 s and 430 MB.
Here the end record (and the zip64 one it points to) is found exactly as the zip module
finds it, and the directory's size checked against the entries it claims and the entry
limit, reading a few bytes at the end of the file.
"""

import struct
from dataclasses import dataclass

# The zip format's fixed records (APPNOTE 4.3): the end-of-central-directory record
# (22 bytes, then a comment of up to 64 KB), the zip64 locator and record before it, and
# a central directory header (46 bytes, then a name, an extra field and a comment of up
# to 64 KB each).
EOCD_SIGNATURE = b"PK\x05\x06"
EOCD_SIZE = 22
EOCD_STRUCT = "<4s4H2LH"
ZIP64_LOCATOR_SIGNATURE = b"PK\x06\x07"
ZIP64_LOCATOR_SIZE = 20
ZIP64_LOCATOR_STRUCT = "<4sLQL"
ZIP64_EOCD_SIGNATURE = b"PK\x06\x06"
ZIP64_EOCD_SIZE = 56
ZIP64_EOCD_STRUCT = "<4sQ2H2L4Q"
CENTRAL_HEADER_SIZE = 46
LARGEST_CENTRAL_ENTRY = CENTRAL_HEADER_SIZE + 3 * 0xFFFF
# What one entry of a real submission zip plausibly takes in the central directory: the
# header, a name of up to 1 KB and 1 KB of extra fields and comment. The directory of a
# zip may take the entry limit times this (a single entry may be longer).
ENTRY_ALLOWANCE = CENTRAL_HEADER_SIZE + 1024 + 1024


class UnreadableEndRecord(Exception):
    """An end record the zip module would refuse outright."""


@dataclass(frozen=True)
class EndRecord:
    """What the end of a zip says of its central directory."""

    entries: int  # entries in the directory, as claimed
    size: int  # bytes of the directory
    offset: int
    zip64: bool


def read_end_record(fileobj, size: int) -> EndRecord | None:
    """The end-of-central-directory record (and the zip64 one it points to) exactly as
    the zip module finds it (zipfile._EndRecData): the last 22 bytes if they are a record
    without comment, else the last record signature in the last 64 KB + 22 bytes.
    None if there is none; UnreadableEndRecord for a zip the zip module refuses outright."""
    if size < EOCD_SIZE:
        return None
    fileobj.seek(size - EOCD_SIZE)
    record = fileobj.read(EOCD_SIZE)
    at = size - EOCD_SIZE
    if not (record[:4] == EOCD_SIGNATURE and record[-2:] == b"\0\0"):
        start = max(size - (1 << 16) - EOCD_SIZE, 0)
        fileobj.seek(start)
        data = fileobj.read(size - start)
        found = data.rfind(EOCD_SIGNATURE)
        if found < 0:
            return None
        record = data[found : found + EOCD_SIZE]
        if len(record) != EOCD_SIZE:
            return None
        at = start + found
    _, _, _, _, entries, cd_size, cd_offset, _ = struct.unpack(EOCD_STRUCT, record)
    zip64 = _read_zip64_record(fileobj, at)
    if zip64 is not None:
        return zip64
    return EndRecord(entries, cd_size, cd_offset, zip64=False)


def _read_zip64_record(fileobj, eocd_at: int) -> EndRecord | None:
    """The zip64 end record right before the locator right before the end record, as
    zipfile._EndRecData64 reads it (whatever the 32-bit fields say), or None."""
    locator_at = eocd_at - ZIP64_LOCATOR_SIZE
    if locator_at < 0:
        return None
    fileobj.seek(locator_at)
    locator = fileobj.read(ZIP64_LOCATOR_SIZE)
    if len(locator) != ZIP64_LOCATOR_SIZE:
        return None
    signature, disk, _, disks = struct.unpack(ZIP64_LOCATOR_STRUCT, locator)
    if signature != ZIP64_LOCATOR_SIGNATURE:
        return None
    record_at = locator_at - ZIP64_EOCD_SIZE
    if disk != 0 or disks > 1 or record_at < 0:
        raise UnreadableEndRecord("a zip split over several disks, or a damaged zip64 record")
    fileobj.seek(record_at)
    record = fileobj.read(ZIP64_EOCD_SIZE)
    if len(record) != ZIP64_EOCD_SIZE:
        return None
    fields = struct.unpack(ZIP64_EOCD_STRUCT, record)
    if fields[0] != ZIP64_EOCD_SIGNATURE:
        return None
    entries, cd_size, cd_offset = fields[7], fields[8], fields[9]
    return EndRecord(entries, cd_size, cd_offset, zip64=True)


def check_end_record(record: EndRecord, *, max_entries: int) -> list[str]:
    """Problems of the directory the end record describes, before anyone reads it: more
    entries than allowed, a size that does not fit the entry count (each entry takes 46
    to 46 + 3 × 65535 bytes), or more bytes than the allowed entries plausibly need."""
    entries, size = record.entries, record.size
    if entries > max_entries:
        return [too_many_entries(entries, max_entries)]
    if not entries * CENTRAL_HEADER_SIZE <= size <= entries * LARGEST_CENTRAL_ENTRY:
        return [
            f"the zip is damaged or forged: its end record lists {entries} "
            f"entr{'y' if entries == 1 else 'ies'}, but its table of contents takes "
            f"{_size(size)}; create the zip again"
        ]
    most = max_entries * ENTRY_ALLOWANCE
    if size > most:
        return [
            f"the zip's table of contents takes {_size(size)}; a zip of at most "
            f"{max_entries} entries needs at most {_size(most)} (are the file names "
            "or their extra fields very long?)"
        ]
    return []


def too_many_entries(entries: int, max_entries: int) -> str:
    return f"the zip holds {entries} entries; at most {max_entries} are allowed"


def _size(size: int) -> str:
    return f"{size} bytes" if size < 1_000_000 else f"{size / 1_000_000:.1f} MB"
