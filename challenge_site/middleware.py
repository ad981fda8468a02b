"""Requests carrying bytes no page or query can mean are answered 400 before any view.

A NUL byte in the path, the query string, a header or a cookie reaches PostgreSQL as
a string it refuses ("A string literal cannot contain NUL"), which would be a 500.
No URL, parameter, header or cookie of the site ever needs one.
"""

from django.http import HttpResponseBadRequest

NUL = "\x00"
# The session key of the challenges an organiser looks at as a participant would
# (challenges.preview sets it; challenges.policy.previewing reads what this puts on the user).
PREVIEW_SESSION_KEY = "participant_preview"


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
            return HttpResponseBadRequest(
                "The request contains a NUL byte (%00), which no address, parameter, "
                "header or cookie of this site accepts.\n",
                content_type="text/plain; charset=utf-8",
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
        if ids and request.user.is_authenticated:
            request.user.participant_preview = frozenset(ids)
        return self.get_response(request)
