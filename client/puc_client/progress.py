"""A one-line text progress bar on stderr for downloads and uploads.

Shown only when stderr is a terminal (or when asked with --progress), so logs and pipes
get no carriage returns. Redrawn at most every ``interval`` seconds.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

WIDTH = 30


def human_bytes(count: float) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if count < 1000 or unit == "GB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1000
    raise AssertionError("unreachable")


class Progress:
    """Counts bytes of one transfer: ``update(n)`` after each chunk, ``close()`` at the end.

    ``total`` may be None (a streamed zip has no Content-Length): the bar then shows the
    bytes and the rate only.
    """

    def __init__(
        self,
        label: str,
        total: int | None,
        *,
        stream: TextIO | None = None,
        enabled: bool | None = None,
        interval: float = 0.1,
        clock=time.monotonic,
    ):
        self.label = label
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.interval = interval
        self.clock = clock
        self.done = 0
        self.started = clock()
        self._drawn_at: float | None = None
        self._width = 0

    def line(self) -> str:
        elapsed = max(self.clock() - self.started, 1e-9)
        rate = f"{human_bytes(self.done / elapsed)}/s"
        if self.total:
            fraction = min(self.done / self.total, 1.0)
            filled = int(fraction * WIDTH)
            bar = "#" * filled + "." * (WIDTH - filled)
            amount = f"{human_bytes(self.done)}/{human_bytes(self.total)}"
            return f"{self.label} [{bar}] {fraction:4.0%} {amount} {rate}"
        return f"{self.label} {human_bytes(self.done)} {rate}"

    def _draw(self) -> None:
        text = self.line()
        # Pad over the previous line's tail: the line can get shorter (rates, units).
        self.stream.write("\r" + text.ljust(self._width))
        self.stream.flush()
        self._width = len(text)

    def update(self, count: int) -> None:
        self.done += count
        if not self.enabled:
            return
        now = self.clock()
        if self._drawn_at is None or now - self._drawn_at >= self.interval:
            self._drawn_at = now
            self._draw()

    def close(self) -> None:
        if self.enabled:
            self._draw()
            self.stream.write("\n")
            self.stream.flush()
            self.enabled = False

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
