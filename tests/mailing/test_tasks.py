"""The outbox's Celery task: one batch per run, the next one queued, retried when the
mail server is away."""

import smtplib

import pytest
from celery.exceptions import Retry
from django.core.mail.backends.locmem import EmailBackend

from challenge_site.celery import app
from challenge_site.mailing import services as outbox
from challenge_site.mailing import tasks

from .helpers import KIND, start


class DropsSecondMessage(EmailBackend):
    """Sends one message, then loses the connection on the next (once per test)."""

    calls = 0

    def send_messages(self, messages):
        type(self).calls += 1
        if type(self).calls == 2:
            raise smtplib.SMTPServerDisconnected("connection unexpectedly closed")
        return super().send_messages(messages)


def test_task_options_and_registration():
    task = tasks.send_batch
    assert task.name == outbox.TASK == "mailing.send_batch" and task.name in app.tasks
    assert task.acks_late is True and task.reject_on_worker_lost is True


def test_one_batch_per_run_then_the_next_is_queued(club, five, queue, mailoutbox):
    ledger = start(club)
    counts = []
    queue.append((KIND, club.pk))
    while queue:
        assert tasks.send_batch.delay(*queue.pop(0)).get() in (1, 2)
        counts.append(len(mailoutbox))
    assert counts == [2, 4, 5]  # batches of two (the conftest's setting), three runs
    assert ledger.finished_at is not None


def test_a_full_last_batch_queues_a_run_that_finds_nobody(club, five, queue, mailoutbox):
    club.user_set.remove(*five[2:])
    start(club)
    assert tasks.send_batch.delay(KIND, club.pk).get() == 2
    assert queue == [(KIND, club.pk)]
    assert tasks.send_batch.delay(*queue.pop()).get() == 0
    assert queue == [] and len(mailoutbox) == 2


def test_a_connection_lost_mid_batch_is_retried(club, five, queue, mailoutbox, settings):
    settings.EMAIL_BACKEND = f"{__name__}.DropsSecondMessage"
    DropsSecondMessage.calls = 0
    start(club)
    with pytest.raises(Retry):  # a worker queues the run again, 60 s later
        tasks.send_batch.delay(KIND, club.pk)
    assert len(mailoutbox) == 1 and queue == []
    assert tasks.send_batch.delay(KIND, club.pk).get() == 2  # the retry: bob and cy
    assert queue == [(KIND, club.pk)]
