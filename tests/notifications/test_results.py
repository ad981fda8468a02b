"""The e-mail when a challenge one submitted to publishes its results: once per
challenge and participant, in batches of the outbox (challenge_site.mailing, tested in
tests/mailing), paused while the results are withdrawn. The beat's task that queues a
lost mailing again (resume_stalled) is tested in test_tasks.py."""

from collections import Counter
from datetime import timedelta

import pytest
import time_machine
from django.db import DatabaseError

from challenge_site.challenges.models import Challenge, Participant
from challenge_site.challenges.services import withdraw_results
from challenge_site.mailing import services as outbox
from challenge_site.mailing.models import Delivery
from challenge_site.mailing.tasks import send_batch
from challenge_site.notifications import results
from challenge_site.notifications.models import MailingState, ResultsMailing
from tests.factories import AFTER, VALIDATION, make_challenge, make_dataset, make_user
from tests.submissions.helpers import queued_submission

from .helpers import SITE_URL, addressees, opt_in, publish, to


@pytest.fixture(autouse=True)
def batches_of_two(settings):
    settings.ANNOUNCEMENT_EMAIL_BATCH_SIZE = 2


@pytest.fixture
def queue(monkeypatch):
    """The broker: the (kind, mailing id) pairs the code queued, run by hand."""
    queued = []
    monkeypatch.setattr(outbox, "enqueue", lambda kind, pk: queued.append((kind, pk)))
    return queued


def test_each_participant_who_asked_gets_one_email(
    challenge, gaze, five, mailoutbox, django_capture_on_commit_callbacks
):
    silent = make_user("quiet")  # submitted, did not ask
    queued_submission(silent, challenge)
    watcher = opt_in(make_user("watcher"), results=True)  # asked, joined, never submitted
    Participant.objects.create(challenge=challenge, user=watcher, joined=VALIDATION)
    elsewhere = opt_in(make_user("elsewhere"), results=True)  # submitted to another one
    other = make_challenge(slug="other", title="Other")
    make_dataset(other, "gaze")
    queued_submission(elsewhere, other)

    publish(challenge, capture=django_capture_on_commit_callbacks)

    assert addressees(mailoutbox) == Counter(user.email for user in five)
    message = to(mailoutbox, five[0])[0]
    assert message.subject == "Demo challenge: the results are published"
    assert f"Results: {SITE_URL}/challenges/demo/results/\n" in message.body
    assert f"  gaze: {SITE_URL}/challenges/demo/datasets/gaze/leaderboard/?split=test\n" in (
        message.body
    )
    assert "List-Unsubscribe" in message.extra_headers
    mailing = ResultsMailing.objects.get()
    assert (mailing.state, mailing.recipients, mailing.sent) == (MailingState.SENT, 5, 5)
    assert mailing.event.kind == "published"
    rows = Delivery.objects.filter(kind="results", mailing_id=mailing.pk, status="sent")
    assert rows.count() == Delivery.objects.count() == 5


def test_once_per_challenge_even_when_published_again(
    challenge, five, mailoutbox, django_capture_on_commit_callbacks
):
    publish(challenge, capture=django_capture_on_commit_callbacks)
    assert len(mailoutbox) == 5
    later = AFTER + timedelta(days=1)
    with time_machine.travel(later, tick=False), django_capture_on_commit_callbacks(execute=True):
        withdraw_results(challenge=challenge, user=None, now=later)
    publish(challenge, at=later + timedelta(hours=1), capture=django_capture_on_commit_callbacks)
    assert len(mailoutbox) == 5 and ResultsMailing.objects.count() == 1


def test_nothing_goes_out_while_the_results_are_withdrawn(
    challenge, five, queue, mailoutbox, django_capture_on_commit_callbacks
):
    publish(challenge, capture=django_capture_on_commit_callbacks)
    with time_machine.travel(AFTER, tick=False), django_capture_on_commit_callbacks(execute=True):
        withdraw_results(challenge=challenge, user=None, now=AFTER)
    assert queue == [("results", ResultsMailing.objects.get().pk)]
    assert send_batch.delay(*queue.pop()).get() == 0
    assert mailoutbox == [] and not Delivery.objects.exists()
    publish(challenge, capture=django_capture_on_commit_callbacks)  # the mailing carries on
    while queue:
        send_batch.delay(*queue.pop(0)).get()
    assert addressees(mailoutbox) == Counter(user.email for user in five)


def test_the_publication_stands_when_the_mailing_cannot_start(
    challenge, five, monkeypatch, mailoutbox, caplog, django_capture_on_commit_callbacks
):
    def broken(challenge):
        raise DatabaseError("recipients query failed")

    monkeypatch.setattr(results, "recipients", broken)
    publish(challenge, capture=django_capture_on_commit_callbacks)
    assert Challenge.objects.get().results_published
    assert not ResultsMailing.objects.exists() and mailoutbox == []
    assert "the results e-mail was not started" in caplog.text


def test_a_teams_members_who_never_submitted_are_told_too(
    challenge, gaze, mailoutbox, django_capture_on_commit_callbacks
):
    from challenge_site.teams import services as teams

    maker = make_user("maker")  # made the team's entry; asked for nothing
    member = opt_in(make_user("member"), results=True)  # never submitted themself
    team = teams.create(challenge=challenge, user=maker, name="Pair", now=VALIDATION)
    teams.join(team=team, user=member, now=VALIDATION)
    entry = queued_submission(maker, challenge)
    entry.team = team
    entry.save(update_fields=["team"])

    publish(challenge, capture=django_capture_on_commit_callbacks)

    assert addressees(mailoutbox) == Counter({"member@example.org": 1})
