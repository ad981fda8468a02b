"""E-mailing an announcement: batches run by the Celery task, at most once per person."""

import smtplib
import traceback
from collections import Counter
from datetime import timedelta

import pytest
from celery.exceptions import Retry
from django.conf import settings
from django.core.mail.backends.locmem import EmailBackend

from challenge_site.announcements import services, tasks
from challenge_site.announcements.models import Delivery, DeliveryStatus, EmailState
from challenge_site.celery import app
from tests.factories import VALIDATION, make_challenge

from .helpers import SITE_URL, joined, make_announcement, submitter


@pytest.fixture
def five(challenge, gaze):
    """Five recipients: three joined, two submitted."""
    return [joined(challenge, name) for name in ("ada", "bob", "cy")] + [
        submitter(challenge, name) for name in ("dee", "eve")
    ]


@pytest.fixture
def queue(monkeypatch):
    """The broker: announcement ids the task queued for its next batch, run by hand."""
    queued = []
    monkeypatch.setattr(services, "enqueue", queued.append)
    return queued


def ask(announcement, user=None):
    return services.request_email(
        announcement_id=announcement.pk, user=user, site_url=SITE_URL, now=VALIDATION
    )


def addressees(outbox):
    return Counter(address for message in outbox for address in message.to)


def test_task_options_and_registration():
    task = tasks.send_announcement_batch
    assert task.name == "announcements.send_batch" and task.name in app.tasks
    assert task.acks_late is True and task.reject_on_worker_lost is True


def test_one_batch_per_task_run_until_everyone_has_it(
    challenge, five, queue, mailoutbox, django_capture_on_commit_callbacks
):
    announcement = make_announcement(challenge)
    with django_capture_on_commit_callbacks(execute=True):
        ask(announcement)
    assert queue == [announcement.pk] and mailoutbox == []  # queued on commit, not sent
    announcement.refresh_from_db()
    assert (announcement.email_state, announcement.email_recipients) == (EmailState.SENDING, 5)

    counts = []
    while queue:
        assert tasks.send_announcement_batch.delay(queue.pop(0)).get() in (1, 2)
        counts.append(len(mailoutbox))
    assert counts == [2, 4, 5]  # batches of two (the conftest's setting), three runs
    assert addressees(mailoutbox) == Counter(user.email for user in five)
    announcement.refresh_from_db()
    assert announcement.email_state == EmailState.SENT
    assert (announcement.email_sent, announcement.email_failed) == (5, 0)
    assert announcement.emailed_at == VALIDATION
    assert set(Delivery.objects.values_list("status", flat=True)) == {DeliveryStatus.SENT}


def test_a_full_last_batch_takes_one_more_run_to_finish(challenge, gaze, queue, mailoutbox):
    joined(challenge, "ada"), joined(challenge, "bob")
    announcement = make_announcement(challenge)
    ask(announcement)
    assert tasks.send_announcement_batch.delay(announcement.pk).get() == 2
    assert queue == [announcement.pk]
    announcement.refresh_from_db()
    assert announcement.email_state == EmailState.SENDING
    assert tasks.send_announcement_batch.delay(queue.pop()).get() == 0
    assert queue == [] and len(mailoutbox) == 2
    announcement.refresh_from_db()
    assert announcement.email_state == EmailState.SENT


def test_without_a_broker_every_batch_runs_in_process_one_after_another(
    challenge, five, mailoutbox, monkeypatch, django_capture_on_commit_callbacks
):
    """The embedded default: the whole chain at once, each batch after the last returned
    (not nested inside it, which would grow the stack with every batch)."""
    assert app.conf.task_always_eager
    monkeypatch.setattr(settings, "ANNOUNCEMENT_EMAIL_BATCH_SIZE", 1)
    depths = []
    send_batch = services.send_batch

    def spy(**kwargs):
        depths.append(len(traceback.extract_stack()))
        return send_batch(**kwargs)

    monkeypatch.setattr(services, "send_batch", spy)
    announcement = make_announcement(challenge)
    with django_capture_on_commit_callbacks(execute=True):
        ask(announcement)
    assert len(mailoutbox) == 5
    assert len(depths) == 6 and len(set(depths)) == 1  # 5 batches of one, then the empty one
    announcement.refresh_from_db()
    assert announcement.email_state == EmailState.SENT


