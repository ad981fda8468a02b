"""The profile page's e-mail notification settings: off by default, saved, refused
without an address."""

import re

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from challenge_site.accounts.services import profile_for
from tests.factories import make_user
from tests.pages import page_text

LABELS = (
    "E-mail me when a submission of mine has finished scoring",
    "E-mail me when a challenge I submitted to publishes its results",
)


@pytest.fixture
def ada(db):
    return make_user("ada")


def test_both_are_off_until_ticked_and_are_saved(client, ada):
    client.force_login(ada)
    page = client.get(reverse("profile"))
    text = page_text(page)
    assert "E-mail notifications Sent to ada@example.org." in text
    assert all(label in text for label in LABELS)
    assert 'name="email_on_scoring_finished"' in page.content.decode()
    assert re.search(r'<input[^>]*name="email_on_\w+"[^>]*checked', page.content.decode()) is None
    response = client.post(
        reverse("profile"),
        {"display_name": "Ada", "affiliation": "", "email_on_results_published": "on"},
    )
    assert response.status_code == 302
    profile = profile_for(ada)
    assert (profile.email_on_scoring_finished, profile.email_on_results_published) == (False, True)
    client.post(reverse("profile"), {"display_name": "Ada", "email_on_scoring_finished": "on"})
    profile.refresh_from_db()
    assert (profile.email_on_scoring_finished, profile.email_on_results_published) == (True, False)


def test_an_account_without_an_address_is_told_why_not(client, db):
    user = User.objects.create_user("noaddress", "", "a-long-Passphrase-42")
    client.force_login(user)
    response = client.post(reverse("profile"), {"email_on_scoring_finished": "on"})
    assert response.status_code == 200
    assert "Your account has no e-mail address to send this to" in page_text(response)
    assert profile_for(user).email_on_scoring_finished is False
