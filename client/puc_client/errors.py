"""Exit codes and the one exception every command raises: a one-line message (and, for
a refused upload or an invalid file, its report lines), never a traceback."""

from __future__ import annotations

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
