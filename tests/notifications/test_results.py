"""The e-mail when a challenge one submitted to publishes its results: once per
challenge and participant, in batches, whatever happens to the task."""

import smtplib
from collections import Counter
from datetime import timedelta

import pytest
import time_machine
from django.core.mail.backends import locmem
from django.db import DatabaseError

from challenge_site.challenges.models import Challenge, Participant
from challenge_site.challenges.services import publish_results, withdraw_results
from challenge_site.notifications import results, tasks
from challenge_site.notifications.models import MailingState, ResultsDelivery, ResultsMailing
from tests.factories import AFTER, VALIDATION, make_challenge, make_dataset, make_user
from tests.submissions.helpers import queued_submission

from .helpers import SITE_URL, opt_in, to


@pytest.fixture(autouse=True)
def batches_of_two(settings):
    settings.ANNOUNCEMENT_EMAIL_BATCH_SIZE = 2


@pytest.fixture
def five(challenge, gaze):
    """Five participants who submitted and asked for the e-mail."""
    users = [opt_in(make_user(name), results=True) for name in ("ada", "bob", "cy", "dee", "eve")]
    for user in users:
        queued_submission(user, challenge)
    return users


@pytest.fixture
def queue(monkeypatch):
    """The broker: mailing ids the code queued, run by hand."""
    queued = []
    monkeypatch.setattr(results, "enqueue", queued.append)
    return queued


def publish(challenge, *, at=AFTER, capture):
    with time_machine.travel(at, tick=False), capture(execute=True):
        publish_results(challenge=challenge, user=None, now=at, via="test")


def addressees(outbox):
    return Counter(address for message in outbox for address in message.to)


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


def test_the_task_run_twice_or_more_sends_each_participant_one(
    challenge, five, queue, mailoutbox, django_capture_on_commit_callbacks
):
    publish(challenge, capture=django_capture_on_commit_callbacks)
    (mailing_id,) = queue
    assert mailoutbox == []  # queued on commit, not sent
    runs = []
    while queue:
        pk = queue.pop(0)
        runs.append(tasks.send_results_batch.delay(pk).get())
        tasks.send_results_batch.delay(pk).get()  # the same message delivered twice
    for _ in range(2):  # and once more after the end
        assert tasks.send_results_batch.delay(mailing_id).get() == 0
    assert addressees(mailoutbox) == Counter(user.email for user in five)
    assert sum(runs) <= 5 and len(mailoutbox) == 5
    assert ResultsDelivery.objects.filter(status="sent").count() == 5


def test_a_worker_killed_after_claiming_sends_those_nothing_rather_than_twice(
    challenge, five, queue, mailoutbox, django_capture_on_commit_callbacks
):
    publish(challenge, capture=django_capture_on_commit_callbacks)
    mailing = ResultsMailing.objects.get()
    claimed = results._claim(mailing, size=2, now=AFTER)  # then the worker died
    with time_machine.travel(AFTER, tick=False):
        while queue:
            tasks.send_results_batch.delay(queue.pop(0)).get()
    lost = {user.email for _, user in claimed}
    assert addressees(mailoutbox) == Counter(u.email for u in five if u.email not in lost)
    assert set(
        ResultsDelivery.objects.filter(status="claimed").values_list("email", flat=True)
    ) == (lost)


def test_a_mail_server_failing_mid_batch_leaves_the_rest_to_the_retry(
    challenge, five, queue, mailoutbox, monkeypatch, django_capture_on_commit_callbacks
):
    publish(challenge, capture=django_capture_on_commit_callbacks)
    mailing = ResultsMailing.objects.get()
    real = locmem.EmailBackend.send_messages
    calls = []

    def second_fails(self, messages):
        calls.append(messages)
        if len(calls) == 2:
            raise smtplib.SMTPServerDisconnected("connection lost")
        return real(self, messages)

    monkeypatch.setattr(locmem.EmailBackend, "send_messages", second_fails)
    with pytest.raises(smtplib.SMTPServerDisconnected):
        results.send_batch(mailing_id=mailing.pk, now=AFTER)
    assert len(mailoutbox) == 1 and ResultsDelivery.objects.count() == 1  # the other released
    while results.send_batch(mailing_id=mailing.pk, now=AFTER).more:
        pass
    assert addressees(mailoutbox) == Counter(user.email for user in five)


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
    assert tasks.send_results_batch.delay(queue.pop()).get() == 0
    assert mailoutbox == []
    publish(challenge, capture=django_capture_on_commit_callbacks)  # the mailing carries on
    while queue:
        tasks.send_results_batch.delay(queue.pop(0)).get()
    assert addressees(mailoutbox) == Counter(user.email for user in five)


def test_a_lost_task_is_queued_again_by_the_beat(
    challenge, five, monkeypatch, mailoutbox, django_capture_on_commit_callbacks
):
    lost = []
    real = results.enqueue
    monkeypatch.setattr(results, "enqueue", lost.append)  # the broker is down
    publish(challenge, capture=django_capture_on_commit_callbacks)
    assert mailoutbox == [] and len(lost) == 1
    monkeypatch.setattr(results, "enqueue", real)
    with time_machine.travel(AFTER + timedelta(minutes=5), tick=False):
        assert tasks.resume_results.delay().get() == []  # maybe still on its way
    with time_machine.travel(AFTER + timedelta(minutes=11), tick=False):
        assert tasks.resume_results.delay().get() == [ResultsMailing.objects.get().pk]
        assert tasks.resume_results.delay().get() == []  # sent: nothing to resume
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
