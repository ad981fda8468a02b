"""The one switch for the C extension (``scoring/_native.c``, built by ``python -m scoring._build``).

The extension is imported here, once. Every module with a compiled path (the block and
column parsers, the classification sums, erf) asks :func:`native` at the moment it
needs the module and takes its numpy path when it gets None: when the extension is not
built (a participant's checkout without a C compiler), or while :func:`disabled` has
switched it off (the tests compare both paths; the values and messages are the same).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

try:
    from . import _native as _built
except ImportError:  # pragma: no cover - numpy serves every path, only slower
    _built = None

_enabled = True


def native() -> ModuleType | None:
    """The compiled module, or None when it is not built or is switched off."""
    return _built if _enabled else None


def built() -> bool:
    """Whether the extension is built at all (whatever the switch says)."""
    return _built is not None


@contextmanager
def disabled() -> Iterator[None]:
    """Inside the block every path is numpy's, as if the extension were not built."""
    global _enabled
    saved, _enabled = _enabled, False
    try:
        yield
    finally:
        _enabled = saved


def release_memory() -> None:
    """Freed memory back to the system, after a step that held large temporaries (the C
    extension's glibc ``malloc_trim``; nothing without it): a scoring run's peak resident
    size is then what it holds, not every temporary it ever freed."""
    if _built is not None:
        _built.release_memory()


def populate(array) -> bool:
    """Make the whole pages of a writable array resident now (the C extension's Linux
    MADV_POPULATE_WRITE; nothing changes in them); False where it cannot (no extension,
    another system, an array of less than a page): its pages are faulted as written."""
    return _built is not None and _enabled and bool(_built.populate(array))


# numpy's switch for its huge-page advice (private, documented in numpy's release notes;
# absent from some builds: then nothing is switched).
try:
    from numpy._core import multiarray as _multiarray
except ImportError:  # pragma: no cover - numpy 1
    from numpy.core import multiarray as _multiarray
_set_huge_pages = getattr(_multiarray, "_set_madvise_hugepage", None)


@contextmanager
def small_pages() -> Iterator[None]:
    """Inside the block numpy's new arrays of 4 MiB and more are not advised into 2 MiB
    pages. On this project's virtual machines the first touch of a fresh huge page costs
    up to 7 ms (measured: the normalised rows of a million-row multiclass file took 0.18 to
    0.31 s with the advice, 0.13 s without, and a whole evaluation 0.52 to 0.87 s against
    0.53 s): an evaluation writes each large array once, so it gains nothing from them."""
    if _set_huge_pages is None:
        yield
        return
    saved = _set_huge_pages(False)
    try:
        yield
    finally:
        _set_huge_pages(saved)
