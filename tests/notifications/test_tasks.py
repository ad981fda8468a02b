"""The notifications' Celery tasks: sent by name (scoring.py, the beat), each a thin
wrapper around its service, the scoring e-mail retried while the mail server is away."""

import smtplib
from collections import Counter
from datetime import timedelta

import pytest
import time_machine
from celery.exceptions import Retry
from django.conf import settings
from django.core.mail.backends import locmem

from challenge_site.celery import app
from challenge_site.mailing import services as outbox
from challenge_site.notifications import scoring, tasks
from challenge_site.notifications.models import ResultsMailing, ScoringNotice
from challenge_site.submissions.models import Status, Submission
from tests.factories import AFTER
from tests.submissions.helpers import queued_submission

from .helpers import addressees, publish, to


def test_the_tasks_are_registered_under_the_names_they_are_sent_by():
    assert tasks.send_scoring_notice.name == scoring.TASK == "notifications.scoring_finished"
    assert tasks.resume_results.name == "notifications.resume_results"
    for task in (tasks.send_scoring_notice, tasks.resume_results):
        assert task.name in app.tasks and task.acks_late is True
    assert tasks.send_scoring_notice.reject_on_worker_lost is True
    beat = {entry["task"]: entry["schedule"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert beat[tasks.resume_results.name] == 300.0


@pytest.fixture
def invalid_entry(gaze, ada):
    """Ada's entry, just found invalid (its e-mail not sent yet)."""
    entry = queued_submission(ada, gaze.challenge)
    Submission.objects.filter(pk=entry.pk).update(status=Status.INVALID, errors=["line 1: bad"])
    return entry


def test_the_scoring_email_is_retried_while_the_mail_server_is_down(
    invalid_entry, ada, monkeypatch, mailoutbox
):
    def down(self, messages):
        raise smtplib.SMTPServerDisconnected("mail server down")

    monkeypatch.setattr(locmem.EmailBackend, "send_messages", down)
    with pytest.raises(Retry) as retry:  # a worker queues the task again, a minute later
        tasks.send_scoring_notice.delay(invalid_entry.pk)
    assert retry.value.when == outbox.MAIL_RETRY_DELAY == 60
    assert isinstance(retry.value.exc, smtplib.SMTPServerDisconnected)
    assert not ScoringNotice.objects.exists()  # the claim was given back for the retry
    monkeypatch.undo()
    assert tasks.send_scoring_notice.delay(invalid_entry.pk).get() == 1  # the retry
    (message,) = to(mailoutbox, ada)
    assert message.subject == "gaze: your submission “queued” is invalid"


def test_a_failure_that_is_not_the_mail_servers_is_not_retried(
    invalid_entry, monkeypatch, mailoutbox
):
    def broken(*args, **kwargs):
        raise ValueError("a bug in the message")

    monkeypatch.setattr(scoring, "build_message", broken)
    with pytest.raises(ValueError, match="a bug in the message"):
        tasks.send_scoring_notice.delay(invalid_entry.pk)
    assert mailoutbox == [] and not ScoringNotice.objects.exists()


def test_a_lost_results_mailing_is_queued_again_by_the_beat(
    challenge, five, monkeypatch, mailoutbox, django_capture_on_commit_callbacks
):
    lost = []
    real = outbox.enqueue
    monkeypatch.setattr(outbox, "enqueue", lambda kind, pk: lost.append(pk))  # broker down
    publish(challenge, capture=django_capture_on_commit_callbacks)
    assert mailoutbox == [] and len(lost) == 1
    monkeypatch.setattr(outbox, "enqueue", real)
    with time_machine.travel(AFTER + timedelta(minutes=5), tick=False):
        assert tasks.resume_results.delay().get() == []  # maybe still on its way
    with time_machine.travel(AFTER + timedelta(minutes=11), tick=False):
        assert tasks.resume_results.delay().get() == [ResultsMailing.objects.get().pk]
        assert tasks.resume_results.delay().get() == []  # sent: nothing to resume
    assert addressees(mailoutbox) == Counter(user.email for user in five)
