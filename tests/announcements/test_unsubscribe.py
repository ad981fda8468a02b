"""The unsubscribe link of announcement e-mails: signed, no login, confirmed by a POST."""

import pytest
from django.core import signing
from django.test import Client
from django.urls import reverse

from challenge_site.announcements import services
from challenge_site.announcements.models import EmailOptOut
from tests.factories import VALIDATION, make_user
from tests.pages import page_text

from .helpers import joined, make_announcement


@pytest.fixture
def ada(db):
    return make_user("ada")


def url_for(token):
    return reverse("announcement_unsubscribe", args=[token])


def test_confirm_then_unsubscribed_then_subscribe_again(ada):
    client = Client(enforce_csrf_checks=True)  # no login
    url = services.unsubscribe_path(ada)

    page = client.get(url)
    assert page.status_code == 200
    assert "Unsubscribe a…@example.org from the announcements of every challenge" in page_text(page)
    assert (
        not EmailOptOut.objects.exists()
    )  # a GET (a mail scanner following links) changes nothing

    token = page.cookies["csrftoken"].value
    response = client.post(url, {"action": "unsubscribe", "csrfmiddlewaretoken": token})
    assert response.status_code == 302 and response["Location"] == url
    assert EmailOptOut.objects.filter(user=ada).exists()
    assert "You are unsubscribed" in page_text(client.get(url))

    # Twice is the same as once.
    client.post(url, {"action": "unsubscribe", "csrfmiddlewaretoken": token})
    assert EmailOptOut.objects.filter(user=ada).count() == 1

    client.post(url, {"action": "resubscribe", "csrfmiddlewaretoken": token})
    assert not EmailOptOut.objects.exists()
    assert "Unsubscribe a…@example.org" in page_text(client.get(url))


def test_the_post_needs_the_csrf_token(ada):
    client = Client(enforce_csrf_checks=True)
    response = client.post(services.unsubscribe_path(ada), {"action": "unsubscribe"})
    assert response.status_code == 403
    assert not EmailOptOut.objects.exists()


def test_the_token_names_its_user_only(ada):
    bob = make_user("bob")
    Client().post(services.unsubscribe_path(ada), {"action": "unsubscribe"})
    assert list(EmailOptOut.objects.values_list("user__username", flat=True)) == ["ada"]
    assert services.unsubscribe_token(ada) != services.unsubscribe_token(bob)


def tampered(token: str) -> list[str]:
    value, signature = token.rsplit(":", 1)
    other = "A" if signature[-1] != "A" else "B"
    return [
        token[:-1] + other,  # signature changed
        token[:-5],  # cut short
        signing.dumps(2, salt=services.UNSUBSCRIBE_SALT).split(":")[0] + ":" + signature,
        signing.dumps(1),  # signed, but not for unsubscribing
        signing.dumps("1", salt=services.UNSUBSCRIBE_SALT),  # signed, not a user id
        "not-a-token",
        "é:ü",
    ]


@pytest.mark.parametrize("method", ["get", "post"])
def test_a_tampered_token_gets_a_clear_400(ada, method):
    client = Client()
    for token in tampered(services.unsubscribe_token(ada)):
        response = getattr(client, method)(url_for(token), {"action": "unsubscribe"})
        assert response.status_code == 400, token
        assert "This unsubscribe link is not valid" in page_text(response)
    assert not EmailOptOut.objects.exists()


def test_a_token_whose_account_is_gone_gets_404(ada):
    url = services.unsubscribe_path(ada)
    ada.delete()
    response = Client().get(url)
    assert response.status_code == 404
    assert "no longer exists" in page_text(response)


def test_unsubscribed_people_get_no_more_announcements(
    challenge, gaze, mailoutbox, django_capture_on_commit_callbacks
):
    ada, bob = joined(challenge, "ada"), joined(challenge, "bob")
    Client().post(services.unsubscribe_path(ada), {"action": "unsubscribe"})
    announcement = make_announcement(challenge)
    with django_capture_on_commit_callbacks(execute=True):
        services.request_email(
            announcement_id=announcement.pk, user=None, site_url="http://x", now=VALIDATION
        )
    assert [message.to for message in mailoutbox] == [[bob.email]]