def test_the_message(challenge, gaze, queue, mailoutbox, client):
    ada = joined(challenge, "ada")
    announcement = make_announcement(
        challenge, "Test phase\nopens", body="Targets are out.\n\n* one\n* **two**\n"
    )
    ask(announcement)
    tasks.send_announcement_batch.delay(announcement.pk)
    [message] = mailoutbox
    assert message.to == [ada.email]
    assert message.from_email == settings.DEFAULT_FROM_EMAIL
    assert message.subject == "[Demo challenge] Test phase opens"  # one line
    assert "Targets are out.\n\n* one\n* **two**\n" in message.body  # the Markdown source
    news = f"{SITE_URL}/challenges/demo/news/#announcement-{announcement.pk}"
    assert news in message.body
    unsubscribe_url = f"{SITE_URL}{services.unsubscribe_path(ada)}"
    assert unsubscribe_url in message.body
    assert message.extra_headers["List-Unsubscribe"] == f"<{unsubscribe_url}>"
    assert message.content_subtype == "plain" and not getattr(message, "alternatives", [])
    # Both links work, without logging in.
    assert client.get(news.removeprefix(SITE_URL)).status_code == 200
    assert "Unsubscribe" in client.get(unsubscribe_url.removeprefix(SITE_URL)).content.decode()


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"published_at": None}, "is not published"),
        ({"published_at": VALIDATION + timedelta(hours=1)}, "is not published"),
    ],
)
def test_only_published_announcements_are_emailed(challenge, five, queue, change, reason):
    announcement = make_announcement(challenge, **change)
    with pytest.raises(services.EmailRefused, match=reason):
        ask(announcement)
    announcement.refresh_from_db()
    assert announcement.email_state == EmailState.NOT_SENT and queue == []


def test_announcements_of_a_draft_challenge_are_not_emailed(db, queue):
    draft = make_challenge(slug="draft", opened_at=None)
    with pytest.raises(services.EmailRefused, match="draft challenge"):
        ask(make_announcement(draft))


def test_asking_twice_sends_nothing_more(
    challenge, five, mailoutbox, django_capture_on_commit_callbacks
):
    announcement = make_announcement(challenge)
    with django_capture_on_commit_callbacks(execute=True):
        ask(announcement)
    assert len(mailoutbox) == 5
    with pytest.raises(services.EmailRefused, match="e-mailed only once"):
        ask(announcement)
    assert services.resume_email(announcement_id=announcement.pk) is False
    assert len(mailoutbox) == 5


def test_a_task_delivered_again_sends_nobody_twice(challenge, five, queue, mailoutbox):
    """A retried or redelivered run (and a second one at the same time) takes the next
    people who have not been claimed; once everyone has, runs send nothing."""
    announcement = make_announcement(challenge)
    ask(announcement)
    for _ in range(6):  # the same message delivered six times, and the queued ones
        tasks.send_announcement_batch.delay(announcement.pk)
    while queue:
        tasks.send_announcement_batch.delay(queue.pop())
    assert addressees(mailoutbox) == Counter(user.email for user in five)
    assert Delivery.objects.count() == 5
    announcement.refresh_from_db()
    assert (announcement.email_state, announcement.email_sent) == (EmailState.SENT, 5)


def test_people_claimed_by_a_run_that_died_are_not_sent_again(challenge, five, queue, mailoutbox):
    """At most once: a worker killed between claiming and sending leaves "not confirmed"
    rows, and nobody claimed is ever claimed again."""
    announcement = make_announcement(challenge)
    ask(announcement)
    ada, bob = five[:2]
    for user in (ada, bob):
        Delivery.objects.create(
            announcement=announcement, user=user, email=user.email, claimed_at=VALIDATION
        )
    tasks.send_announcement_batch.delay(announcement.pk)
    tasks.send_announcement_batch.delay(announcement.pk)
    assert addressees(mailoutbox) == Counter(user.email for user in five[2:])
    assert Delivery.objects.filter(status=DeliveryStatus.CLAIMED).count() == 2


