"""submissions.bulk_views: the organiser exports on the site and by the API: for the
challenge's organisers only (everyone else: the 404 of a challenge that does not exist),
drafts included (what the exports hold: test_bulk.py)."""

import pytest
from django.test import Client

from tests.factories import make_challenge, make_user
from tests.leaderboard.helpers import add_entry, reg

from .helpers import API_CSV_URL, API_ZIP_URL, CSV_URL, ZIP_URL, api, body, web

ALLOWED = {"organiser", "superuser"}


WHO = ["organiser", "superuser", "organiser_elsewhere", "plain_staff", "participant", "anonymous"]


@pytest.fixture
def people(challenge, organiser, staff, participant):
    elsewhere = make_challenge(slug="elsewhere")
    return {
        "organiser": organiser,
        "superuser": staff,
        "organiser_elsewhere": make_user("someone", organiser_of=elsewhere),
        "plain_staff": make_user("clerk", is_staff=True),
        "participant": participant,
        "anonymous": None,
    }


@pytest.mark.parametrize("who", WHO)
@pytest.mark.parametrize("url", [ZIP_URL, CSV_URL])
def test_only_the_challenges_organisers_export_on_the_site(gaze, people, who, url):
    add_entry(gaze, user=people["participant"], val=reg(0.5, 0.25))
    response = web(people[who]).get(url)
    assert response.status_code == (200 if who in ALLOWED else 404)
    if who not in ALLOWED:  # the same answer as for a challenge that does not exist
        missing = web(people[who]).get(url.replace("/demo/", "/nothing/"))
        assert missing.status_code == 404


@pytest.mark.parametrize("who", WHO)
@pytest.mark.parametrize("url", [API_ZIP_URL, API_CSV_URL])
def test_only_the_challenges_organisers_export_by_the_api(gaze, people, who, url):
    add_entry(gaze, user=people["participant"], val=reg(0.5, 0.25))
    client = api(people[who])
    response = client.get(url)
    if who in ALLOWED:
        assert response.status_code == 200
        assert response.streaming
        assert body(response)
    else:
        assert response.status_code == 404
        missing = client.get(url.replace("/demo/", "/nothing/"))
        assert (missing.status_code, missing.json()) == (404, response.json())


def test_an_organiser_exports_their_draft_challenge(organiser, challenge, gaze):
    challenge.opened_at = None
    challenge.save()
    assert web(organiser).get(CSV_URL).status_code == 200
    assert web(make_user("ada")).get(CSV_URL).status_code == 404


def test_an_inactive_organiser_exports_nothing(organiser, challenge):
    organiser.is_active = False
    organiser.save()
    assert api(organiser).get(API_CSV_URL).status_code == 401  # DRF: "User inactive or deleted."
    client = Client()
    client.force_login(organiser)
    assert client.get(CSV_URL).status_code == 404
