"""The outbox: batches, at most one message per person, whatever happens to the runs."""

import smtplib
import traceback
from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from django.conf import settings
from django.contrib.auth.models import Group
from django.core.mail.backends.locmem import EmailBackend

from challenge_site.celery import app
from challenge_site.mailing import services as outbox
from challenge_site.mailing.models import Delivery, DeliveryStatus
from tests.factories import make_user

from .helpers import CLUB, KIND, start

NOW = datetime(2030, 1, 20, 12, 0, tzinfo=UTC)


def send(club, **options) -> outbox.Batch:
    return outbox.send_batch(kind=KIND, mailing_id=club.pk, now=NOW, **options)


def addressees(outbox_messages):
    return Counter(address for message in outbox_messages for address in message.to)


def everyone(users):
    return Counter(user.email for user in users)


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


def test_batches_of_the_settings_size_until_one_finds_fewer(club, five, mailoutbox):
    ledger = start(club)
    batches = [send(club), send(club), send(club)]
    assert batches == [outbox.Batch(2, 0, True), outbox.Batch(2, 0, True), outbox.Batch(1)]
    assert addressees(mailoutbox) == everyone(five)
    assert [m.subject for m in mailoutbox] == ["News of Reading club"] * 5
    assert (ledger.sent, ledger.failed, ledger.batches, ledger.finished_at) == (5, 0, 3, NOW)
    rows = Delivery.objects.filter(kind=KIND, mailing_id=club.pk)
    assert sorted(rows.values_list("email", "status", "claimed_at", "sent_at")) == [
        (user.email, DeliveryStatus.SENT, NOW, NOW) for user in five
    ]
    assert send(club) == outbox.Batch()  # finished: the kind finds nothing to send


def test_a_size_given_by_the_caller_wins_over_the_setting(club, five, mailoutbox):
    start(club)
    assert send(club, size=4) == outbox.Batch(4, 0, True)
    assert send(club, size=4) == outbox.Batch(1, 0, False)


def test_a_full_last_batch_takes_one_more_run_to_finish(club, five, mailoutbox):
    club.user_set.remove(*five[2:])
    ledger = start(club)
    assert send(club) == outbox.Batch(2, 0, more=True)
    assert ledger.finished_at is None
    assert send(club) == outbox.Batch(0, 0, more=False)
    assert ledger.finished_at == NOW and len(mailoutbox) == 2


def test_nothing_goes_out_while_the_kind_finds_no_mailing(club, five, mailoutbox):
    """Not started (or finished, or paused: whatever the kind's ``load`` says)."""
    assert send(club) == outbox.Batch()
    assert mailoutbox == [] and not Delivery.objects.exists()


def test_runs_delivered_again_send_nobody_twice(club, five, mailoutbox):
    """A retried or redelivered run takes the next people not claimed yet; once everyone
    has been, runs send nothing."""
    ledger = start(club)
    for _ in range(6):
        send(club)
    assert addressees(mailoutbox) == everyone(five)
    assert Delivery.objects.count() == 5 and ledger.sent == 5


def test_people_claimed_by_a_run_that_died_are_not_sent_again(club, five, mailoutbox):
    """At most once: a worker killed between claiming and sending leaves "not confirmed"
    rows, and nobody claimed is ever claimed again."""
    start(club)
    for user in five[:2]:
        Delivery.objects.create(
            kind=KIND, mailing_id=club.pk, user=user, email=user.email, claimed_at=NOW
        )
    while send(club).more:
        pass
    assert addressees(mailoutbox) == everyone(five[2:])
    assert Delivery.objects.filter(status=DeliveryStatus.CLAIMED).count() == 2


def test_the_claims_of_other_mailings_count_for_nothing(club, five, mailoutbox):
    other = Group.objects.create(name="Chess club")
    for user in five:  # everyone had the other club's news, and another kind's
        Delivery.objects.create(kind=KIND, mailing_id=other.pk, user=user, claimed_at=NOW)
        Delivery.objects.create(kind="other", mailing_id=club.pk, user=user, claimed_at=NOW)
    start(club)
    assert list(outbox.pending_recipients(kind=KIND, mailing=club)) == five
    while send(club).more:
        pass
    assert addressees(mailoutbox) == everyone(five)


def test_the_recipients_are_read_again_for_each_batch(club, five, mailoutbox):
    start(club)
    send(club)  # ada, bob
    club.user_set.remove(five[4])  # eve leaves; a newcomer joins
    newcomer = make_user("zoe")
    club.user_set.add(newcomer)
    while send(club).more:
        pass
    assert addressees(mailoutbox) == everyone([*five[:4], newcomer])


def test_the_mail_server_down_claims_nobody(club, five, mailoutbox, settings):
    settings.EMAIL_BACKEND = f"{__name__}.ServerDown"
    ledger = start(club)
    with pytest.raises(ConnectionRefusedError):
        send(club)
    assert not Delivery.objects.exists() and mailoutbox == []
    assert (ledger.sent, ledger.batches) == (0, 0)


