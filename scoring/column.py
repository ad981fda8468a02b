"""Files of one number per line (targets, classification predictions) read in one pass.

The C parser reads such a file block after block straight into its final array:
no table per block, no copy, no concatenation. It only ever says yes or no: any
line it does not like (two numbers, text, a value out of range, a blank line
before an example, more rows than wanted) makes :func:`read_column` return None,
and the careful readers of :mod:`scoring.parse` read the file again and write
every message. A valid file is read once; a bad one costs one extra pass at most.
"""

from __future__ import annotations

import io
import mmap
import os

import numpy as np

from . import _accel
from .blocks import BLOCK_SIZE

# Bytes of a file mapped at a time (a multiple of any page size), and mapped with its
# pages in place at once (MAP_POPULATE, Linux) rather than a page fault per page.
_WINDOW = 4 << 20
_MAP_FLAGS = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)
# A blank line is allowed only at the end of a file; a file of many is left to the
# careful reader, which reports them without reading them one by one.
_MAX_BLANK_RUN = 1000


def read_column(
    source, *, low: float, high: float, capacity: int | None = None
) -> np.ndarray | None:
    """The numbers of a file holding exactly one number in [low, high] on every line
    (blank lines only at its end), or None when any line needs the careful reader.

    ``capacity`` is the most rows wanted (None: as many as the file can hold). Sources:
    bytes, a path, or a seekable binary file (read from its start); anything else
    gets None without being read.
    """
    native = _accel.native()
    if native is None:
        return None
    if isinstance(source, bytes | bytearray | memoryview):
        data = bytes(source) if isinstance(source, memoryview) else source
        if capacity is None:
            capacity = len(data) // 2 + 1  # a number and its LF take two bytes at least
        return _read_blocks(native.parse_column, iter([data]), low, high, capacity)
    if isinstance(source, str | os.PathLike):
        with open(source, "rb") as stream:
            size = os.fstat(stream.fileno()).st_size
            if capacity is None:
                capacity = size // 2 + 1
            try:
                return _read_blocks(
                    native.parse_column, _mapped(stream.fileno(), size), low, high, capacity
                )
            except (OSError, ValueError):  # a file that cannot be mapped: read it
                return _read_stream(native.parse_column, stream, low, high, capacity, size)
    if hasattr(source, "readinto") and hasattr(source, "seek"):
        source.seek(0)
        return _read_stream(native.parse_column, source, low, high, capacity, None)
    return None


def _read_stream(parse_column, stream, low, high, capacity, size):
    stream.seek(0)
    if capacity is None:
        if size is None:
            size = stream.seek(0, io.SEEK_END)
            stream.seek(0)
        capacity = size // 2 + 1
    return _read_blocks(parse_column, _chunks(stream), low, high, capacity)


def _chunks(stream):
    """Blocks of the stream ending in LF, read into one reused buffer; a line longer than
    a block yields None (the careful reader streams such lines past)."""
    buffer = bytearray(BLOCK_SIZE)
    view = memoryview(buffer)
    held = 0  # the start of a line carried over from the previous read
    while True:
        got = stream.readinto(view[held:])
        if not got:
            if held:
                yield bytes(view[:held]) + b"\n"  # a last line without its LF
            return
        filled = held + got
        cut = buffer.rfind(b"\n", 0, filled) + 1
        if cut == 0:
            if filled == len(buffer):
                yield None
                return
            held = filled
            continue
        yield (buffer, cut)
        held = filled - cut
        buffer[:held] = buffer[cut:filled]  # (same length: the buffer never resizes)


def _mapped(fd: int, size: int):
    """Blocks of a file ending in LF, each a window of the file mapped into memory: the
    kernel's page cache read in place, not copied into a buffer. A window is unmapped
    before the next is mapped, so that no more than one counts in the resident size."""
    start = 0  # the first byte not yet parsed: the start of a line
    while start < size:
        offset = start - start % mmap.ALLOCATIONGRANULARITY
        length = min(_WINDOW, size - offset)
        window = mmap.mmap(fd, length, flags=_MAP_FLAGS, prot=mmap.PROT_READ, offset=offset)
        try:
            at = start - offset
            cut = window.rfind(b"\n", at) + 1
            if offset + length == size and cut < length:  # a last line without its LF
                if cut > at:
                    yield from _view(window, at, cut)
                yield bytes(window[max(cut, at) :]) + b"\n"
                return
            if cut == 0:
                yield None  # a line longer than a window: the careful reader's
                return
            yield from _view(window, at, cut)
            start = offset + cut
        finally:
            window.close()


def _view(window: mmap.mmap, start: int, stop: int):
    """window[start:stop] without a copy, released once used (a mapping with a view
    still open cannot be closed)."""
    with memoryview(window) as whole, whole[start:stop] as view:
        yield view


def _read_blocks(parse_column, blocks, low, high, capacity) -> np.ndarray | None:
    out = np.empty(capacity)  # pages untouched past the rows read cost no memory
    n = blank_run = 0
    for block in blocks:
        if block is None:
            return None
        buffer, length = block if isinstance(block, tuple) else (block, len(block))
        if length == 0:
            continue
        if buffer[length - 1] != 10:  # bytes without a final LF: its last line apart
            last = buffer.rfind(b"\n", 0, length) + 1
            if last:
                read = parse_column(buffer, last, out, n, low, high, blank_run)
                if read is None:
                    return None
                n, blank_run = read
            buffer = bytes(buffer[last:length]) + b"\n"
            length = len(buffer)
        read = parse_column(buffer, length, out, n, low, high, blank_run)
        if read is None or read[1] > _MAX_BLANK_RUN:
            return None
        n, blank_run = read
    return out[:n] if n else None
