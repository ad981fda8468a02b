"""Automatic publication (issue 30, item 15): the beat's sweep publishes a challenge's
results at its first run after ``publish_results_at``, recorded like a manual
publication; never before the deadline, never again after the organiser withdrew them."""

from datetime import timedelta

import pytest
import time_machine
from django.db import IntegrityError, transaction

from challenge_site.accounts.models import Profile
from challenge_site.challenges.models import ChallengeEvent, EventKind
from challenge_site.challenges.services import VIA_SCHEDULE, withdraw_results
from challenge_site.challenges.tasks import publish_scheduled
from tests.challenges.test_publication import scored_entry
from tests.factories import AFTER, DEADLINE, make_challenge, make_dataset, make_user

AT = DEADLINE + timedelta(days=2)


@pytest.fixture
def scheduled(db):
    """A challenge to publish at AT, with one scored test entry; another left manual."""
    challenge = make_challenge(publish_results_at=AT)
    scored_entry(make_dataset(challenge, "gaze"), make_user("ada"))
    make_challenge(slug="manual", title="Manual")
    return challenge


def _sweep(now):
    with time_machine.travel(now, tick=False):
        return publish_scheduled.delay().get()


def test_the_first_sweep_after_the_time_publishes_and_records_it(scheduled):
    assert _sweep(AT - timedelta(seconds=1)) == []
    scheduled.refresh_from_db()
    assert scheduled.results_published is False and not ChallengeEvent.objects.exists()

    assert _sweep(AT + timedelta(seconds=30)) == ["demo"]
    scheduled.refresh_from_db()
    assert scheduled.results_published is True
    event = ChallengeEvent.objects.get()
    assert (event.challenge, event.kind, event.at) == (
        scheduled,
        EventKind.PUBLISHED,
        AT + timedelta(seconds=30),
    )
    assert (event.user, event.via, event.who) == (None, VIA_SCHEDULE, VIA_SCHEDULE)
    # What it made public, as a manual publication records it.
    assert event.detail == {
        "datasets": [{"name": "gaze", "test_entries": 1, "test_scores": 3, "test_targets": []}]
    }
    assert _sweep(AT + timedelta(minutes=1)) == []  # once
    assert ChallengeEvent.objects.count() == 1


def test_results_withdrawn_after_it_stay_withdrawn(scheduled):
    _sweep(AT)
    organiser = make_user("org", organiser_of=scheduled)
    withdraw_results(challenge=scheduled, user=organiser, now=AT + timedelta(hours=1))
    assert _sweep(AT + timedelta(hours=2)) == []
    scheduled.refresh_from_db()
    assert scheduled.results_published is False
    # Moved later by the organiser, it applies again.
    scheduled.publish_results_at = AFTER
    scheduled.save()
    assert _sweep(AFTER) == ["demo"]


def test_it_cannot_be_set_before_the_deadline(db):
    with pytest.raises(IntegrityError), transaction.atomic():
        make_challenge(publish_results_at=DEADLINE)


def test_it_sends_the_results_e_mail_as_a_manual_publication_does(
    db, mailoutbox, django_capture_on_commit_callbacks
):
    challenge = make_challenge(publish_results_at=AT)
    ada = make_user("ada")
    Profile.objects.create(user=ada, email_on_results_published=True)
    scored_entry(make_dataset(challenge, "gaze"), ada)
    with django_capture_on_commit_callbacks(execute=True):
        assert _sweep(AT) == ["demo"]
    assert [mail.to for mail in mailoutbox] == [["ada@example.org"]]
