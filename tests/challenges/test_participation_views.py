"""challenges.participation_views: the join page (the rules rendered, the box to tick,
waiting for approval, back to the page the user came from)."""

from datetime import timedelta

import pytest
import time_machine
from django.test import Client
from django.urls import reverse

from challenge_site.challenges import policy
from challenge_site.challenges.models import Participant
from tests.challenges.test_policy import set_options as _set_options
from tests.factories import VALIDATION, make_challenge, make_user
from tests.pages import page_text

JOIN = reverse("challenge_join", args=["demo"])
SUBMIT = reverse("submit", args=["demo"])
DAY = timedelta(days=1)


@pytest.fixture
def ada(db):
    return make_user("ada")


def _logged_in(user) -> Client:
    """Logged in at VALIDATION (a session opened today would have expired by then)."""
    client = Client()
    with time_machine.travel(VALIDATION, tick=False):
        client.force_login(user)
    return client


def test_join_page_shows_the_rules_rendered_and_asks_anonymous_visitors_to_log_in(challenge):
    challenge.rules = "No **hand labelling** of the test inputs."
    _set_options(challenge, "rules")
    with time_machine.travel(VALIDATION, tick=False):
        response = Client().get(JOIN)
    assert response.status_code == 200
    page = response.content.decode()
    assert "No <strong>hand labelling</strong> of the test inputs." in page
    assert 'href="/accounts/login/?next=%2Fchallenges%2Fdemo%2Fjoin%2F"' in page
    assert '<form method="post" class="stacked"' not in page
    assert "participants accept the rules below" in page_text(response)


def test_anonymous_post_goes_to_the_login_page(challenge):
    _set_options(challenge, "rules")
    response = Client().post(JOIN, {"accept_rules": "on"})
    assert response.status_code == 302
    assert response["Location"] == f"/accounts/login/?next={JOIN}"
    assert not Participant.objects.exists()


def test_join_page_needs_the_box_ticked_when_the_rules_must_be_accepted(challenge, ada):
    _set_options(challenge, "rules")
    client = _logged_in(ada)
    with time_machine.travel(VALIDATION, tick=False):
        page = client.get(JOIN).content.decode()
        assert 'name="accept_rules"' in page and "I accept the rules" in page
        response = client.post(JOIN, {})
    assert response.status_code == 400
    assert "Tick “I accept the rules”: this challenge asks for it." in page_text(response)
    assert not Participant.objects.exists()


def test_accepting_the_rules_on_the_join_page_records_the_time(challenge, ada):
    _set_options(challenge, "rules")
    client = _logged_in(ada)
    accepted = VALIDATION + timedelta(minutes=7, seconds=5)
    with time_machine.travel(accepted, tick=False):
        response = client.post(JOIN, {"accept_rules": "on"})
    assert response.status_code == 302 and response["Location"] == JOIN
    participant = Participant.objects.get(challenge=challenge, user=ada)
    assert participant.rules_accepted_at == accepted
    assert policy.may_take_part(challenge, user=ada)
    with time_machine.travel(accepted + DAY, tick=False):
        response = client.get(JOIN)
    text = page_text(response)
    assert "Rules accepted on 20 Jan 2030, 12:07:05 UTC" in text
    assert "You may download the data and submit." in text
    assert 'name="accept_rules"' not in response.content.decode()  # nothing more to do


def test_with_approval_the_participant_waits_for_the_organisers(challenge, ada):
    _set_options(challenge, "both")
    client = _logged_in(ada)
    with time_machine.travel(VALIDATION, tick=False):
        response = client.post(JOIN, {"accept_rules": "on"}, follow=True)
    text = page_text(response)
    assert "You joined. The organisers will approve your participation." in text
    assert "Waiting for the organisers' approval." in text
    assert "Your participation in Demo challenge is waiting for the organisers' approval." in text
    participant = Participant.objects.get()
    assert participant.rules_accepted_at == VALIDATION and participant.approved_at is None


def test_joining_a_challenge_without_options_needs_no_box(challenge, ada):
    client = _logged_in(ada)
    with time_machine.travel(VALIDATION, tick=False):
        page = client.get(JOIN)
        assert "Joining is optional" in page_text(page)
        assert 'name="accept_rules"' not in page.content.decode()
        response = client.post(JOIN, {})
    assert response.status_code == 302
    participant = Participant.objects.get()
    assert (participant.user, participant.joined, participant.rules_accepted_at) == (
        ada,
        VALIDATION,
        None,
    )


@pytest.mark.parametrize(
    ("next_", "expected"),
    [
        (SUBMIT, SUBMIT),
        ("https://evil.example/", JOIN),
        ("//evil.example/", JOIN),
        ("\x00", JOIN),
    ],
)
def test_join_brings_the_user_back_to_a_page_of_the_site(challenge, ada, next_, expected):
    _set_options(challenge, "rules")
    with time_machine.travel(VALIDATION, tick=False):
        response = _logged_in(ada).post(f"{JOIN}?next=x", {"accept_rules": "on", "next": next_})
    assert response.status_code == 302 and response["Location"] == expected


def test_join_needs_the_csrf_token(challenge, ada):
    client = Client(enforce_csrf_checks=True)
    client.force_login(ada)
    assert client.post(JOIN, {}).status_code == 403
    assert not Participant.objects.exists()


def test_join_page_of_a_draft_is_404_but_for_its_organisers(db):
    draft = make_challenge(opened_at=None, require_rules_acceptance=True)
    organiser = make_user("organiser", organiser_of=draft)
    assert _logged_in(make_user("ada")).get(JOIN).status_code == 404
    assert _logged_in(make_user("bob")).post(JOIN, {"accept_rules": "on"}).status_code == 404
    response = _logged_in(organiser).get(JOIN)
    assert response.status_code == 200
    assert "You organise this challenge" in page_text(response)


def test_join_page_answers_only_get_and_post(challenge, ada):
    assert _logged_in(ada).put(JOIN).status_code == 405
