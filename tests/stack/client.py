"""A small HTTP client for the stack (standard library only): cookies, CSRF, multipart.

Redirects are not followed, so a test sees the 302 of a form that was accepted. Every
request has a timeout; errors come back as responses, never as exceptions.
"""

from __future__ import annotations

import html
import http.client
import http.cookiejar
import json
import re
import secrets
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from email.message import Message


@dataclass
class Response:
    status: int
    headers: Message
    body: bytes
    url: str

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")

    @property
    def page_text(self) -> str:
        """The body with HTML entities decoded (messages hold quotes and arrows)."""
        return html.unescape(self.text)

    def json(self):
        return json.loads(self.body)

    def __repr__(self) -> str:
        return f"<Response {self.status} {self.url} {self.body[:300]!r}>"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def multipart(fields: dict[str, str], files: dict[str, tuple[str, bytes]]) -> tuple[bytes, str]:
    """(body, content type) of a multipart/form-data request."""
    boundary = "----stack" + secrets.token_hex(12)
    parts = []
    for name, value in fields.items():
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode()
            + str(value).encode()
            + b"\r\n"
        )
    for name, (filename, data) in files.items():
        parts.append(
            (
                f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; '
                f'filename="{filename}"\r\nContent-Type: application/zip\r\n\r\n'
            ).encode()
            + data
            + b"\r\n"
        )
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


class Client:
    def __init__(self, base_url: str, *, token: str | None = None, timeout: float = 60):
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.cookies = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.cookies), _NoRedirect()
        )

    def url(self, path: str) -> str:
        return path if path.startswith("http") else self.base_url + path

    def request(self, method: str, path: str, *, body=None, headers=None) -> Response:
        headers = dict(headers or {})
        if self.token:
            headers.setdefault("Authorization", f"Token {self.token}")
        request = urllib.request.Request(self.url(path), data=body, method=method, headers=headers)
        try:
            with self.opener.open(request, timeout=self.timeout) as response:
                return Response(
                    response.status, response.headers, response.read(), request.full_url
                )
        except urllib.error.HTTPError as error:
            with error:
                return Response(error.code, error.headers, error.read(), request.full_url)

    def get(self, path: str) -> Response:
        return self.request("GET", path)

    def post(self, path: str, fields: dict[str, str]) -> Response:
        body = urllib.parse.urlencode(fields).encode()
        return self.request(
            "POST", path, body=body, headers={"Content-Type": "application/x-www-form-urlencoded"}
        )

    def post_multipart(self, path: str, fields: dict[str, str], files) -> Response:
        body, content_type = multipart(fields, files)
        return self.request("POST", path, body=body, headers={"Content-Type": content_type})

    def post_multipart_interrupted(self, path: str, fields, files, *, midway) -> Response:
        """Send half the body, call ``midway()``, send the rest: something happens while
        the server is still receiving the upload."""
        body, content_type = multipart(fields, files)
        url = urllib.parse.urlsplit(self.url(path))
        connection = http.client.HTTPConnection(url.hostname, url.port, timeout=self.timeout)
        try:
            connection.putrequest("POST", url.path)
            connection.putheader("Content-Type", content_type)
            connection.putheader("Content-Length", str(len(body)))
            if self.token:
                connection.putheader("Authorization", f"Token {self.token}")
            connection.endheaders()
            half = len(body) // 2
            connection.send(body[:half])
            midway()
            connection.send(body[half:])
            response = connection.getresponse()
            return Response(response.status, response.headers, response.read(), self.url(path))
        finally:
            connection.close()

    def csrf_token(self, path: str) -> str:
        """GET ``path`` and return the form's CSRF token (the cookie is kept)."""
        page = self.get(path)
        assert page.status == 200, page
        match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
        assert match, f"no CSRF token on {path}"
        return match.group(1)

    def login(self, username: str, password: str) -> None:
        token = self.csrf_token("/accounts/login/")
        response = self.post(
            "/accounts/login/",
            {"csrfmiddlewaretoken": token, "username": username, "password": password},
        )
        assert response.status == 302, response

    # --- submissions -------------------------------------------------------------------

    def api_submit(self, challenge: str, data: bytes, *, dataset: str = "", method="m", **extra):
        fields = {"challenge": challenge, "dataset": dataset, "method": method, **extra}
        return self.post_multipart(
            "/api/v1/submissions/", fields, {"file": ("predictions.zip", data)}
        )

    def form_submit(self, challenge: str, data: bytes, *, dataset: str = "", method="m"):
        path = f"/challenges/{challenge}/submit/"
        fields = {
            "csrfmiddlewaretoken": self.csrf_token(path),
            "dataset": dataset,
            "method": method,
            "authors": "",
            "description": "",
        }
        return self.post_multipart(path, fields, {"file": ("predictions.zip", data)})
