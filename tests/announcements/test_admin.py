"""Posting and e-mailing announcements in the admin, each organiser for their challenges."""

import pytest
from django.urls import reverse

from challenge_site.announcements.models import Announcement, EmailState
from challenge_site.mailing.models import Delivery
from tests.factories import VALIDATION, make_challenge, make_user
from tests.pages import page_text

from .helpers import joined, make_announcement, submitter

CHANGELIST = "admin:announcements_announcement_changelist"


@pytest.fixture
def three(challenge, gaze):
    return [joined(challenge, "ada"), joined(challenge, "bob"), submitter(challenge, "cy")]


@pytest.fixture
def other_organiser(db):
    return make_user("rival", organiser_of=make_challenge(slug="other", title="Other challenge"))


@pytest.fixture
def email_action(django_capture_on_commit_callbacks):
    """The action on one announcement; the request's on-commit callbacks (queueing the
    task, which runs in-process) run as the request ends, as in production."""

    def post(client, announcement, **extra):
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(
                reverse(CHANGELIST),
                {"action": "email_participants", "_selected_action": [announcement.pk], **extra},
            )
        if response.status_code == 302:  # done: back to the list, with the messages
            return client.get(response["Location"])
        return response

    return post


def test_organiser_posts_news_that_shows_on_the_news_page(client, challenge, organiser):
    client.force_login(organiser)
    response = client.post(
        reverse("admin:announcements_announcement_add"),
        {
            "challenge": challenge.pk,
            "title": "Validation targets out",
            "body": "See the *Data* tab.",
            "published_at_0": "2030-01-20",
            "published_at_1": "11:00:00",
        },
    )
    assert response.status_code == 302, page_text(response)
    announcement = Announcement.objects.get()
    assert announcement.author == organiser
    assert announcement.email_state == EmailState.NOT_SENT
    news = client.get(reverse("challenge_news", args=[challenge.slug]))
    assert "Validation targets out" in page_text(news)
    assert "<em>Data</em>" in news.content.decode()


def test_organiser_cannot_post_to_another_challenge(client, challenge, other_organiser):
    client.force_login(other_organiser)
    response = client.post(
        reverse("admin:announcements_announcement_add"),
        {"challenge": challenge.pk, "title": "Hijack", "body": "x"},
    )
    assert response.status_code == 200
    assert "Select a valid choice" in page_text(response)
    assert not Announcement.objects.exists()


def test_confirmation_says_how_many_then_sends_once(
    email_action, client, challenge, organiser, three, mailoutbox
):
    announcement = make_announcement(challenge)
    client.force_login(organiser)

    page = email_action(client, announcement)
    assert page.status_code == 200
    assert "3 people will receive it" in page_text(page)
    assert mailoutbox == []  # nothing before the confirmation

    done = email_action(client, announcement, post="yes")
    assert "E-mailing 1 announcement(s)" in page_text(done)
    assert sorted(m.to[0] for m in mailoutbox) == [u.email for u in three]
    assert mailoutbox[0].extra_headers["List-Unsubscribe"].startswith("<http://testserver/")
    announcement.refresh_from_db()
    assert announcement.email_state == EmailState.SENT
    assert announcement.email_requested_by == organiser
    assert "E-mailed on 20 Jan 2030 12:00 UTC: 3 of 3 sent" in page_text(done)

    again = email_action(client, announcement)
    assert "e-mailed only once" in page_text(again)
    email_action(client, announcement, post="yes")
    assert len(mailoutbox) == 3


def test_unpublished_announcements_are_refused_with_a_reason(
    email_action, client, challenge, organiser, three
):
    announcement = make_announcement(challenge, published_at=None)
    client.force_login(organiser)
    response = email_action(client, announcement, post="yes")
    assert "is not published: publish it first" in page_text(response)
    announcement.refresh_from_db()
    assert announcement.email_state == EmailState.NOT_SENT


def test_a_stopped_email_is_resumed_for_the_rest_only(
    email_action, client, challenge, organiser, three, mailoutbox
):
    announcement = make_announcement(challenge)
    Announcement.objects.filter(pk=announcement.pk).update(
        email_state=EmailState.SENDING, email_requested_at=VALIDATION, email_recipients=3
    )
    Delivery.objects.create(
        kind="announcement",
        mailing_id=announcement.pk,
        user=three[0],
        email=three[0].email,
        claimed_at=VALIDATION,
    )
    client.force_login(organiser)
    page = email_action(client, announcement)
    assert "resuming sends it to the 2 people who have not received it yet" in page_text(page)
    email_action(client, announcement, post="yes")
    assert sorted(m.to[0] for m in mailoutbox) == [three[1].email, three[2].email]


def test_organiser_of_another_challenge_can_neither_see_nor_send(
    email_action, client, challenge, three, other_organiser, mailoutbox
):
    announcement = make_announcement(challenge, "Ours alone")
    client.force_login(other_organiser)

    listing = client.get(reverse(CHANGELIST))
    assert listing.status_code == 200 and "Ours alone" not in page_text(listing)
    change = client.get(
        reverse("admin:announcements_announcement_change", args=[announcement.pk]), follow=True
    )
    assert "doesn’t exist" in page_text(change)

    response = email_action(client, announcement, post="yes")
    assert "No announcement you may e-mail was selected." in page_text(response)
    assert mailoutbox == []
    announcement.refresh_from_db()
    assert announcement.email_state == EmailState.NOT_SENT


def test_superuser_sees_and_sends_every_challenges_news(
    email_action, client, challenge, three, staff, mailoutbox
):
    announcement = make_announcement(challenge, "Anyone's")
    client.force_login(staff)
    assert "Anyone's" in page_text(client.get(reverse(CHANGELIST)))
    email_action(client, announcement, post="yes")
    assert len(mailoutbox) == 3


def test_participants_without_staff_status_get_no_admin(client, challenge, three):
    client.force_login(three[0])
    response = client.get(reverse(CHANGELIST))
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_post_news_publishes_now_unless_scheduled_and_says_which(client, challenge, organiser):
    import time_machine

    client.force_login(organiser)
    add = reverse("admin:announcements_announcement_add")
    with time_machine.travel(VALIDATION, tick=False):
        form = client.get(add).content.decode()
        # The form starts with "now" filled in: saving it as it is publishes.
        assert 'name="published_at_0" value="20/01/2030"' in form
        assert 'name="published_at_1" value="12:00:00"' in form

        def post(title, date="", time=""):
            response = client.post(
                add,
                {
                    "challenge": challenge.pk,
                    "title": title,
                    "body": "x",
                    "published_at_0": date,
                    "published_at_1": time,
                },
                follow=True,
            )
            return page_text(response)

        now = post("Now", "2030-01-20", "12:00:00")
        later = post("Later", "2030-01-25", "09:00:00")
        draft = post("Draft")
        news = page_text(client.get(reverse("challenge_news", args=[challenge.slug])))
    assert "“Now” is published on the challenge's news page." in now
    assert "“Later” is scheduled: it appears on the news page on 25 Jan 2030" in later
    assert "“Draft” is a draft: it is not on the news page." in draft
    assert "Now" in news and "Later" not in news and "Draft" not in news
