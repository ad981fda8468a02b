"""The news page: published announcements, newest first, seen by whoever sees the challenge."""

from datetime import timedelta

import pytest
from django.urls import reverse

from tests.factories import VALIDATION, make_challenge, make_user
from tests.pages import page_text

from .helpers import make_announcement


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
