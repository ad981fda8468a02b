"""challenge_site.middleware: a NUL byte anywhere in a request is a 400 before any view
(PostgreSQL would refuse it with a 500), and the participant preview an organiser chose
is put on the user for the policy to read (the switch: tests/challenges/test_preview.py)."""

from django.contrib.auth.models import AnonymousUser
from django.http import HttpResponse
from django.test import Client

from challenge_site.middleware import PREVIEW_SESSION_KEY, ParticipantPreviewMiddleware
from tests.factories import make_user


def preview_seen(request) -> frozenset | None:
    seen = {}

    def view(request):
        seen["preview"] = getattr(request.user, "participant_preview", None)
        return HttpResponse()

    ParticipantPreviewMiddleware(view)(request)
    return seen["preview"]


def test_the_preview_kept_in_the_session_is_put_on_the_user(rf, db):
    request = rf.get("/")
    request.user = make_user("organiser")
    request.session = {PREVIEW_SESSION_KEY: [3, 5]}
    assert preview_seen(request) == frozenset({3, 5})
    request.user = make_user("other")
    request.session = {}
    assert preview_seen(request) is None


def test_anonymous_visitors_preview_nothing(rf):
    request = rf.get("/")
    request.user = AnonymousUser()
    request.session = {PREVIEW_SESSION_KEY: [3]}
    assert preview_seen(request) is None


def test_nul_bytes_in_headers_and_cookies_are_refused_with_400(challenge):
    client = Client()
    answers = [
        client.get("/", QUERY_STRING="a=%00"),
        client.get("/", headers={"authorization": "Token abc\x00def"}),
        client.get("/api/me/", headers={"authorization": "Token abc\x00def"}),
    ]
    client.cookies["sessionid"] = "abcdefgh\x00ijkl"
    answers.append(client.get("/accounts/profile/"))
    for response in answers:
        assert response.status_code == 400
        assert b"NUL byte" in response.content
    # An ordinary request still passes.
    assert Client().get("/").status_code == 200
