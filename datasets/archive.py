"""A dataset's released files as one zip, streamed as it is built, with a README.txt."""

import hashlib
import zipfile
from collections.abc import Iterable, Iterator
from functools import partial

from django.core.files.storage import storages

from .models import DatasetFile

CHUNK = 256 * 1024


class _Sink:
    """A write-only, unseekable file that hands its bytes to the response as they come."""

    def __init__(self):
        self._chunks: list[bytes] = []

    def write(self, data) -> int:
        self._chunks.append(bytes(data))
        return len(data)

    def flush(self) -> None:
        pass

    def drain(self) -> bytes:
        data = b"".join(self._chunks)
        self._chunks.clear()
        return data


README = "README.txt"


def archive_etag(files: Iterable[DatasetFile], *, readme: str = "") -> str:
    """Names, content hashes and the README determine the archive's bytes, so they make
    its ETag."""
    digest = hashlib.sha256()
    for datafile in files:
        digest.update(
            f"{datafile.filename}\0{datafile.sha256}\0{datafile.uploaded.isoformat()}\n".encode()
        )
    digest.update(f"{README}\0".encode() + hashlib.sha256(readme.encode()).digest())
    return digest.hexdigest()[:32]


def iter_archive(files: Iterable[DatasetFile], *, folder: str, readme: str = "") -> Iterator[bytes]:
    """Zip ``files`` into ``folder/`` inside the archive, yielding it chunk by chunk;
    ``readme`` (if any) first, as ``folder/README.txt``, dated like the newest file."""
    files = list(files)
    sink = _Sink()
    with zipfile.ZipFile(sink, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        if readme:
            newest = max((f.uploaded for f in files), default=None)
            date_time = newest.timetuple()[:6] if newest else (1980, 1, 1, 0, 0, 0)
            info = zipfile.ZipInfo(f"{folder}/{README}", date_time=date_time)
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, readme.encode())
            yield sink.drain()
        for datafile in files:
            info = zipfile.ZipInfo(
                f"{folder}/{datafile.filename}", date_time=datafile.uploaded.timetuple()[:6]
            )
            info.compress_type = zipfile.ZIP_DEFLATED
            info.file_size = datafile.size
            with (
                storages[datafile.storage_alias].open(datafile.path, "rb") as source,
                archive.open(info, "w") as target,
            ):
                for chunk in iter(partial(source.read, CHUNK), b""):
                    target.write(chunk)
                    if data := sink.drain():
                        yield data
    yield sink.drain()  # the central directory, written on close
