"""Rate limits of the API (DRF throttles), sign-up and password reset: 429 with Retry-After."""

import pytest
from django.core import mail
from django.core.exceptions import ImproperlyConfigured
from django.test import RequestFactory
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from challenge_site.settings import RATE_LIMITS, env_rate
from challenge_site.throttling import client_address
from tests.factories import make_user

PASSWORD = "a-long-Passphrase-42"


@pytest.fixture
def rates(settings):
    """Set some rates low for a test; the others keep their defaults."""

    def set_rates(**changes):
        settings.RATE_LIMITS = {**settings.RATE_LIMITS, **changes}

    return set_rates


def token_client(username: str) -> APIClient:
    user = make_user(username)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def assert_throttled(response, *, at_most: int):
    assert response.status_code == 429, response.content
    assert 0 < int(response["Retry-After"]) <= at_most
    assert "Request was throttled" in response.json()["detail"]


# --- Settings ------------------------------------------------------------------------


def test_default_rates():
    assert RATE_LIMITS == {
        "api_user": "300/minute",
        "api_anon": "120/minute",
        "api_upload": "60/minute",
        "signup": "10/hour",
        "password_reset": "5/hour",
        "login": "60/hour",
    }


@pytest.mark.parametrize(
    ("value", "expected"),
    [("5/second", "5/second"), ("1/day", "1/day"), ("off", None), ("OFF", None)],
)
def test_rates_from_the_environment(monkeypatch, value, expected):
    monkeypatch.setenv("SOME_RATE", value)
    assert env_rate("SOME_RATE", "1/hour") == expected


@pytest.mark.parametrize("value", ["5", "0/minute", "-1/minute", "5/fortnight", "5/min", "x/hour"])
def test_malformed_rates_stop_start_up(monkeypatch, value):
    monkeypatch.setenv("SOME_RATE", value)
    with pytest.raises(ImproperlyConfigured, match="SOME_RATE must be N/second"):
        env_rate("SOME_RATE", "1/hour")


def test_client_address_behind_proxies(settings):
    request = RequestFactory().get(
        "/", REMOTE_ADDR="10.0.0.9", HTTP_X_FORWARDED_FOR="6.6.6.6, 192.0.2.1, 10.0.0.8"
    )
    settings.TRUSTED_PROXY_COUNT = 0
    assert client_address(request) == "10.0.0.9"  # X-Forwarded-For is not trusted
    settings.TRUSTED_PROXY_COUNT = 1
    assert client_address(request) == "10.0.0.8"
    settings.TRUSTED_PROXY_COUNT = 2
    assert client_address(request) == "192.0.2.1"
    settings.TRUSTED_PROXY_COUNT = 9  # fewer entries than proxies: the leftmost
    assert client_address(request) == "6.6.6.6"
    garbage = RequestFactory().get("/", REMOTE_ADDR="10.0.0.9", HTTP_X_FORWARDED_FOR="nonsense")
    assert client_address(garbage) == "10.0.0.9"


# --- The API -----------------------------------------------------------------------------


def test_anonymous_api_requests_are_limited_per_address(db, rates):
    rates(api_anon="3/minute")
    client = APIClient()
    url = reverse("api_submission", args=[999_999])
    for _ in range(3):
        assert client.get(url, REMOTE_ADDR="192.0.2.1").status_code == 404
    assert_throttled(client.get(url, REMOTE_ADDR="192.0.2.1"), at_most=60)
    assert client.get(url, REMOTE_ADDR="192.0.2.2").status_code == 404


def test_api_requests_with_a_token_are_limited_per_user(db, rates):
    rates(api_user="3/minute", api_anon="1/minute")
    ada, grace = token_client("ada"), token_client("grace")
    url = reverse("api_me")
    for _ in range(3):
        assert ada.get(url).status_code == 200  # the anonymous rate does not apply
    assert_throttled(ada.get(url), at_most=60)
    assert_throttled(ada.get(url, REMOTE_ADDR="192.0.2.9"), at_most=60)  # any address
    assert grace.get(url).status_code == 200


def test_session_requests_to_the_api_are_limited_per_user(client, db, rates):
    rates(api_user="2/hour")
    client.force_login(make_user("ada"))
    url = reverse("api_me")
    assert [client.get(url).status_code for _ in range(2)] == [200, 200]
    assert_throttled(client.get(url), at_most=3600)


def test_uploads_have_a_rate_of_their_own(db, rates):
    rates(api_upload="2/minute")
    ada = token_client("ada")
    url = reverse("api_submission_create")
    for _ in range(2):
        assert ada.post(url, {"challenge": "none"}).status_code == 400
    assert_throttled(ada.post(url, {"challenge": "none"}), at_most=60)
    assert ada.get(reverse("api_me")).status_code == 200  # reading is not an upload
    assert token_client("grace").post(url, {"challenge": "none"}).status_code == 400


def test_off_means_no_limit(db, rates):
    rates(api_anon=None)
    client = APIClient()
    url = reverse("api_submission", args=[999_999])
    assert {client.get(url).status_code for _ in range(200)} == {404}


# --- Sign-up and password reset ----------------------------------------------------------


def signup_data(username: str) -> dict:
    return {
        "username": username,
        "email": f"{username}@example.org",
        "password1": PASSWORD,
        "password2": PASSWORD,
    }


def test_sign_ups_are_limited_per_address(client, db, rates):
    rates(signup="2/hour")
    url = reverse("signup")
    assert client.post(url, {"username": "x"}, REMOTE_ADDR="192.0.2.1").status_code == 200
    response = client.post(url, signup_data("grace"), REMOTE_ADDR="192.0.2.1")
    assert response.status_code == 302
    client.logout()
    response = client.post(url, signup_data("alan"), REMOTE_ADDR="192.0.2.1")
    assert response.status_code == 429
    assert 3590 <= int(response["Retry-After"]) <= 3600
    page = response.content.decode()
    assert "Too many sign-up forms sent from your address: at most 2 per hour." in page
    assert "Please try again in 60 minutes." in page
    assert not client.session.get("_auth_user_id")
    assert client.get(url, REMOTE_ADDR="192.0.2.1").status_code == 200  # the form still shows
    response = client.post(url, signup_data("alan"), REMOTE_ADDR="192.0.2.2")
    assert response.status_code == 302  # another address


def test_password_resets_are_limited_per_address(client, db, rates):
    rates(password_reset="1/hour")
    make_user("ada")
    url = reverse("password_reset")
    assert client.post(url, {"email": "ada@example.org"}).status_code == 302
    assert len(mail.outbox) == 1
    response = client.post(url, {"email": "ada@example.org"})
    assert response.status_code == 429
    assert int(response["Retry-After"]) > 0
    assert "Too many password-reset requests from your address" in response.content.decode()
    assert len(mail.outbox) == 1
    assert client.get(url).status_code == 200


def test_the_limits_are_off_when_set_so(client, db, rates):
    rates(signup=None)
    url = reverse("signup")
    assert {client.post(url, {"username": "x"}).status_code for _ in range(30)} == {200}
