"""The OpenAPI 3.1 description of /api/v1/ (drf-spectacular) and the reference page.

What every API view shares: the error answers (one component per shape, so that a
client reads one table of them: ``errors()``), the security schemes (DRF's
``Authorization: Token KEY``, ``Authorization: Bearer KEY``, the session cookie), and
the two public views: the schema (YAML, or JSON with ``?format=json``) and the
reference page that reads it (Swagger UI). The page's script is a static file
(static/api/swagger-init.js): the site's Content-Security-Policy allows no inline
script, which drf-spectacular's own SpectacularSwaggerView writes.

This module knows no app (it sits with the core utilities); each api module describes
its own operations with ``extend_schema`` and the components below.
"""

from __future__ import annotations

import json

from django.shortcuts import render
from drf_spectacular.extensions import (
    OpenApiAuthenticationExtension,
    OpenApiSerializerExtension,
    OpenApiViewExtension,
)
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiYamlRenderer
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
    inline_serializer,
)
from rest_framework import serializers
from rest_framework.decorators import (
    api_view,
    authentication_classes,
    permission_classes,
    renderer_classes,
)
from rest_framework.permissions import AllowAny
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response


class BearerScheme(OpenApiAuthenticationExtension):
    """``Authorization: Bearer KEY``: the same API token as ``Token KEY``."""

    target_class = "challenge_site.accounts.tokens.BearerTokenAuthentication"
    name = "bearerAuth"
    priority = 1  # before drf-spectacular's TokenScheme, which matches subclasses too

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "The API token of the profile page: `Authorization: Bearer KEY`.",
        }


# --- Error shapes ---------------------------------------------------------------------

Detail = inline_serializer("Detail", fields={"detail": serializers.CharField()})

# A refusal that the user can lift by joining the challenge (accepting its rules, being
# approved): what they lack, and where to go.
Participation = inline_serializer(
    "ParticipationRequired",
    fields={
        "detail": serializers.CharField(),
        "missing": serializers.ListField(
            child=serializers.ChoiceField(choices=["rules_acceptance", "approval"])
        ),
        "join_url": serializers.URLField(),
    },
)


class FieldErrors(serializers.Serializer):
    """{field: [message, …]}; ``non_field_errors`` for what concerns no one field."""

    class Meta:
        ref_name = "FieldErrors"


class ParameterErrors(serializers.Serializer):
    """{query parameter: why it is wrong, and the values it takes}."""

    class Meta:
        ref_name = "ParameterErrors"


class _FieldErrorsSchema(OpenApiSerializerExtension):
    target_class = FieldErrors

    def map_serializer(self, auto_schema, direction):
        return {
            "type": "object",
            "additionalProperties": {"type": "array", "items": {"type": "string"}},
            "properties": {"detail": {"type": "string"}},
            "description": "{field: [message, …]} (`non_field_errors`: the whole form's); "
            "or {detail} when no field is at fault.",
        }


class _ParameterErrorsSchema(OpenApiSerializerExtension):
    target_class = ParameterErrors

    def map_serializer(self, auto_schema, direction):
        return {
            "type": "object",
            "additionalProperties": {"type": "string"},
            "description": "{query parameter: what is wrong and the values it takes}",
        }


class _Me(OpenApiViewExtension):
    """GET /api/me/ (accounts.views.api_me): whom the token authenticates."""

    target_class = "challenge_site.accounts.views.api_me"

    def view_replacement(self):
        return extend_schema_view(
            get=extend_schema(
                operation_id="me",
                summary="Whom your token authenticates",
                responses={
                    200: inline_serializer(
                        "Me",
                        fields={
                            "username": serializers.CharField(),
                            "display_name": serializers.CharField(),
                            "affiliation": serializers.CharField(),
                        },
                    ),
                    **errors(401, 429),
                },
            )
        )(type("Fixed", (self.target_class,), {}))


# Files: a zip's bytes, a CSV's text.
ZIP = OpenApiTypes.BINARY
CSV = OpenApiTypes.STR

