"""accounts.forms: the sign-up form, and the profile form with its e-mail notification
settings (off by default, saved, refused without an address). The pages that show them
are tested in test_views.py."""

import re

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from challenge_site.accounts.forms import ProfileForm, SignUpForm
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


def test_sign_up_makes_the_account_and_its_profile_at_once(db):
    form = SignUpForm(
        {
            "username": "grace",
            "email": "grace@example.org",
            "password1": "a-long-Passphrase-42",
            "password2": "a-long-Passphrase-42",
        }
    )
    assert form.is_valid(), form.errors
    user = form.save()
    assert (user.email, user.profile.display_name, user.profile.affiliation) == (
        "grace@example.org",
        "",
        "",
    )
    again = SignUpForm({**form.data, "username": "grace2", "email": "GRACE@example.org"})
    assert not again.is_valid()
    assert again.errors["email"] == ["An account with this e-mail address already exists."]


def test_the_profile_form_splits_identity_from_notifications(ada):
    form = ProfileForm(instance=profile_for(ada))
    assert [field.name for field in form.identity_fields()] == ["display_name", "affiliation"]
    assert [field.name for field in form.notification_fields()] == [
        "email_on_scoring_finished",
        "email_on_results_published",
    ]


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
