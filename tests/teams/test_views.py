"""teams.views: the team page and the invitation link, as a browser uses them (the API:
test_api.py)."""

import pytest
import time_machine
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from challenge_site.teams import services
from challenge_site.teams.models import Membership, Team
from tests.factories import TEST_PHASE, VALIDATION, make_user
from tests.pages import page_text

URL = "/challenges/demo/team/"


@pytest.fixture
def ada(db):
    return make_user("ada", display_name="Zadrozny, B")


@pytest.fixture
def bob(db):
    return make_user("bob", display_name="Langford, J")


def _client(user, *, csrf=False):
    client = Client(enforce_csrf_checks=csrf)
    client.force_login(user)
    return client


def _post(user, data, *, url=URL, when=VALIDATION, csrf=False):
    with time_machine.travel(when, tick=False):
        return _client(user, csrf=csrf).post(url, data)


def _get(user, url=URL, *, when=VALIDATION):
    with time_machine.travel(when, tick=False):
        return _client(user).get(url)


def test_create_invite_by_name_and_accept(challenge, ada, bob):
    assert _post(ada, {"action": "create", "name": "Gaze"}).status_code == 302
    assert _post(ada, {"action": "invite", "username": "BOB"}).status_code == 302
    page = page_text(_get(bob))
    assert "Invitations" in page and "Gaze (Zadrozny, B)" in page
    invitation = bob.team_invitations.get()
    response = _post(bob, {"action": "respond", "invitation": invitation.pk, "accept": "1"})
    assert response.status_code == 302
    page = page_text(_get(ada))
    assert "On the leaderboards: Gaze (Zadrozny, B & Langford, J)" in page


def test_join_by_link_and_replacing_it(challenge, ada, bob):
    _post(ada, {"action": "create", "name": "Gaze"})
    team = Team.objects.get()
    link = f"{URL}join/{team.invite_code}/"
    assert "Join the team “Gaze”" in page_text(_get(bob, link))
    _post(ada, {"action": "new_link"})
    assert _get(bob, link).status_code == 404  # the old link is dead
    team.refresh_from_db()
    response = _post(bob, {}, url=f"{URL}join/{team.invite_code}/")
    assert response.status_code == 302
    assert Membership.objects.filter(team=team, user=bob).exists()


def test_refusals_are_shown_with_400(challenge, ada, bob):
    _post(ada, {"action": "create", "name": "Gaze"})
    response = _post(bob, {"action": "create", "name": "gaze"})
    assert response.status_code == 400
    assert "A team of this challenge is called “gaze” already." in page_text(response)
    response = _post(bob, {"action": "create", "name": ""})
    assert response.status_code == 400 and "This field is required." in page_text(response)
    response = _post(ada, {"action": "invite", "username": "nobody"})
    assert response.status_code == 400 and "No user is called “nobody”." in page_text(response)
    team = Team.objects.get()
    response = _post(bob, {}, url=f"{URL}join/{team.invite_code}/", when=TEST_PHASE)
    assert response.status_code == 400  # the page says why, and shows no button
    assert "Teams form until the test phase begins" in page_text(response)
    assert not Membership.objects.filter(user=bob).exists()


def test_changes_need_the_csrf_token_and_a_login(challenge, ada):
    assert _post(ada, {"action": "create", "name": "Gaze"}, csrf=True).status_code == 403
    assert not Team.objects.exists()
    with time_machine.travel(VALIDATION, tick=False):
        response = Client().post(URL, {"action": "create", "name": "Gaze"})
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_a_draft_challenges_team_page_is_a_404(challenge, ada):
    challenge.opened_at = None
    challenge.save()
    assert _get(ada).status_code == 404


def test_both_members_list_the_teams_entries_by_api(challenge, gaze, ada, bob, submit_zip):
    from tests.submissions.helpers import predictions

    team = services.create(challenge=challenge, user=ada, name="Gaze", now=VALIDATION)
    services.join(team=team, user=bob, now=VALIDATION)
    outsider = make_user("cy")
    made = submit_zip(bob, challenge, predictions("gaze"), now=VALIDATION, method="Joint GP")
    submit_zip(outsider, challenge, predictions("gaze"), now=VALIDATION, method="Solo")
    for user in (ada, bob):
        api = APIClient()
        api.credentials(
            HTTP_AUTHORIZATION=f"Bearer {Token.objects.get_or_create(user=user)[0].key}"
        )
        with time_machine.travel(VALIDATION, tick=False):
            (item,) = api.get("/api/v1/submissions/").json()["results"]
        assert (item["id"], item["method"], item["team"], item["made_by"]) == (
            made.pk,
            "Joint GP",
            "Gaze",
            "bob",
        )
        assert item["withdrawn"] is False
    with time_machine.travel(VALIDATION, tick=False):
        api.post(f"/api/v1/submissions/{made.pk}/withdraw/")
        listed = api.get("/api/v1/submissions/?status=withdrawn").json()["results"]
    assert [i["id"] for i in listed] == [made.pk] and listed[0]["withdrawn"] is True


def test_the_team_page_answers_an_odd_invitation_id_with_400(challenge, ada):
    response = _post(ada, {"action": "respond", "invitation": "abc", "accept": "1"})
    assert response.status_code == 400
    assert "That invitation is no longer open." in page_text(response)