# Each status a view may answer with an error, and the default shape of its body.
ERROR_RESPONSES = {
    400: OpenApiResponse(Detail, description="Refused: `detail` says why."),
    401: OpenApiResponse(
        Detail,
        description="No credentials, or a token that is not (or no longer) valid.",
        examples=[
            OpenApiExample(
                "no credentials",
                {"detail": "Authentication credentials were not provided."},
                status_codes=["401"],
                response_only=True,
            )
        ],
    ),
    403: OpenApiResponse(Detail, description="Not allowed: `detail` says why."),
    404: OpenApiResponse(
        Detail,
        description="Nothing here that the caller may see (a hidden thing answers the same "
        "as a missing one).",
        examples=[
            OpenApiExample(
                "not found",
                {"detail": "No Challenge matches the given query."},
                status_codes=["404"],
                response_only=True,
            )
        ],
    ),
    413: OpenApiResponse(
        Detail,
        description="The request declares a body larger than any submission may be "
        "(answered before any of it is read).",
    ),
    429: OpenApiResponse(
        Detail,
        description="Too many requests (the API rate) or a submission limit reached: "
        "try again after `Retry-After` seconds.",
        examples=[
            OpenApiExample(
                "throttled",
                {"detail": "Request was throttled. Expected available in 12 seconds."},
                status_codes=["429"],
                response_only=True,
            )
        ],
    ),
}


def errors(*statuses: int, **shapes) -> dict:
    """The error answers of an operation: ``errors(400, 404, s403=Participation)`` gives
    each status its default shape unless a ``s<status>=`` keyword gives another (a
    serializer, or an OpenApiResponse). Every operation may answer 401 (a token sent
    that is not valid, even where none is needed) and 429 (the API's rate)."""
    out = {}
    for status in sorted({*statuses, 401, 429}):
        shape = shapes.get(f"s{status}")
        if shape is None:
            out[status] = ERROR_RESPONSES[status]
        elif isinstance(shape, OpenApiResponse):
            out[status] = shape
        else:
            out[status] = OpenApiResponse(shape, description=ERROR_RESPONSES[status].description)
    return out


_HEADERS = {
    "429": {
        "Retry-After": {
            "schema": {"type": "integer", "minimum": 0},
            "description": "Seconds to wait before trying again.",
            "required": True,
        }
    },
    "401": {
        "WWW-Authenticate": {
            "schema": {"type": "string"},
            "description": "The scheme to authenticate with: `Token`.",
        }
    },
}

_NUL_BYTE = ' A NUL byte (%00) anywhere in the request is refused before the API: {"detail": …}.'
_NO_ROUTE = " So is a path parameter its pattern refuses (no route matches)."
_DETAIL = {
    "type": "object",
    "properties": {"detail": {"type": "string"}},
    "required": ["detail"],
}
_SLUG = {"type": "string", "pattern": "^[-a-zA-Z0-9_]+$"}
PATH_PARAMETERS = {
    "slug": (_SLUG, "The challenge's short name, as in its URL (`epuc`)."),
    "name": (_SLUG, "The dataset's name, as in its URL."),
    "id": ({"type": "integer", "minimum": 1}, "The submission's number."),
}

# Operations grouped by what they are about, in the reference page's order.
TAGS = [
    {"name": "challenges", "description": "The challenges and their datasets."},
    {"name": "datasets", "description": "Downloading a dataset's released files."},
    {"name": "submissions", "description": "Sending predictions, and their scores."},
    {"name": "leaderboards", "description": "The rankings, as the leaderboard pages."},
    {"name": "teams", "description": "Forming a team in a challenge."},
    {"name": "exports", "description": "Organisers' exports of a challenge."},
    {"name": "account", "description": "Checking your token."},
]


def _tag(path: str) -> str:
    for marker, tag in (
        ("/leaderboard/", "leaderboards"),
        ("/team/", "teams"),
        ("/export/", "exports"),
        ("/datasets/", "datasets"),
        ("/submissions/", "submissions"),
        ("/challenges/", "challenges"),
    ):
        if marker in path:
            return tag
    return "account"


