"""A file as blocks of whole lines, streamed: any line, any size, in bounded memory.

:func:`iter_blocks` reads a source (bytes, a path or a binary file) a block at a time and
yields blocks of whole lines for the tokenizer (:mod:`scoring.textfile`). A line longer
than a reader allows is never held: it streams by as a :class:`LongLine` that counts
its bytes and numbers. :class:`Tail` counts the rows of what is left of a file that has
more rows than wanted, without reading them.
"""

from __future__ import annotations

import io
import mmap
import os
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from .lines import too_many

BLOCK_SIZE = 1 << 20
# The most bytes of one line of any file (spec §1, its end of line excluded): 1,001
# numbers need far less; a longer line is streamed past and counted, not kept.
MAX_LINE_BYTES = 1 << 20


@dataclass
class LongLine:
    """A line longer than a reader's ``max_line`` bytes, counted as it streams by, not kept:
    its length in bytes and how many blank-separated tokens it holds."""

    length: int = 0
    tokens: int = 0
    _in_token: bool = False

    def add(self, piece: bytes) -> None:
        if not piece:
            return
        token = np.frombuffer(piece, dtype=np.uint8) > 32
        starts = np.count_nonzero(token[1:] & ~token[:-1]) + int(token[0] and not self._in_token)
        self.tokens += int(starts)
        self.length += len(piece)
        self._in_token = bool(token[-1])

    def message(self, max_numbers: int | None, max_line: int) -> str:
        if max_numbers is not None and self.tokens > max_numbers:
            return too_many(self.tokens, max_numbers)
        return (
            f"a line of {self.length} bytes; a line is at most {max_line} bytes "
            "(numbers separated by spaces or tabs)"
        )


def iter_blocks(
    source, block_size: int = BLOCK_SIZE, max_line: int | None = None, *, views: bool = False
) -> Iterator[bytes | memoryview | LongLine]:
    """Yield blocks of whole lines, each ending in LF, and a :class:`LongLine` in place of
    each line of more than ``max_line`` bytes (never held in memory whole).

    A block is at most about twice ``block_size`` bytes, or a single longer line.
    ``views``: a file given by its path is mapped into memory and its blocks are
    read-only memoryviews of the mapping (no copy: :func:`_mapped_blocks`), the same
    blocks as read; any other source gives bytes either way.
    """
    if views and isinstance(source, str | os.PathLike):
        yield from _mapped_blocks(source, block_size, max_line)
        return
    stream, close = _open(source)
    try:
        yield from _stream_blocks(stream, block_size, max_line)
    finally:
        if close:
            stream.close()


def _mapped_blocks(
    path, block_size: int, max_line: int | None
) -> Iterator[bytes | memoryview | LongLine]:
    """A file's blocks as views of its mapping: each window of ``block_size`` bytes up to
    its last LF, the pages behind each block handed back once the next is asked for (so
    that the mapping adds at most a few blocks to the resident size, not the file). From
    a window holding no LF on (a line of a block or more, or a last line without its LF)
    the rest is read as a stream, as :func:`iter_blocks` reads any file."""
    with open(path, "rb") as stream:
        size = os.fstat(stream.fileno()).st_size
        try:
            mapped = mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ) if size else None
        except (OSError, ValueError):  # (a file that cannot be mapped: a pipe, /proc)
            mapped = None
        if mapped is None:
            yield from _stream_blocks(stream, block_size, max_line)
            return
        view, pos, behind = memoryview(mapped), 0, 0
        while pos < size:
            cut = mapped.rfind(b"\n", pos, min(pos + block_size, size))
            if cut < 0:
                break
            yield view[pos : cut + 1]
            pos = cut + 1
            # The pages of blocks already handed on (the one just yielded may be in use).
            done = pos - pos % mmap.PAGESIZE - 4 * block_size
            if done - behind >= block_size:
                mapped.madvise(mmap.MADV_DONTNEED, behind, done - behind)
                behind = done
        if pos < size:
            stream.seek(pos)
            yield from _stream_blocks(stream, block_size, max_line)


