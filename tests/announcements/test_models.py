"""The announcement and the opt-out rows: what the database refuses, how they read."""

from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction

from challenge_site.announcements.models import Announcement, EmailOptOut, EmailState
from tests.factories import VALIDATION, make_user

from .helpers import make_announcement


def test_an_announcement_reads_as_its_title_an_opt_out_as_its_user(challenge):
    assert str(make_announcement(challenge, "Test phase opens")) == "Test phase opens"
    assert str(EmailOptOut.objects.create(user=make_user("ada"))) == "ada"


def test_published_from_its_moment_on(challenge):
    announcement = make_announcement(challenge, published_at=VALIDATION)
    assert announcement.is_published(now=VALIDATION)
    assert announcement.is_published(now=VALIDATION + timedelta(days=1))
    assert not announcement.is_published(now=VALIDATION - timedelta(microseconds=1))
    assert not make_announcement(challenge, published_at=None).is_published(now=VALIDATION)


def test_a_new_announcement_is_not_emailed_and_counts_nothing(challenge):
    announcement = Announcement.objects.get(pk=make_announcement(challenge).pk)
    assert announcement.email_state == EmailState.NOT_SENT
    counts = (announcement.email_recipients, announcement.email_sent, announcement.email_failed)
    assert counts == (0, 0, 0)
    assert announcement.created == VALIDATION  # the conftest's clock
    assert announcement.email_requested_at is None and announcement.emailed_at is None


@pytest.mark.parametrize(
    ("fields", "constraint"),
    [
        # Requested too, so that the unknown state is the only thing wrong (PostgreSQL
        # names the first constraint it finds broken, SQLite another).
        (
            {"email_state": "lost", "email_requested_at": VALIDATION},
            "announcement_email_state_valid",
        ),
        (
            {"email_state": EmailState.SENT, "email_requested_at": VALIDATION},
            "announcement_emailed_when_sent",
        ),
        ({"emailed_at": VALIDATION}, "announcement_emailed_when_sent"),
        ({"email_state": EmailState.SENDING}, "announcement_email_requested"),
        ({"email_requested_at": VALIDATION}, "announcement_email_requested"),
    ],
)
def test_the_email_state_and_its_dates_must_agree(challenge, fields, constraint):
    announcement = make_announcement(challenge)
    with pytest.raises(IntegrityError, match=constraint), transaction.atomic():
        Announcement.objects.filter(pk=announcement.pk).update(**fields)
    announcement.refresh_from_db()
    assert announcement.email_state == EmailState.NOT_SENT


def test_the_states_the_sending_goes_through_are_accepted(challenge):
    rows = Announcement.objects.filter(pk=make_announcement(challenge).pk)
    rows.update(email_state=EmailState.SENDING, email_requested_at=VALIDATION)
    rows.update(email_state=EmailState.SENT, emailed_at=VALIDATION + timedelta(minutes=1))
    assert rows.get().email_state == EmailState.SENT


def test_newest_first(challenge):
    first = make_announcement(challenge, "First")
    second = make_announcement(challenge, "Second")  # created at the same instant
    older = make_announcement(challenge, "Older", created=VALIDATION - timedelta(days=1))
    assert list(Announcement.objects.all()) == [second, first, older]


def test_news_outlives_its_author_not_its_challenge(challenge):
    author = make_user("author")
    announcement = make_announcement(challenge, author=author)
    author.delete()
    announcement.refresh_from_db()
    assert announcement.author is None
    challenge.delete()
    assert not Announcement.objects.exists()


def test_one_opt_out_per_user(db):
    ada = make_user("ada")
    EmailOptOut.objects.create(user=ada)
    with pytest.raises(IntegrityError), transaction.atomic():
        EmailOptOut.objects.create(user=ada)
    ada.delete()
    assert not EmailOptOut.objects.exists()
