"""``Authorization: Bearer TOKEN`` works wherever ``Authorization: Token TOKEN`` does."""

import pytest
from django.test import Client
from rest_framework.authtoken.models import Token

from tests.factories import make_user


@pytest.fixture
def ada(db):
    return make_user("ada", display_name="Ada L.")


def me(header: str | None):
    headers = {"authorization": header} if header else {}
    return Client().get("/api/me/", headers=headers)


def test_bearer_and_token_authenticate_the_same_user(ada):
    key = Token.objects.create(user=ada).key
    for keyword in ("Bearer", "Token"):
        response = me(f"{keyword} {key}")
        assert response.status_code == 200
        assert response.json()["username"] == "ada"


@pytest.mark.parametrize(
    "header", [None, "Bearer not-a-token", "Bearer", "Bearer a b", "Basic YWRhOnB3"]
)
def test_no_or_a_wrong_bearer_token_is_refused_with_401(ada, header):
    Token.objects.create(user=ada)
    response = me(header)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"  # the scheme a client is told to use


def test_a_regenerated_token_stops_working_as_a_bearer_token(ada):
    first = Token.objects.create(user=ada).key
    Token.objects.filter(user=ada).delete()
    second = Token.objects.create(user=ada).key
    assert me(f"Bearer {first}").status_code == 401
    assert me(f"Bearer {second}").status_code == 200


def test_the_organiser_exports_take_a_bearer_token(challenge, gaze):
    organiser = make_user("olga", organiser_of=challenge)
    key = Token.objects.create(user=organiser).key
    response = Client().get(
        "/api/v1/challenges/demo/export/scores.csv", headers={"authorization": f"Bearer {key}"}
    )
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    stranger = Token.objects.create(user=make_user("sam")).key
    response = Client().get(
        "/api/v1/challenges/demo/export/scores.csv", headers={"authorization": f"Bearer {stranger}"}
    )
    assert response.status_code == 404
