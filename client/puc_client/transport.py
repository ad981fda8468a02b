"""HTTP to the site (urllib, standard library only): JSON requests, downloads streamed to
disk and uploads streamed from disk, each with a progress bar, and every failure turned
into a :class:`ClientError` with a one-line message and an exit code.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import os
import socket
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

from . import __version__, errors
from .errors import ClientError
from .multipart import MultipartBody
from .progress import Progress

CHUNK = 64 * 1024
PROGRAM = "puc"


class _SameSiteRedirects(urllib.request.HTTPRedirectHandler):
    """Follow a redirect only on the same host: the Authorization header goes along."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        old, new = urllib.parse.urlsplit(req.full_url), urllib.parse.urlsplit(newurl)
        if old.hostname != new.hostname:
            raise ClientError(
                f"the site redirected to another host ({new.hostname}); "
                "check the site URL (`puc login --url …`)",
                errors.UNAVAILABLE,
            )
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def retry_after_text(value: str | None, *, now: float | None = None) -> str:
    """Retry-After (seconds, or an HTTP date) in words: "retry in 2 h 5 min (at 14:05 UTC)"."""
    if not value:
        return ""
    now = time.time() if now is None else now
    value = value.strip()
    if value.isdigit():
        seconds = int(value)
    else:
        try:
            seconds = int(email.utils.parsedate_to_datetime(value).timestamp() - now)
        except (TypeError, ValueError):
            return ""
    seconds = max(seconds, 0)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        span = f"{hours} h {minutes} min"
    elif minutes:
        span = f"{minutes} min {secs} s" if secs else f"{minutes} min"
    else:
        span = f"{secs} s"
    at = datetime.fromtimestamp(now + seconds, UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"retry in {span} (at {at})"


def _reasons(body) -> list[str]:
    """The lines of a DRF error body: {"field": ["reason", …]} or {"detail": "…"}."""
    if isinstance(body, dict):
        lines = []
        for field, value in body.items():
            if field in ("missing", "join_url"):
                continue
            values = value if isinstance(value, list) else [value]
            for item in values:
                text = item if isinstance(item, str) else json.dumps(item)
                prefix = "" if field in ("detail", "non_field_errors", "file") else f"{field}: "
                lines.append(prefix + text)
        return lines
    if isinstance(body, list):
        return [str(item) for item in body]
    return [str(body)] if body else []


def http_error(status: int, body, headers, *, url: str, has_token: bool) -> ClientError:
    """The ClientError for an HTTP error answer (``body``: parsed JSON, text or None)."""
    error = _http_error(status, body, headers, url=url, has_token=has_token)
    error.status = status
    return error


def _http_error(status: int, body, headers, *, url: str, has_token: bool) -> ClientError:
    """errors.HTTP_ERRORS' row for ``status``, with the site's own words where it gives them."""
    row = errors.http_error_row(status)
    default = row.message.format(url=url, status=status)
    reasons = _reasons(body)
    detail = reasons[0] if len(reasons) == 1 else ""
    if status == 401:
        if not has_token:
            return ClientError(f"not logged in: run `{PROGRAM} login`", row.code)
        return ClientError(default, row.code)
    if status == 403:
        message = detail or default
        if isinstance(body, dict) and body.get("join_url"):
            message += f" (join at {body['join_url']})"
        return ClientError(message, row.code)
    if status == 404:
        return ClientError(detail or default, row.code)
    if status == 429:
        value = (headers.get("Retry-After") or "").strip()
        retry = retry_after_text(value)
        message = detail or default
        return ClientError(
            f"{message.rstrip('.')}; {retry}" if retry else message,
            row.code,
            retry_after=float(value) if value.isdigit() else None,
        )
    if status == 413 and detail:
        return ClientError(f"{default}: {detail}", row.code)
    if status == 413 or row is errors.SERVER_ERROR:
        return ClientError(default, row.code)
    if len(reasons) == 1:
        return ClientError(f"{default}: {reasons[0]}", row.code)
    return ClientError(f"{default}:", row.code, reasons)


class Api:
    """The site at ``base_url``, authenticated by ``token`` (if any)."""

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        progress: bool | None = None,
        timeout: float = 60,
        stderr=None,
    ):
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.progress = progress  # None: when stderr is a terminal
        self.timeout = timeout
        self.stderr = stderr if stderr is not None else sys.stderr
        self.opener = urllib.request.build_opener(_SameSiteRedirects())

    def url(self, path: str, params: dict | None = None) -> str:
        url = path if path.startswith(("http://", "https://")) else self.base_url + path
        query = {k: v for k, v in (params or {}).items() if v not in (None, "")}
        if query:
            url += ("&" if "?" in url else "?") + urllib.parse.urlencode(query)
        return url

    def _headers(self, accept: str) -> dict[str, str]:
        headers = {"Accept": accept, "User-Agent": f"puc-client/{__version__}"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return headers

    def _open(self, request: urllib.request.Request):
        """The response, or ClientError for an error answer or a network failure."""
        try:
            return self.opener.open(request, timeout=self.timeout)
        except urllib.error.HTTPError as error:
            with error:
                raw = error.read(1 << 20)
            raise http_error(
                error.code,
                _parse(raw, error.headers.get("Content-Type", "")),
                error.headers,
                url=request.full_url,
                has_token=bool(self.token),
            ) from None
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            if isinstance(reason, socket.timeout | TimeoutError):
                reason = f"no answer within {self.timeout:.0f} s"
            raise ClientError(
                f"cannot reach {self.base_url}: {reason}", errors.UNAVAILABLE
            ) from None

    def get_json(self, path: str, params: dict | None = None):
        request = urllib.request.Request(
            self.url(path, params), headers=self._headers("application/json")
        )
        with self._open(request) as response:
            raw = response.read()
        return _json(raw, url=request.full_url)

    def post_json(self, path: str, data: dict):
        """POST ``data`` as JSON; the JSON answer."""
        headers = self._headers("application/json")
        headers["Content-Type"] = "application/json"
        request = urllib.request.Request(
            self.url(path), data=json.dumps(data).encode(), headers=headers, method="POST"
        )
        with self._open(request) as response:
            raw = response.read()
        return _json(raw, url=request.full_url)

    def get_text(self, path: str, params: dict | None = None) -> str:
        request = urllib.request.Request(
            self.url(path, params), headers=self._headers("text/csv, text/plain, */*")
        )
        with self._open(request) as response:
            raw = response.read()
        return raw.decode("utf-8", errors="replace")

    def _progress(self, label: str, total: int | None) -> Progress:
        return Progress(label, total, stream=self.stderr, enabled=self.progress)

    def download(self, path: str, destination: Path, *, params: dict | None = None) -> int:
        """Stream the answer into ``destination`` (through a temporary file beside it, so
        an interrupted download leaves nothing half-written); the number of bytes."""
        request = urllib.request.Request(self.url(path, params), headers=self._headers("*/*"))
        destination = Path(destination)
        with self._open(request) as response:
            length = response.headers.get("Content-Length")
            total = int(length) if length and length.isdigit() else None
            partial = destination.with_name(f".{destination.name}.part")
            try:
                with (
                    open(partial, "wb") as target,
                    self._progress(destination.name, total) as bar,
                ):
                    while chunk := _read(response, self.base_url):
                        target.write(chunk)
                        bar.update(len(chunk))
                if total is not None and bar.done != total:
                    raise ClientError(
                        f"the download stopped after {bar.done} of {total} bytes; try again",
                        errors.UNAVAILABLE,
                    )
                os.replace(partial, destination)
            finally:
                if os.path.exists(partial):
                    os.unlink(partial)
        return bar.done

    def upload(self, path: str, fields: dict[str, str], *, file: Path, filename: str):
        """POST ``fields`` and ``file`` as multipart/form-data, streamed from disk; the JSON."""
        body = MultipartBody(fields, file_field="file", path=Path(file), filename=filename)
        headers = self._headers("application/json")
        headers["Content-Type"] = body.content_type
        headers["Content-Length"] = str(len(body))
        request = urllib.request.Request(self.url(path), data=body, headers=headers, method="POST")
        with self._progress(f"upload {filename}", body.file_size) as bar:
            body.on_read = bar.update
            try:
                with self._open(request) as response:
                    raw = response.read()
            finally:
                body.close()
        return _json(raw, url=request.full_url)


def _read(response, base_url: str) -> bytes:
    try:
        return response.read(CHUNK)
    except (OSError, http.client.HTTPException) as error:  # reset, IncompleteRead
        raise ClientError(
            f"the connection to {base_url} broke: {error}", errors.UNAVAILABLE
        ) from None


def _parse(raw: bytes, content_type: str):
    if "json" in content_type:
        try:
            return json.loads(raw)
        except ValueError:
            pass
    text = raw.decode("utf-8", errors="replace").strip()
    # An HTML error page says nothing useful on a terminal.
    return "" if text.lstrip().startswith("<") else text


def _json(raw: bytes, *, url: str):
    try:
        return json.loads(raw)
    except ValueError:
        raise ClientError(
            f"the site's answer to {url} is not JSON: is the site URL right?", errors.UNAVAILABLE
        ) from None
