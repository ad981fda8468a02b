"""Exit codes and the one exception every command raises: a one-line message (and, for
a refused upload or an invalid file, its report lines), never a traceback."""

from __future__ import annotations

from typing import NamedTuple

OK = 0
PROBLEMS = 1  # the files have problems: local check, a 400 on upload, an invalid/failed score
USAGE = 2  # bad arguments or configuration (argparse uses 2 as well)
AUTH = 3  # no token, or the site refused it (HTTP 401)
REFUSED = 4  # not allowed or not found (HTTP 403, 404)
LIMIT = 5  # a submission limit or the request rate (HTTP 429)
UNAVAILABLE = 6  # the site cannot be reached, or answered with a server error
TIMEOUT = 7  # `wait` gave up before the submission reached a final status
INTERRUPTED = 130  # Ctrl-C

EXIT_CODES = {
    OK: "success",
    PROBLEMS: "the files have problems (local check, upload refused, invalid or failed scoring)",
    USAGE: "bad arguments or configuration",
    AUTH: "not logged in, or the token was refused",
    REFUSED: "not allowed, or not found",
    LIMIT: "a submission limit or the request rate was reached",
    UNAVAILABLE: "the site cannot be reached or had an error",
    TIMEOUT: "waiting for the score timed out",
    INTERRUPTED: "interrupted",
}


class ClientError(Exception):
    """What went wrong, for the user: ``message`` on one line, ``details`` below it."""

    def __init__(
        self,
        message: str,
        code: int,
        details: list[str] | None = None,
        *,
        retry_after: float | None = None,
        status: int | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.code = code
        self.details = list(details or [])
        self.retry_after = retry_after  # seconds, from a 429's Retry-After
        self.status = status  # the HTTP status, if the site answered


# --- The site's error answers -------------------------------------------------------------
# One row per error status the API documents (docs/openapi.yaml; tests/client/test_errors.py
# checks that every status the schema gives the client's endpoints is here): the exit code,
# the message when the site gives no words of its own, and what the client reads in the body.


class HttpError(NamedTuple):
    code: int
    message: str  # {url} and {status} are filled in
    reads: str


HTTP_ERRORS = {
    400: HttpError(
        PROBLEMS,
        "the site refused the request",
        '{"field": ["reason", …]} or {"detail": "…"}: each reason on a line of its own',
    ),
    401: HttpError(
        AUTH,
        "the token was refused: run `puc login`",
        'nothing: "not logged in: run `puc login`" when no token was sent',
    ),
    403: HttpError(
        REFUSED,
        "not allowed: {url}",
        '{"detail", "missing", "join_url"}: the site\'s reason and the page to join at',
    ),
    404: HttpError(REFUSED, "not found: {url}", '{"detail": "…"}: the site\'s words'),
    413: HttpError(
        PROBLEMS,
        "the site refused the upload: the file is too large",
        '{"detail": "…"}: the size the request declared and the limit',
    ),
    429: HttpError(
        LIMIT,
        "too many requests",
        '{"detail": "…"} and the Retry-After header: the site\'s words and when to retry',
    ),
}
# Any other 4xx is read as a 400; a 5xx (or anything else) means the site is in trouble.
SERVER_ERROR = HttpError(
    UNAVAILABLE, "the site answered HTTP {status} ({url}); try again later", "nothing"
)


def http_error_row(status: int) -> HttpError:
    """The row of ``HTTP_ERRORS`` for an HTTP error status."""
    if status in HTTP_ERRORS:
        return HTTP_ERRORS[status]
    return HTTP_ERRORS[400] if 400 <= status < 500 else SERVER_ERROR
