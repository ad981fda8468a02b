"""A multipart/form-data body streamed from disk: a large zip is never read into memory.

:class:`MultipartBody` is a file-like object (``read(size)``) of known length, which
http.client sends a block at a time; ``on_read`` sees every block (the progress bar).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from pathlib import Path


def _quote(value: str) -> str:
    # RFC 7578: quotes and line breaks in a name or filename are percent-encoded.
    return value.replace("\\", "\\\\").replace('"', "%22").replace("\r", "%0D").replace("\n", "%0A")


class MultipartBody:
    def __init__(
        self,
        fields: dict[str, str],
        *,
        file_field: str,
        path: Path,
        filename: str,
        content_type: str = "application/zip",
        on_read: Callable[[int], None] | None = None,
        boundary: str | None = None,
    ):
        self.boundary = boundary or "----puc" + secrets.token_hex(16)
        head = []
        for name, value in fields.items():
            head.append(
                f"--{self.boundary}\r\n"
                f'Content-Disposition: form-data; name="{_quote(name)}"\r\n\r\n'
                f"{value}\r\n"
            )
        head.append(
            f"--{self.boundary}\r\n"
            f'Content-Disposition: form-data; name="{_quote(file_field)}"; '
            f'filename="{_quote(filename)}"\r\n'
            f"Content-Type: {content_type}\r\n\r\n"
        )
        self._head = "".join(head).encode("utf-8")
        self._tail = f"\r\n--{self.boundary}--\r\n".encode()
        self._path = Path(path)
        self._file_size = os.path.getsize(self._path)
        self._file = None
        self._sent = 0
        self._stage = 0  # 0: head, 1: file, 2: tail, 3: done
        self._offset = 0
        self.on_read = on_read

    @property
    def content_type(self) -> str:
        return f"multipart/form-data; boundary={self.boundary}"

    def __len__(self) -> int:
        return len(self._head) + self._file_size + len(self._tail)

    @property
    def file_size(self) -> int:
        return self._file_size

    def _from_bytes(self, data: bytes, size: int) -> bytes:
        chunk = data[self._offset : self._offset + size]
        self._offset += len(chunk)
        if self._offset >= len(data):
            self._stage += 1
            self._offset = 0
        return chunk

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            size = len(self)
        out = bytearray()
        while len(out) < size and self._stage < 3:
            want = size - len(out)
            if self._stage == 0:
                out += self._from_bytes(self._head, want)
            elif self._stage == 1:
                if self._file is None:
                    self._file = open(self._path, "rb")  # noqa: SIM115 - closed at its end
                # Never more or fewer bytes than Content-Length announced.
                chunk = self._file.read(min(want, self._file_size - self._sent))
                if not chunk and self._sent < self._file_size:
                    raise OSError(f"{self._path} got shorter while it was being sent")
                self._sent += len(chunk)
                if self.on_read is not None and chunk:
                    self.on_read(len(chunk))
                if self._sent >= self._file_size:
                    self._file.close()
                    self._stage = 2
                out += chunk
            else:
                out += self._from_bytes(self._tail, want)
        return bytes(out)

    def close(self) -> None:
        if self._file is not None and not self._file.closed:
            self._file.close()