def _stream_blocks(stream, block_size: int, max_line: int | None) -> Iterator[bytes | LongLine]:
    """:func:`iter_blocks` of an open binary stream, from where it stands."""
    carry: list[bytes] = []  # the start of the next line: pieces joined once
    carry_bytes = 0
    skipping: LongLine | None = None  # an overlong line, until its LF
    # (A chunk may be a buffer that the next read overwrites: whatever outlives the
    # iteration is copied, as slices of a bytearray are.)
    for chunk in _chunks(stream, block_size):
        if skipping is not None:
            end = chunk.find(b"\n")
            if end < 0:
                skipping.add(chunk)
                continue
            skipping.add(chunk[:end])
            yield skipping
            skipping, chunk = None, chunk[end + 1 :]
            if not chunk:
                continue
        cut = chunk.rfind(b"\n")
        if cut < 0:
            carry.append(bytes(chunk))
            carry_bytes += len(chunk)
            if max_line is not None and carry_bytes > max_line + 1:  # (+ 1: a CR)
                skipping = LongLine()
                for piece in carry:
                    skipping.add(piece)
                carry, carry_bytes = [], 0
            continue
        start = 0
        if carry_bytes > block_size or (
            max_line is not None and carry_bytes + chunk.find(b"\n") > max_line
        ):
            # A line longer than a block is a block of its own, so that the lines
            # after it make an ordinary block.
            start = chunk.find(b"\n") + 1
            yield _whole_line([*carry, chunk[: start - 1]], max_line)
            carry, carry_bytes = [], 0
        if start <= cut:
            # One copy: the slice is a view, joined once with the carried line start.
            yield b"".join([*carry, memoryview(chunk)[start : cut + 1]])
        carry = [chunk[cut + 1 :]] if cut + 1 < len(chunk) else []
        carry_bytes = len(carry[0]) if carry else 0
    if skipping is not None:
        yield skipping
    elif carry:
        yield _whole_line(carry, max_line)


def _chunks(stream, block_size: int) -> Iterator[bytes | bytearray]:
    """The stream ``block_size`` bytes at a time, read into one reused buffer when the
    stream can (fresh memory costs a page fault per page: reused, it is paid once)."""
    readinto = getattr(stream, "readinto", None)
    if readinto is None:
        while chunk := stream.read(block_size):
            yield chunk
        return
    buffer = bytearray(block_size)
    while n := readinto(buffer):
        yield buffer if n == block_size else buffer[:n]


def _whole_line(pieces: list[bytes], max_line: int | None) -> bytes | LongLine:
    """One line (without its LF) as a block of its own, or a LongLine if over ``max_line``
    (a CR before the LF belongs to the end of line, not to the line: spec §1)."""
    if max_line is not None and _line_length(pieces) > max_line:
        long = LongLine()
        for piece in pieces:
            long.add(piece)
        return long
    return b"".join([*pieces, b"\n"])


def _line_length(pieces: list[bytes]) -> int:
    """The bytes of a line held in pieces, a CR at its end not counted."""
    size = sum(map(len, pieces))
    last = next((piece for piece in reversed(pieces) if piece), b"")
    return size - 1 if last[-1:] == b"\r" else size


@dataclass
class Tail:
    """The rest of a file past the rows a reader wanted, counted but not read: its
    non-blank lines, all its lines, and the last non-blank one's number (0 if none)."""

    first_line: int
    rows: int = 0
    lines: int = 0
    last_row_line: int = 0

    def add(self, buf: bytes | LongLine) -> None:
        if isinstance(buf, LongLine):
            self.rows, self.lines = self.rows + 1, self.lines + 1
            self.last_row_line = self.first_line + self.lines - 1
            return
        b = np.frombuffer(buf, dtype=np.uint8)
        ends = np.flatnonzero(b == 10)
        ink = np.cumsum(b > 32)[ends]  # printable bytes up to each line's end
        nonblank = np.flatnonzero(np.diff(ink, prepend=0))
        if nonblank.size:
            self.last_row_line = self.first_line + self.lines + int(nonblank[-1])
        self.rows += int(nonblank.size)
        self.lines += int(ends.size)


def _open(source):
    if isinstance(source, bytes | bytearray | memoryview):
        return io.BytesIO(source), True
    if isinstance(source, str | os.PathLike):
        return open(source, "rb"), True  # noqa: SIM115 - closed by iter_blocks
    if hasattr(source, "read"):
        if hasattr(source, "seek"):
            source.seek(0)
        return source, False
    raise TypeError(f"cannot read numbers from {type(source).__name__}")