def test_a_connection_lost_mid_batch_leaves_the_unsent_rest_to_the_retry(
    club, five, mailoutbox, settings
):
    settings.EMAIL_BACKEND = f"{__name__}.DropsSecondMessage"
    DropsSecondMessage.calls = 0
    ledger = start(club)
    with pytest.raises(smtplib.SMTPServerDisconnected):
        send(club)
    # Ada's message went out and is recorded; Bob's failed, so his claim was given back.
    assert addressees(mailoutbox) == Counter(["ada@example.org"])
    assert list(Delivery.objects.values_list("user__username", "status")) == [
        ("ada", DeliveryStatus.SENT)
    ]
    assert (ledger.sent, ledger.batches) == (1, 1)
    assert send(club) == outbox.Batch(2, 0, True)  # the retry: bob and cy
    while send(club).more:
        pass
    assert addressees(mailoutbox) == everyone(five) and ledger.sent == 5


def test_a_refused_address_is_recorded_and_not_tried_again(club, five, mailoutbox, settings):
    settings.EMAIL_BACKEND = f"{__name__}.RefusesBob"
    ledger = start(club)
    assert send(club) == outbox.Batch(1, 1, True)
    while send(club).more:
        pass
    assert addressees(mailoutbox) == everyone(u for u in five if u.username != "bob")
    refused = Delivery.objects.get(status=DeliveryStatus.FAILED)
    assert refused.user.username == "bob" and "no such user" in refused.error
    assert refused.sent_at is None
    assert (ledger.sent, ledger.failed, ledger.finished_at) == (4, 1, NOW)


def test_without_a_broker_every_batch_runs_in_process_one_after_another(
    club, five, mailoutbox, monkeypatch
):
    """The embedded default: the whole chain at once, each batch after the last returned
    (not nested inside it, which would grow the stack with every batch)."""
    assert app.conf.task_always_eager
    monkeypatch.setattr(settings, "ANNOUNCEMENT_EMAIL_BATCH_SIZE", 1)
    depths = []
    send_batch = outbox.send_batch

    def spy(**kwargs):
        depths.append(len(traceback.extract_stack()))
        return send_batch(**kwargs)

    monkeypatch.setattr(outbox, "send_batch", spy)
    ledger = start(club)
    outbox.enqueue(KIND, club.pk)
    assert addressees(mailoutbox) == everyone(five)
    assert len(depths) == 6 and len(set(depths)) == 1  # 5 batches of one, then the empty one
    assert ledger.finished_at is not None


def test_in_process_a_mail_server_down_is_logged_and_the_mailing_can_go_on(
    club, five, mailoutbox, settings, caplog
):
    settings.EMAIL_BACKEND = f"{__name__}.ServerDown"
    ledger = start(club)
    outbox.enqueue(KIND, club.pk)  # the task's retries fail at once, then it is logged
    assert f"mail server unavailable: club {club.pk} is not fully e-mailed" in caplog.text
    assert CLUB.resume_hint in caplog.text
    assert not Delivery.objects.exists() and ledger.finished_at is None

    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    outbox.enqueue(KIND, club.pk)  # what the kind's app does to resume it
    assert addressees(mailoutbox) == everyone(five) and ledger.finished_at is not None


def test_in_process_any_other_failure_is_logged_not_raised(club, five, monkeypatch, caplog):
    """enqueue runs after the commit of whatever started the mailing: a failure must not
    reach it (the mailing waits, resumable)."""
    start(club)

    def broken(group):
        raise LookupError("recipients query failed")

    monkeypatch.setitem(outbox._kinds, KIND, replace(CLUB, recipients=broken))
    outbox.enqueue(KIND, club.pk)
    assert f"club {club.pk} stopped; {CLUB.resume_hint}" in caplog.text
    assert "recipients query failed" in caplog.text


def test_a_name_in_use_is_refused_the_same_kind_again_is_harmless():
    assert outbox.register(CLUB) is CLUB
    with pytest.raises(ValueError, match="'club' is already registered"):
        outbox.register(replace(CLUB, resume_hint="another"))


def test_deleting_a_mailing_deletes_its_deliveries_only(club, five):
    other = Group.objects.create(name="Chess club")
    for group in (club, other):
        for user in five[:2]:
            Delivery.objects.create(kind=KIND, mailing_id=group.pk, user=user, claimed_at=NOW)
    Delivery.objects.create(kind="other", mailing_id=club.pk, user=five[0], claimed_at=NOW)
    club_pk = club.pk
    club.delete()
    assert sorted(Delivery.objects.values_list("kind", "mailing_id")) == sorted(
        [(KIND, other.pk), (KIND, other.pk), ("other", club_pk)]
    )
