import re

import pytest
from django.contrib.auth.models import User
from django.core import mail
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token

from challenge_site.accounts.models import Profile

PASSWORD = "a-long-Passphrase-42"


@pytest.fixture
def user(db):
    user = User.objects.create_user("ada", "ada@example.org", PASSWORD)
    Profile.objects.create(user=user, display_name="Ada L.", affiliation="Analytical Engines")
    return user


def _signup(client, **overrides):
    data = {
        "username": "grace",
        "email": "grace@example.org",
        "display_name": "Grace H.",
        "affiliation": "Navy",
        "password1": PASSWORD,
        "password2": PASSWORD,
    }
    data.update(overrides)
    return client.post(reverse("signup"), data)


def test_signup_creates_user_and_profile_and_logs_in(client, db):
    response = _signup(client)
    assert response.status_code == 302 and response["Location"] == reverse("home")
    user = User.objects.get(username="grace")
    assert (user.email, user.profile.display_name, user.profile.affiliation) == (
        "grace@example.org",
        "Grace H.",
        "Navy",
    )
    assert client.get(reverse("profile")).status_code == 200


def test_signup_errors_are_shown_next_to_fields(client, user):
    response = _signup(client, email="ADA@example.org", password2="different")
    page = response.content.decode()
    assert response.status_code == 200
    assert "An account with this e-mail address already exists." in page
    assert "The two password fields didn’t match." in page
    assert User.objects.count() == 1


def test_login_and_logout(client, user):
    response = client.post(reverse("login"), {"username": "ada", "password": PASSWORD})
    assert response.status_code == 302
    assert "Profile (ada)" in client.get(reverse("home")).content.decode()
    assert (
        client.get(reverse("logout")).status_code == 405
    )  # logging out takes a POST (CSRF-protected)
    assert client.post(reverse("logout")).status_code == 302
    assert "Log in" in client.get(reverse("home")).content.decode()


def test_wrong_password_is_refused(client, user):
    response = client.post(reverse("login"), {"username": "ada", "password": "nope"})
    assert response.status_code == 200
    assert "Please enter a correct username and password" in response.content.decode()


def test_profile_requires_login(client, db):
    response = client.get(reverse("profile"))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


def test_profile_update(client, user):
    client.force_login(user)
    response = client.post(
        reverse("profile"), {"display_name": "Countess", "affiliation": "Royal Society"}
    )
    assert response.status_code == 302
    user.profile.refresh_from_db()
    assert (user.profile.display_name, user.profile.affiliation) == ("Countess", "Royal Society")


def test_profile_is_created_for_accounts_made_elsewhere(client, db):
    staff = User.objects.create_user("made-in-admin", password=PASSWORD)
    client.force_login(staff)
    assert client.get(reverse("profile")).status_code == 200
    assert Profile.objects.filter(user=staff).exists()


def test_password_change(client, user):
    client.force_login(user)
    response = client.post(
        reverse("password_change"),
        {
            "old_password": PASSWORD,
            "new_password1": "another-Secret-77",
            "new_password2": "another-Secret-77",
        },
    )
    assert response.status_code == 302
    user.refresh_from_db()
    assert user.check_password("another-Secret-77")


def test_password_reset_by_email(client, user):
    response = client.post(reverse("password_reset"), {"email": "ada@example.org"})
    assert response.status_code == 302
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == ["ada@example.org"] and "Reset your password" in message.subject
    link = re.search(r"http://testserver(/accounts/reset/\S+/)", message.body).group(1)
    form_url = client.get(link)["Location"]  # Django swaps the token for a session key
    response = client.post(
        form_url, {"new_password1": "fresh-Secret-99", "new_password2": "fresh-Secret-99"}
    )
    assert response.status_code == 302
    user.refresh_from_db()
    assert user.check_password("fresh-Secret-99")


def test_api_token_is_created_regenerated_and_authenticates(client, user):
    client.force_login(user)
    assert "You have no API token yet." in client.get(reverse("profile")).content.decode()
    client.post(reverse("token_regenerate"))
    first = Token.objects.get(user=user).key
    assert first in client.get(reverse("profile")).content.decode()

    api = Client()
    assert api.get(reverse("api_me")).status_code == 401
    response = api.get(reverse("api_me"), headers={"authorization": f"Token {first}"})
    assert response.json() == {
        "username": "ada",
        "display_name": "Ada L.",
        "affiliation": "Analytical Engines",
    }

    client.post(reverse("token_regenerate"))
    second = Token.objects.get(user=user).key
    assert second != first
    assert (
        api.get(reverse("api_me"), headers={"authorization": f"Token {first}"}).status_code == 401
    )
    assert (
        api.get(reverse("api_me"), headers={"authorization": f"Token {second}"}).status_code == 200
    )


def test_token_regeneration_takes_a_post(client, user):
    client.force_login(user)
    assert client.get(reverse("token_regenerate")).status_code == 405
    assert not Token.objects.exists()


def test_csrf_is_enforced_on_forms(user):
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(user)
    assert strict.post(reverse("token_regenerate")).status_code == 403
    assert strict.post(reverse("profile"), {"display_name": "x"}).status_code == 403
    assert Client(enforce_csrf_checks=True).post(reverse("signup"), {}).status_code == 403


def test_drf_create_token_command(user, capsys):
    call_command("drf_create_token", "ada")
    assert Token.objects.get(user=user).key in capsys.readouterr().out


def test_the_first_token_is_not_said_to_replace_one(client, user):
    client.force_login(user)
    first = client.post(reverse("token_regenerate"), follow=True).content.decode()
    assert "API token created: use it with" in first
    assert "no longer works" not in first
    second = client.post(reverse("token_regenerate"), follow=True).content.decode()
    assert "New API token created; the previous one no longer works." in second
