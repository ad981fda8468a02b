"""An organiser looks at their challenge as a participant would, and back."""

import pytest
import time_machine
from django.test import Client
from django.urls import reverse

from tests.factories import AFTER, VALIDATION, make_challenge, make_dataset, make_user
from tests.leaderboard.helpers import add_entry, reg


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _toggle(client, slug, on: bool, next_url=""):
    return client.post(
        reverse("challenge_preview", args=[slug]), {"on": "1" if on else "0", "next": next_url}
    )


@pytest.mark.django_db
def test_hidden_test_scores_disappear_in_the_participants_view_and_come_back():
    challenge = make_challenge()
    dataset = make_dataset(challenge, "gaze")
    add_entry(dataset, user=make_user("ann"), val=reg(0.5, 0.4), test=reg(0.25, 0.125))
    organiser = make_user("org", organiser_of=challenge)
    board = reverse("leaderboard", args=["demo", "gaze"]) + "?split=test"
    with time_machine.travel(AFTER, tick=False):
        client = _client(organiser)  # (logged in inside the clock: the session is fresh)
        assert "0.125" in client.get(board).content.decode()
        response = _toggle(client, "demo", True, board)
        assert response.status_code == 302 and response.url == board
        page = client.get(board).content.decode()
        assert "0.125" not in page
        assert "as a participant would" in page and "Back to the organiser" in page
        _toggle(client, "demo", False)
        assert "0.125" in client.get(board).content.decode()


@pytest.mark.django_db
def test_a_draft_in_the_participants_view_shows_as_if_open():
    draft = make_challenge(slug="draft", opened_at=None)
    make_dataset(draft, "gaze")
    organiser = make_user("org", organiser_of=draft)
    detail = reverse("challenge_detail", args=["draft"])
    with time_machine.travel(VALIDATION, tick=False):
        client = _client(organiser)
        page = client.get(detail).content.decode()
        assert "Draft." in page and "View as a participant" in page
        _toggle(client, "draft", True)
        page = client.get(detail).content.decode()
        assert "Draft." in page and "as a participant would" in page
        dataset_page = client.get(reverse("dataset_detail", args=["draft", "gaze"]))
        assert dataset_page.status_code == 200
        # everyone else still gets a 404
        assert Client().get(detail).status_code == 404


@pytest.mark.django_db
def test_only_organisers_may_switch_and_only_to_this_site():
    challenge = make_challenge()
    make_user("org", organiser_of=challenge)
    other = make_challenge(slug="other", title="Other")
    stranger = _client(make_user("elsewhere", organiser_of=other))
    assert _toggle(stranger, "demo", True).status_code == 404
    assert Client().post(reverse("challenge_preview", args=["demo"])).status_code == 302  # login
    organiser = _client(make_user("org2", organiser_of=challenge))
    response = _toggle(organiser, "demo", True, "https://evil.example/")
    assert response.url == reverse("challenge_detail", args=["demo"])
    assert organiser.get(reverse("challenge_preview", args=["demo"])).status_code == 405
    # the banner is for organisers only
    page = _client(make_user("ann")).get(reverse("challenge_detail", args=["demo"]))
    assert "View as a participant" not in page.content.decode()


@pytest.mark.django_db
def test_every_page_offers_the_way_back_and_the_preview_ends_by_itself():
    challenge = make_challenge()
    make_dataset(challenge, "gaze")
    organiser = make_user("org", organiser_of=challenge)
    with time_machine.travel(VALIDATION, tick=False) as clock:
        client = _client(organiser)
        _toggle(client, "demo", True)
        # A page of no challenge (the home page, the profile) says so, with its button.
        for url in (reverse("home"), reverse("profile")):
            page = client.get(url).content.decode()
            assert "challenge you organise <strong>as a participant would</strong>" in page
            assert reverse("end_previews") in page
        ended = client.post(reverse("end_previews"), {"next": reverse("profile")})
        assert ended.status_code == 302 and ended.url == reverse("profile")
        assert "as a participant would" not in client.get(reverse("home")).content.decode()
        # Switched on again, it lasts an hour at most.
        _toggle(client, "demo", True)
        detail = reverse("challenge_detail", args=["demo"])
        assert "as a participant would" in client.get(detail).content.decode()
        clock.shift(3601)
        page = client.get(detail).content.decode()
        assert "as a participant would" not in page and "View as a participant" in page
