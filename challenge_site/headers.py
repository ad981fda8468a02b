"""Headers of answers that depend on who asks, and the policy of SVG drawings.

Every answer the site's views give (static files are served before this, by WhiteNoise,
and stay cacheable) carries ``Vary: Cookie, Authorization``: pages differ between
visitors who are logged in and those who are not, API answers between tokens. An answer
to a request that carries a session cookie or an Authorization header, or that is
rendered for a logged-in user, or that sets a cookie (a log-in; a form's CSRF cookie),
is ``Cache-Control: private, no-store``: no shared cache keeps it and no browser writes it
to disk (the profile page shows the API token, staff see hidden scores).

SVG drawings (matplotlib writes ``<style>`` and ``style=""`` into them) get a policy
that allows their inline styles, which otherwise block only when a drawing is opened on
its own: they are shown in ``<img>`` elements, where scripts never run.
"""

from django.conf import settings
from django.utils.cache import patch_cache_control, patch_vary_headers

SVG_POLICY = {"style-src": ["'self'", "'unsafe-inline'"]}


def is_personal(request, response) -> bool:
    if settings.SESSION_COOKIE_NAME in request.COOKIES:
        return True
    if "HTTP_AUTHORIZATION" in request.META:
        return True
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return True
    return sets_cookies(request, response)


def sets_cookies(request, response) -> bool:
    """Whether the answer will set a cookie: then it is for this client only. The session
    and CSRF middlewares, outside this one, set theirs after it: a log-in or log-out (a
    changed session), a page with a form (the CSRF cookie)."""
    if response.cookies or request.META.get("CSRF_COOKIE_NEEDS_UPDATE"):
        return True
    session = getattr(request, "session", None)
    return bool(session is not None and session.modified)


class PrivateAnswersMiddleware:
    """After django-csp's middleware in MIDDLEWARE, so that its answers pass here first."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        patch_vary_headers(response, ("Cookie", "Authorization"))
        if is_personal(request, response):
            patch_cache_control(response, private=True, no_store=True)
        if response.get("Content-Type", "").startswith("image/svg+xml") and not hasattr(
            response, "_csp_replace"
        ):
            response._csp_replace = SVG_POLICY  # as django-csp's @csp_replace(SVG_POLICY)
        return response
