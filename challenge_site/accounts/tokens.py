"""``Authorization: Bearer TOKEN`` beside DRF's ``Authorization: Token TOKEN``.

Most HTTP clients and tools write bearer tokens; the token is the same API token (the
profile page's), checked the same way. Listed after TokenAuthentication in
REST_FRAMEWORK, so that a request without credentials still gets
``WWW-Authenticate: Token`` with its 401.
"""

from rest_framework.authentication import TokenAuthentication


class BearerTokenAuthentication(TokenAuthentication):
    keyword = "Bearer"