def _or_detail(answer: dict) -> None:
    """Let ``answer``'s JSON body also be the site's own ``{"detail": …}`` refusal."""
    content = answer.setdefault("content", {})
    found = content.get("application/json", {}).get("schema")
    if found is None:
        content["application/json"] = {"schema": dict(_DETAIL)}
    elif found != _DETAIL and _DETAIL not in found.get("anyOf", []):
        content["application/json"] = {**content["application/json"]}
        content["application/json"]["schema"] = {"anyOf": [found, dict(_DETAIL)]}


def finish(result, generator, request, public):
    """Postprocessing hook: every 429 answer carries Retry-After and every 401 its
    WWW-Authenticate (drf-spectacular declares response headers per operation only),
    the site's own 400 to a NUL byte, 413 to a declared body too large and 404 to a URL
    that matches no route are ``{"detail": …}``, the path parameters say what they name and which values they
    take, and operations are grouped by ``TAGS``."""
    for path, item in result.get("paths", {}).items():
        for operation in item.values():
            operation["tags"] = [_tag(path)]
            for parameter in operation.get("parameters", []):
                if parameter["in"] == "path" and parameter["name"] in PATH_PARAMETERS:
                    schema, description = PATH_PARAMETERS[parameter["name"]]
                    parameter.update(schema=dict(schema), description=description)
            responses = operation.setdefault("responses", {})
            # Any request with a NUL byte is refused before the API (middleware.py).
            refused = responses.setdefault("400", {"description": ""})
            _or_detail(refused)
            refused["description"] = (refused["description"] + _NUL_BYTE).strip()
            operation["responses"] = dict(sorted(responses.items()))
            for code, answer in operation["responses"].items():
                if code in _HEADERS:
                    answer.setdefault("headers", {}).update(_HEADERS[code])
                if code == "413":
                    # Answered by middleware.py before the body is read.
                    answer["content"] = {"application/json": {"schema": dict(_DETAIL)}}
                if code == "404" and "{" in path:
                    # A URL its route does not match (a slug with a character no slug
                    # holds, an id below 1) never reaches the view: views.not_found.
                    _or_detail(answer)
                    answer["description"] += _NO_ROUTE
    result["tags"] = TAGS
    return result


# --- The schema and the reference page ------------------------------------------------

_cache: dict[str, bytes] = {}


def schema_document() -> dict:
    """The schema as drf-spectacular generates it from the views (public: every
    operation, whoever asks; it holds no data)."""
    return SchemaGenerator().get_schema(request=None, public=True)


def _rendered(fmt: str) -> bytes:
    # Generation walks every URL (about a second): once per process; the schema changes
    # only with the code.
    if fmt not in _cache:
        document = schema_document()
        if fmt == "json":
            _cache[fmt] = json.dumps(document, indent=2, sort_keys=False).encode()
        else:
            _cache[fmt] = OpenApiYamlRenderer().render(document)
    return _cache[fmt]


class _Raw(JSONRenderer):
    """Writes the bytes it is given (the cached schema) under the format asked for."""

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if isinstance(data, bytes):
            return data
        # An error's {"detail": …} (a throttled request, an unknown ?format=): as JSON.
        return super().render(data, "application/json", renderer_context)


class _Yaml(_Raw):
    media_type = "application/vnd.oai.openapi"
    format = "yaml"
    charset = "utf-8"


class _Json(_Raw):
    media_type = "application/vnd.oai.openapi+json"
    format = "json"


class _PlainYaml(_Yaml):
    media_type = "application/yaml"


class _PlainJson(_Json):
    media_type = "application/json"


@extend_schema(exclude=True)  # the schema's own URL is not an operation of the API
@api_view(["GET"])
@authentication_classes([])
@permission_classes([AllowAny])
@renderer_classes([_Yaml, _Json, _PlainYaml, _PlainJson])
def api_schema(request):
    """The OpenAPI document: YAML, or JSON with ``?format=json``."""
    fmt = "json" if request.accepted_renderer.format == "json" else "yaml"
    return Response(_rendered(fmt))


def api_docs(request):
    """The reference page: Swagger UI (drf-spectacular-sidecar's copy) reading the schema,
    in the site's layout. Swagger UI rather than Redoc: Redoc writes <style> elements
    (styled-components) and loads its logo from a CDN, both of which the site's policy
    refuses; Swagger UI needs nothing but its static files."""
    return render(request, "api/docs.html")
