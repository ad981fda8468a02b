"""Requests carrying bytes no page or query can mean are answered 400 before any view.

A NUL byte in the path, the query string, a header or a cookie reaches PostgreSQL as
a string it refuses ("A string literal cannot contain NUL"), which would be a 500.
No URL, parameter, header or cookie of the site ever needs one.
"""

import time

from django.conf import settings
from django.http import HttpResponse, JsonResponse

NUL = "\x00"
# The session key of the challenges an organiser looks at as a participant would
# (challenges.preview sets it; challenges.policy.previewing reads what this puts on the user).
PREVIEW_SESSION_KEY = "participant_preview"
# When the preview was last switched on (seconds since the epoch): it ends by itself
# PREVIEW_SECONDS later, so an organiser never keeps a participant's view for days.
PREVIEW_STARTED_KEY = "participant_preview_started"
PREVIEW_SECONDS = 3600


def refusal(request, message: str, *, status: int) -> HttpResponse:
    """The site's refusal before any view: ``{"detail": …}`` under /api/ (what every API
    answer is, docs/openapi.yaml), plain text elsewhere."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": message.strip()}, status=status)
    return HttpResponse(message, status=status, content_type="text/plain; charset=utf-8")


def _has_nul(request) -> bool:
    parts = [request.path]
    for key, values in request.GET.lists():
        parts += [key, *values]
    parts += [value for key, value in request.META.items() if key.startswith("HTTP_")]
    parts += [*request.COOKIES, *request.COOKIES.values()]
    return any(NUL in part for part in parts)


class RejectNulBytesMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if _has_nul(request):
            return refusal(
                request,
                "The request contains a NUL byte (%00), which no address, parameter, "
                "header or cookie of this site accepts.\n",
                status=400,
            )
        return self.get_response(request)


class ParticipantPreviewMiddleware:
    """Hands the policy the challenges an organiser chose to look at as a participant
    (``challenges.policy.previewing``): kept in the session, put on the user for the
    request."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        session = getattr(request, "session", None)
        ids = session.get(PREVIEW_SESSION_KEY) if session is not None else None
        if ids and time.time() - session.get(PREVIEW_STARTED_KEY, 0) > PREVIEW_SECONDS:
            session.pop(PREVIEW_SESSION_KEY, None)
            session.pop(PREVIEW_STARTED_KEY, None)
            ids = None
        if ids and request.user.is_authenticated:
            request.user.participant_preview = frozenset(ids)
        return self.get_response(request)


class DeclaredLengthLimitMiddleware:
    """Answers 413 at once when a request declares a body larger than anything a
    participant may send (a submission zip and the form's other fields), before any of
    the body is read: a ``Content-Length: 5000000000`` with no body would otherwise hold a
    web worker while it waits for bytes that never come. Staff are exempt (organisers
    upload dataset files in the admin, which have no such limit)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        try:
            declared = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            declared = 0
        limit = settings.SUBMISSION_MAX_UPLOAD_BYTES + settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if declared > limit and not request.user.is_staff:
            return refusal(
                request,
                f"The request declares {declared:,} bytes; this site accepts at most "
                f"{limit:,} (a submission zip of at most "
                f"{settings.SUBMISSION_MAX_UPLOAD_BYTES / 1_000_000:.1f} MB and its form).\n",
                status=413,
            )
        return self.get_response(request)
