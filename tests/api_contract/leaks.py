"""The leak check of every answer schemathesis receives (hooks.no_hidden_data): the
forbidden strings and private files in the body, the headers, and each member of a zip
body. Kept apart from hooks.py, which registers schemathesis hooks when imported."""

from __future__ import annotations

import io
import zipfile

# The JSON file of what a run must never receive (runner.py writes it, hooks.py reads it).
FORBIDDEN_ENV = "API_CONTRACT_FORBIDDEN"
# A zip of the site's is small; reading more than this of one is itself a finding.
MAX_UNZIPPED = 64 * 1024 * 1024


def _members(body: bytes) -> list[tuple[str, bytes]]:
    """The members of a zip answer (none when the body is not a zip)."""
    if not body.startswith(b"PK\x03\x04"):
        return []
    try:
        archive = zipfile.ZipFile(io.BytesIO(body))
        infos = archive.infolist()
        if sum(info.file_size for info in infos) > MAX_UNZIPPED:
            raise AssertionError(f"a zip answer unpacks to more than {MAX_UNZIPPED} bytes")
        return [(info.filename, archive.read(info)) for info in infos]
    except (zipfile.BadZipFile, EOFError) as error:
        raise AssertionError(f"a zip answer that does not open: {error}") from error


def leaks(body: bytes, headers: dict[str, list[str]], *, strings, files) -> list[str]:
    """What of the forbidden strings and files shows in one answer (body, headers, and
    the members of a zip body)."""
    parts = [("body", body)]
    parts += [(f"header {name}", " ".join(values).encode()) for name, values in headers.items()]
    parts += [(f"zip member {name}", data) for name, data in _members(body)]
    found = []
    for where, data in parts:
        text = data.decode("utf-8", "replace")
        found += [f"{secret!r} in the {where}" for secret in strings if secret in text]
        found += [
            f"the private file {name} in the {where}"
            for name, content in files
            if content and content in data
        ]
    return found