def test_someone_who_unsubscribes_between_batches_gets_nothing(challenge, five, queue, mailoutbox):
    announcement = make_announcement(challenge)
    ask(announcement)
    tasks.send_announcement_batch.delay(announcement.pk)  # ada, bob
    services.unsubscribe(user=five[4], now=VALIDATION)
    while queue:
        tasks.send_announcement_batch.delay(queue.pop())
    assert five[4].email not in addressees(mailoutbox)
    assert len(mailoutbox) == 4


def test_other_challenges_participants_are_not_emailed(challenge, five, queue, mailoutbox):
    other = make_challenge(slug="other", title="Other")
    joined(other, "stranger")
    announcement = make_announcement(challenge)
    ask(announcement)
    for _ in range(4):
        tasks.send_announcement_batch.delay(announcement.pk)
    assert "stranger@example.org" not in addressees(mailoutbox)
    assert len(mailoutbox) == 5


class ServerDown(EmailBackend):
    def open(self):
        raise ConnectionRefusedError("connection refused")


class DropsSecondMessage(EmailBackend):
    """Sends one message, then loses the connection on the next (once per test)."""

    calls = 0

    def send_messages(self, messages):
        type(self).calls += 1
        if type(self).calls == 2:
            raise smtplib.SMTPServerDisconnected("connection unexpectedly closed")
        return super().send_messages(messages)


class RefusesBob(EmailBackend):
    def send_messages(self, messages):
        if any(address.startswith("bob@") for message in messages for address in message.to):
            raise smtplib.SMTPRecipientsRefused({"bob@example.org": (550, b"no such user")})
        return super().send_messages(messages)


def test_mail_server_down_claims_nobody_and_the_email_can_be_resumed(
    challenge, five, mailoutbox, settings, django_capture_on_commit_callbacks, caplog
):
    settings.EMAIL_BACKEND = f"{__name__}.ServerDown"
    announcement = make_announcement(challenge)
    with django_capture_on_commit_callbacks(execute=True):
        ask(announcement)  # in-process: the task's retries fail at once, then it is logged
    assert "mail server unavailable" in caplog.text
    assert Delivery.objects.count() == 0 and mailoutbox == []
    announcement.refresh_from_db()
    assert announcement.email_state == EmailState.SENDING

    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    with django_capture_on_commit_callbacks(execute=True):
        assert services.resume_email(announcement_id=announcement.pk) is True
    assert addressees(mailoutbox) == Counter(user.email for user in five)
    announcement.refresh_from_db()
    assert (announcement.email_state, announcement.email_sent) == (EmailState.SENT, 5)


def test_connection_lost_mid_batch_the_retry_sends_the_rest_once(
    challenge, five, queue, mailoutbox, settings
):
    settings.EMAIL_BACKEND = f"{__name__}.DropsSecondMessage"
    DropsSecondMessage.calls = 0
    announcement = make_announcement(challenge)
    ask(announcement)
    with pytest.raises(Retry):  # a worker queues the run again, 60 s later
        tasks.send_announcement_batch.delay(announcement.pk)
    # Ada's message went out; Bob's failed, so his claim was given back for the retry.
    assert addressees(mailoutbox) == Counter(["ada@example.org"])
    assert list(Delivery.objects.values_list("user__username", "status")) == [
        ("ada", DeliveryStatus.SENT)
    ]
    tasks.send_announcement_batch.delay(announcement.pk)  # the retry: bob and cy
    assert len(mailoutbox) == 3
    while queue:
        tasks.send_announcement_batch.delay(queue.pop())
    assert addressees(mailoutbox) == Counter(user.email for user in five)
    announcement.refresh_from_db()
    assert (announcement.email_state, announcement.email_sent) == (EmailState.SENT, 5)


def test_a_refused_address_is_recorded_and_not_tried_again(
    challenge, five, queue, mailoutbox, settings
):
    settings.EMAIL_BACKEND = f"{__name__}.RefusesBob"
    announcement = make_announcement(challenge)
    ask(announcement)
    for _ in range(5):
        tasks.send_announcement_batch.delay(announcement.pk)
    assert sorted(addressees(mailoutbox)) == sorted(u.email for u in five if u.username != "bob")
    refused = Delivery.objects.get(status=DeliveryStatus.FAILED)
    assert refused.user.username == "bob" and "no such user" in refused.error
    announcement.refresh_from_db()
    assert (announcement.email_sent, announcement.email_failed) == (4, 1)
    assert announcement.email_state == EmailState.SENT
