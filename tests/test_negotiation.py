"""challenge_site.negotiation: an API view whose answer is a file serves it whatever the
client accepts (DRF's default negotiation would answer 406 before the view runs)."""

from django.http import HttpResponse
from rest_framework.decorators import api_view, permission_classes
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.test import APIRequestFactory

from challenge_site.negotiation import AnyAccept


def _zip(request):
    if request.GET.get("missing"):
        return Response({"detail": "Not found."}, status=404)
    return HttpResponse(b"PK\x05\x06" + bytes(18), content_type="application/zip")


@api_view(["GET"])
@permission_classes([AllowAny])
def default_view(request):
    return _zip(request)


@api_view(["GET"])
@permission_classes([AllowAny])
def any_accept_view(request):
    return _zip(request)


any_accept_view.cls.content_negotiation_class = AnyAccept  # as the apps' downloads set it


def get(view, accept: str, query: str = ""):
    response = view(APIRequestFactory().get(f"/f.zip{query}", HTTP_ACCEPT=accept))
    if hasattr(response, "render"):
        response.render()
    return response


def test_a_file_is_served_whatever_the_client_accepts():
    assert get(default_view, "application/zip").status_code == 406  # what AnyAccept avoids
    for accept in ("application/zip", "text/csv", "*/*", "application/json"):
        response = get(any_accept_view, accept)
        assert (response.status_code, response["Content-Type"]) == (200, "application/zip")


def test_errors_are_json_even_to_a_client_that_asked_for_a_zip():
    error = get(any_accept_view, "application/zip", "?missing=1")
    assert (error.status_code, error["Content-Type"]) == (404, "application/json")
    assert error.content == b'{"detail":"Not found."}'
