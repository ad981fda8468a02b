"""The announcements' pages: the news page (published announcements, newest first, seen
by whoever sees the challenge) and the unsubscribe link of announcement e-mails (signed,
no login, confirmed by a POST)."""

from datetime import timedelta

import pytest
from django.core import signing
from django.test import Client
from django.urls import reverse

from challenge_site.announcements import services
from challenge_site.announcements.models import EmailOptOut
from tests.factories import VALIDATION, make_challenge, make_user
from tests.pages import page_text

from .helpers import joined, make_announcement

# --- The news page --------------------------------------------------------------------------


def news_url(challenge):
    return reverse("challenge_news", args=[challenge.slug])


def test_url_name_and_address(challenge):
    assert news_url(challenge) == "/challenges/demo/news/"


def test_published_announcements_newest_first_in_markdown(client, challenge):
    make_announcement(challenge, "Older", published_at=VALIDATION - timedelta(days=5))
    newer = make_announcement(
        challenge,
        "Newer",
        body="Validation targets are **out**.\n\n<script>alert(1)</script>",
        published_at=VALIDATION - timedelta(days=1),
    )
    make_announcement(challenge, "Unpublished", published_at=None)
    make_announcement(challenge, "Scheduled", published_at=VALIDATION + timedelta(minutes=1))
    make_announcement(make_challenge(slug="other"), "Someone else's")

    response = client.get(news_url(challenge))
    assert response.status_code == 200
    html, text = response.content.decode(), page_text(response)
    assert text.index("Newer") < text.index("Older")
    for hidden in ("Unpublished", "Scheduled", "Someone else's"):
        assert hidden not in text
    assert "Validation targets are <strong>out</strong>." in html
    assert "<script>" not in html.split("<main", 1)[1]
    assert f'id="announcement-{newer.pk}"' in html
    assert "19 Jan 2030, 12:00 UTC" in text


def test_no_news_yet(client, challenge):
    assert "No news yet." in page_text(client.get(news_url(challenge)))


def test_the_news_tab_is_current_and_on_the_other_tabs(client, challenge):
    html = client.get(news_url(challenge)).content.decode()
    assert f'<a href="{news_url(challenge)}" aria-current="page">News</a>' in html
    overview = client.get(reverse("challenge_detail", args=[challenge.slug])).content.decode()
    assert f'<a href="{news_url(challenge)}">News</a>' in overview


@pytest.fixture
def draft(db):
    draft = make_challenge(slug="draft", title="Draft challenge", opened_at=None)
    make_announcement(draft, "Secret plans")
    return draft


@pytest.mark.parametrize("who", ["anonymous", "participant", "organiser of another"])
def test_a_drafts_news_is_404_for_non_organisers(client, draft, who):
    if who == "participant":
        client.force_login(make_user("ada"))
    elif who == "organiser of another":
        client.force_login(make_user("other", organiser_of=make_challenge(slug="other")))
    response = client.get(news_url(draft))
    assert response.status_code == 404
    assert "Secret plans" not in response.content.decode()


def test_a_drafts_organisers_read_its_news(client, draft, staff):
    client.force_login(make_user("organiser", organiser_of=draft))
    assert "Secret plans" in page_text(client.get(news_url(draft)))
    client.force_login(staff)
    assert "Secret plans" in page_text(client.get(news_url(draft)))


def test_unknown_challenge_is_404(client, db):
    assert client.get("/challenges/nope/news/").status_code == 404


def test_only_get_and_head(client, challenge):
    assert client.post(news_url(challenge)).status_code == 405


# --- The unsubscribe link ---------------------------------------------------------------


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
