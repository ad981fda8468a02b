"""challenge_site.middleware: a NUL byte anywhere in a request is a 400 before any view
(PostgreSQL would refuse it with a 500), and the participant preview an organiser chose
is put on the user for the policy to read (the switch: tests/challenges/test_preview.py)."""

import time

from django.contrib.auth.models import AnonymousUser
from django.http import HttpResponse
from django.test import Client

from challenge_site.middleware import (
    PREVIEW_SECONDS,
    PREVIEW_SESSION_KEY,
    PREVIEW_STARTED_KEY,
    ParticipantPreviewMiddleware,
)
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
    request.session = {PREVIEW_SESSION_KEY: [3, 5], PREVIEW_STARTED_KEY: time.time()}
    assert preview_seen(request) == frozenset({3, 5})
    request.user = make_user("other")
    request.session = {}
    assert preview_seen(request) is None


def test_a_preview_ends_by_itself_after_an_hour(rf, db):
    request = rf.get("/")
    request.user = make_user("organiser")
    started = time.time() - PREVIEW_SECONDS - 1
    request.session = {PREVIEW_SESSION_KEY: [3], PREVIEW_STARTED_KEY: started}
    assert preview_seen(request) is None
    assert PREVIEW_SESSION_KEY not in request.session


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


def test_a_declared_body_over_the_upload_limit_is_refused_before_it_is_read(challenge, settings):
    settings.SUBMISSION_MAX_UPLOAD_BYTES = 1_000_000
    client = Client()
    client.force_login(make_user("attacker"))
    # No body at all: reading it would fail (FakePayload), so a 413 shows it was not read.
    response = client.generic(
        "POST",
        "/api/v1/submissions/",
        b"",
        content_type="multipart/form-data; boundary=x",
        CONTENT_LENGTH="5000000000",
    )
    assert response.status_code == 413
    assert b"declares 5,000,000,000 bytes" in response.content
    # Within the limit the request goes on to the view (which finds no file).
    within = client.generic(
        "POST",
        "/api/v1/submissions/",
        b"x",
        content_type="text/plain",
        CONTENT_LENGTH="1",
    )
    assert within.status_code != 413


def test_a_declared_huge_body_is_answered_at_once_over_a_socket(live_server, challenge):
    import socket
    import time
    from urllib.parse import urlsplit

    address = urlsplit(live_server.url)
    started = time.monotonic()
    with socket.create_connection((address.hostname, address.port), timeout=10) as sock:
        sock.sendall(
            b"POST /api/v1/submissions/ HTTP/1.1\r\nHost: localhost\r\n"
            b"Content-Type: multipart/form-data; boundary=x\r\n"
            b"Content-Length: 5000000000\r\n\r\n"
        )
        answer = sock.recv(4096)
    assert answer.startswith(b"HTTP/1.1 413")
    assert time.monotonic() - started < 5


def test_staff_may_declare_large_bodies_for_dataset_files(rf, db, settings):
    settings.SUBMISSION_MAX_UPLOAD_BYTES = 10
    from challenge_site.middleware import DeclaredLengthLimitMiddleware

    request = rf.post("/admin/", data=b"", content_type="text/plain", CONTENT_LENGTH="10000000")
    request.user = make_user("organiser", is_staff=True)
    passed = DeclaredLengthLimitMiddleware(lambda request: HttpResponse("on"))(request)
    assert passed.status_code == 200
    request.user = AnonymousUser()
    assert (
        DeclaredLengthLimitMiddleware(lambda request: HttpResponse("on"))(request).status_code
        == 413
    )
