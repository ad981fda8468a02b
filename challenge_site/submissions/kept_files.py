"""Files a worker process read or wrote lately, kept parsed in memory, bounded in bytes.

A scoring run reads the same few files as the run before it (one dataset's targets) and
reads back what it has just written (its terms, for the Ladder and probing); fetching
them again from the object store and parsing them was a good part of a worker's own
time per entry (issue 29). A key must name the content, never a place whose content can
change (a file's sha256, or a name that is never written twice), so that a kept value
is never stale. Values are numpy arrays or dicts of them; callers get copies, so that
changing what they were given never changes what is kept. Safe to share between
threads (a threaded worker or web process): the map is changed under a lock; a read
happens outside it (two threads may read the same file once each).
"""

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

import numpy as np

Value = np.ndarray | dict[str, np.ndarray]


def _arrays(value: Value) -> list[np.ndarray]:
    return list(value.values()) if isinstance(value, dict) else [value]


def _copy(value: Value) -> Value:
    if isinstance(value, dict):
        return {key: array.copy() for key, array in value.items()}
    return value.copy()


class KeptFiles:
    """A least-recently-used map of parsed files, at most ``limit`` bytes of arrays."""

    def __init__(self, limit: int):
        self.limit = limit
        self.entries: OrderedDict[Hashable, Value] = OrderedDict()
        self.held = 0  # bytes of the kept arrays
        self.lock = threading.Lock()

    def get(self, key: Hashable, read: Callable[[], Value]) -> Value:
        """The value kept for ``key``, else ``read()`` (kept if it fits); a copy."""
        found = self.peek(key)
        if found is not None:
            return found
        value = read()
        self.put(key, value)  # a copy: ``value`` itself is the caller's
        return value

    def peek(self, key: Hashable) -> Value | None:
        """A copy of the value kept for ``key``, or None."""
        with self.lock:
            found = self.entries.get(key)
            if found is None:
                return None
            self.entries.move_to_end(key)
        return _copy(found)  # kept arrays are read-only: copied outside the lock

    def put(self, key: Hashable, value: Value) -> None:
        """Keep a copy of ``value`` for ``key`` (nothing if it alone exceeds the limit),
        dropping the least recently used beyond the limit."""
        size = sum(array.nbytes for array in _arrays(value))
        if size > self.limit:
            self.forget(key)
            return
        kept = _copy(value)
        for array in _arrays(kept):
            array.flags.writeable = False  # what is kept is never changed in place
        with self.lock:
            self._drop(key)
            self.entries[key] = kept
            self.held += size
            while self.held > self.limit:
                self._drop(next(iter(self.entries)))

    def forget(self, key: Hashable) -> None:
        with self.lock:
            self._drop(key)

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()
            self.held = 0

    def _drop(self, key: Hashable) -> None:
        dropped = self.entries.pop(key, None)
        if dropped is not None:
            self.held -= sum(array.nbytes for array in _arrays(dropped))
