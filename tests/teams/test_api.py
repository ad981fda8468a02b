"""teams.api: GET/POST /api/v1/challenges/<slug>/team/, the team page's actions for a
client (`puc team`), and a 400 with its reason for any odd body."""

import pytest
import time_machine
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from challenge_site.teams.models import Team
from tests.factories import VALIDATION, make_user


@pytest.fixture
def ada(db):
    return make_user("ada", display_name="Zadrozny, B")


@pytest.fixture
def bob(db):
    return make_user("bob", display_name="Langford, J")


def test_the_team_api(challenge, ada, bob):
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=ada).key}")
    url = "/api/v1/challenges/demo/team/"
    with time_machine.travel(VALIDATION, tick=False):
        assert api.get(url).json()["team"] is None
        body = api.post(url, {"action": "create", "name": "Gaze"}, format="json").json()
        code = body["team"]["invite_code"]
        assert body["team"]["label"] == "Gaze (Zadrozny, B)"
        other = APIClient()
        other.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=bob).key}")
        joined = other.post(url, {"action": "join", "code": code}, format="json").json()
        assert [m["username"] for m in joined["team"]["members"]] == ["ada", "bob"]
        refused = other.post(url, {"action": "dance"}, format="json")
        assert refused.status_code == 400 and "action must be one of" in refused.json()["detail"]
        assert APIClient().get(url).status_code in (401, 403)


@pytest.mark.parametrize(
    "body",
    [
        [],
        "x",
        123,
        {"action": "accept", "invitation": "²"},
        {"action": "accept", "invitation": 10**30},
        {"action": "create", "name": "x" * 5000},
        {"action": "create", "name": "Nul\u0000team"},
        {"action": "create", "name": "Zero\u200bwidth"},
        {"action": "invite", "username": "a\u0000b"},
        {"action": "join", "code": "\u0000"},
        {"action": ["create"]},
    ],
)
def test_the_team_api_answers_odd_bodies_with_400(challenge, ada, body):
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=ada).key}")
    with time_machine.travel(VALIDATION, tick=False):
        if isinstance(body, dict) and body.get("action") == "invite":
            api.post(
                "/api/v1/challenges/demo/team/", {"action": "create", "name": "T"}, format="json"
            )
        response = api.post("/api/v1/challenges/demo/team/", body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["detail"]
    assert not Team.objects.filter(name__startswith="x").exists()
