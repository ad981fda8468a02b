"""Announcements: the news page's list, who receives the e-mail, sending it in batches,
unsubscribing.

E-mail, at most once per person: ``request_email`` marks the announcement SENDING and
queues the task (on commit); each run of the task (``send_batch``) opens the mail
connection, then claims the next batch (a Delivery row per recipient, committed) and only
then sends. Whatever happens next, a claimed person is never claimed again: a retried or
repeated task, a second admin action and two runs at once (the unique Delivery pair, and
the row lock on the announcement around each claim) all skip them. Should a worker die
between a claim and its message, that person's row stays "not confirmed" and they get
nothing: the e-mail is sent at most once, not at least once. A mail server that refuses
the connection claims nobody (the task tries again later); one that fails mid-batch
leaves the unsent rest of the batch unclaimed, sent by the retry.
"""

from __future__ import annotations

import logging
import smtplib
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from urllib.parse import urljoin

from celery.exceptions import Retry
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core import signing
from django.core.mail import EmailMessage, get_connection
from django.db import IntegrityError, transaction
from django.db.models import F, Q, QuerySet
from django.template.loader import render_to_string
from django.urls import reverse
from kombu.exceptions import OperationalError

from challenge_site.celery import app as celery_app
from challenge_site.challenges.models import Challenge, Participant, format_utc
from challenge_site.markdown import plain_text
from challenge_site.submissions.models import Submission

from .models import Announcement, Delivery, DeliveryStatus, EmailOptOut, EmailState

logger = logging.getLogger(__name__)

TASK = "announcements.send_batch"
# The mail server is down or the connection broke: the task tries again later.
MAIL_UNAVAILABLE = (smtplib.SMTPException, OSError)
UNSUBSCRIBE_SALT = "challenge_site.announcements.unsubscribe"


# --- The news page -----------------------------------------------------------------------


def published(*, challenge: Challenge, now: datetime) -> QuerySet[Announcement]:
    """The challenge's announcements published by ``now``, newest first."""
    return challenge.announcements.filter(published_at__lte=now).order_by("-published_at", "-id")


# --- Who receives the e-mail -----------------------------------------------------------------


def recipients(*, challenge: Challenge) -> QuerySet:
    """Users the challenge's announcements are e-mailed to, each once: whoever joined it
    or submitted to one of its datasets (baselines have no user), with an active
    account and an address, unless they unsubscribed."""
    joined = Participant.objects.filter(challenge=challenge).values("user")
    submitted = Submission.objects.filter(
        dataset__challenge=challenge, is_baseline=False, user__isnull=False
    ).values("user")
    return (
        get_user_model()
        .objects.filter(Q(pk__in=joined) | Q(pk__in=submitted), is_active=True)
        .exclude(email="")
        .exclude(pk__in=EmailOptOut.objects.values("user"))
        .order_by("pk")
    )


def pending_recipients(announcement: Announcement) -> QuerySet:
    """Recipients not claimed yet by a batch of this announcement."""
    claimed = Delivery.objects.filter(announcement=announcement).values("user")
    return recipients(challenge=announcement.challenge).exclude(pk__in=claimed)


# --- Asking for the e-mail ------------------------------------------------------------------


class EmailRefused(Exception):
    """The announcement cannot be e-mailed (the message says why)."""


def email_refusal(announcement: Announcement, *, now: datetime) -> str | None:
    """Why ``announcement`` cannot be e-mailed now, or None if it can."""
    if announcement.email_state == EmailState.SENT:
        return (
            f"“{announcement}” was e-mailed on {format_utc(announcement.emailed_at)} "
            f"({announcement.email_sent} sent); an announcement is e-mailed only once."
        )
    if announcement.email_state == EmailState.SENDING:
        return (
            f"“{announcement}” is being e-mailed ({announcement.email_sent} of "
            f"{announcement.email_recipients} sent so far)."
        )
    if announcement.challenge.is_draft:
        return (
            f"“{announcement}” belongs to a draft challenge: its participants could not "
            "open the news page the e-mail links to. Open the challenge first."
        )
    if not announcement.is_published(now=now):
        return (
            f"“{announcement}” is not published: publish it first (the e-mail links to "
            "the challenge's news page)."
        )
    return None


def request_email(*, announcement_id: int, user, site_url: str, now: datetime) -> Announcement:
    """Start e-mailing the announcement to its challenge's participants (once: raises
    EmailRefused otherwise); the task is queued when the transaction commits."""
    with transaction.atomic():
        announcement = (
            Announcement.objects.select_for_update()
            .select_related("challenge")
            .get(pk=announcement_id)
        )
        refusal = email_refusal(announcement, now=now)
        if refusal is not None:
            raise EmailRefused(refusal)
        announcement.email_state = EmailState.SENDING
        announcement.email_requested_at = now
        announcement.email_requested_by = user
        announcement.email_site_url = site_url
        announcement.email_recipients = recipients(challenge=announcement.challenge).count()
        announcement.save(
            update_fields=[
                "email_state",
                "email_requested_at",
                "email_requested_by",
                "email_site_url",
                "email_recipients",
            ]
        )
        transaction.on_commit(partial(enqueue, announcement.pk))
    return announcement


def resume_email(*, announcement_id: int) -> bool:
    """Queue the task again for an announcement still being e-mailed (its task was lost:
    the broker was down, or the mail server stayed down past the retries). Only those
    not claimed yet receive it. False if it is not being e-mailed."""
    if not Announcement.objects.filter(pk=announcement_id, email_state=EmailState.SENDING).exists():
        return False
    transaction.on_commit(partial(enqueue, announcement_id))
    return True


# Set while tasks run in-process (no broker): a task that queues the next batch from
# inside a run adds to this list instead of nesting a run per batch (which would pile up
# a stack frame per batch); the outermost enqueue runs them one after another.
_in_process_queue: ContextVar[list[int] | None] = ContextVar("announcement_queue", default=None)


def enqueue(announcement_id: int) -> None:
    """Send the batch task by name (tasks.py imports this module, not the other way
    round). Without a broker the task runs here, eagerly, each batch after the last."""
    signature = celery_app.signature(TASK, args=(announcement_id,))
    if not celery_app.conf.task_always_eager:
        try:
            signature.delay()
        except OperationalError:
            logger.warning(
                "broker unavailable: announcement %s waits; resume it from the admin "
                "(“E-mail to participants…”)",
                announcement_id,
            )
        return
    queue = _in_process_queue.get()
    if queue is not None:
        queue.append(announcement_id)
        return
    queue = [announcement_id]
    token = _in_process_queue.set(queue)
    try:
        while queue:
            pk = queue.pop(0)
            try:
                celery_app.signature(TASK, args=(pk,)).delay()
            except (Retry, *MAIL_UNAVAILABLE):  # in-process a retry is raised, not queued
                logger.exception(
                    "mail server unavailable: announcement %s is not fully e-mailed; resume "
                    "it from the admin (“E-mail to participants…”)",
                    pk,
                )
    finally:
        _in_process_queue.reset(token)


# --- Sending ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Batch:
    sent: int = 0
    failed: int = 0
    more: bool = False  # queue another run: the batch was full


def send_batch(*, announcement_id: int, now: datetime, size: int | None = None) -> Batch:
    """Send the next ``size`` recipients (ANNOUNCEMENT_EMAIL_BATCH_SIZE) their e-mail;
    the announcement becomes SENT once a batch finds fewer. Raises one of
    MAIL_UNAVAILABLE when the mail server is down or fails mid-batch (what was sent is
    recorded first; the unsent rest of the batch is released for the retry)."""
    size = size or settings.ANNOUNCEMENT_EMAIL_BATCH_SIZE
    announcement = (
        Announcement.objects.select_related("challenge").filter(pk=announcement_id).first()
    )
    if announcement is None or announcement.email_state != EmailState.SENDING:
        return Batch()
    # Opened before anyone is claimed: a server that is down leaves the batch untouched.
    with get_connection(fail_silently=False) as connection:
        claimed = _claim(announcement, size=size, now=now)
        if claimed is None:  # another run holds the batch; it carries on from there
            return Batch()
        sent: list[int] = []
        failed: dict[int, str] = {}
        try:
            for delivery, user in claimed:
                message = build_message(announcement, user=user, connection=connection)
                try:
                    connection.send_messages([message])
                except smtplib.SMTPRecipientsRefused as error:
                    failed[delivery.pk] = str(error)[:500]
                else:
                    sent.append(delivery.pk)
        finally:
            _record(announcement, claimed=claimed, sent=sent, failed=failed, now=now)
    if len(claimed) < size:
        _finish(announcement, now=now)
        return Batch(len(sent), len(failed), more=False)
    return Batch(len(sent), len(failed), more=True)


def _claim(announcement: Announcement, *, size: int, now: datetime):
    """Write a Delivery row for each of the next ``size`` pending recipients, committed
    before any message goes out; [(delivery, user)], or None if another run claimed
    some of them at the same moment."""
    try:
        with transaction.atomic():
            # Runs of the same announcement claim one after another, each seeing the
            # rows of the last (the unique pair would refuse a double claim anyway).
            Announcement.objects.select_for_update().filter(pk=announcement.pk).first()
            users = list(pending_recipients(announcement)[:size])
            deliveries = Delivery.objects.bulk_create(
                Delivery(announcement=announcement, user=user, email=user.email, claimed_at=now)
                for user in users
            )
    except IntegrityError:
        return None
    return list(zip(deliveries, users, strict=True))


def _record(announcement, *, claimed, sent: list[int], failed: dict[int, str], now) -> None:
    """After a batch: sent and refused rows marked, counts added; rows whose message was
    not handed over (the batch stopped) deleted, so the retry sends them."""
    done = set(sent) | set(failed)
    released = [delivery.pk for delivery, _ in claimed if delivery.pk not in done]
    with transaction.atomic():
        Delivery.objects.filter(pk__in=sent).update(status=DeliveryStatus.SENT, sent_at=now)
        for pk, error in failed.items():
            Delivery.objects.filter(pk=pk).update(status=DeliveryStatus.FAILED, error=error)
        Delivery.objects.filter(pk__in=released).delete()
        Announcement.objects.filter(pk=announcement.pk).update(
            email_sent=F("email_sent") + len(sent), email_failed=F("email_failed") + len(failed)
        )


def _finish(announcement: Announcement, *, now: datetime) -> None:
    Announcement.objects.filter(pk=announcement.pk, email_state=EmailState.SENDING).update(
        email_state=EmailState.SENT, emailed_at=now
    )


def build_message(announcement: Announcement, *, user, connection=None) -> EmailMessage:
    """The plain-text e-mail: the body's Markdown source, the news page's address and
    the recipient's unsubscribe link (also as a List-Unsubscribe header)."""
    challenge = announcement.challenge
    site = announcement.email_site_url
    news_url = (
        urljoin(site, reverse("challenge_news", args=[challenge.slug]))
        + f"#announcement-{announcement.pk}"
    )
    unsubscribe_url = urljoin(site, unsubscribe_path(user))
    context = {
        "announcement": announcement,
        "body": plain_text(announcement.body),
        "challenge": challenge,
        "user": user,
        "news_url": news_url,
        "unsubscribe_url": unsubscribe_url,
        "site_name": settings.SITE_NAME,
    }
    subject = " ".join(
        render_to_string("announcements/email_subject.txt", context).split()
    )  # one line: a header cannot hold a line break
    return EmailMessage(
        subject=subject,
        body=render_to_string("announcements/email.txt", context),
        to=[user.email],
        headers={"List-Unsubscribe": f"<{unsubscribe_url}>"},
        connection=connection,
    )


# --- Unsubscribing ---------------------------------------------------------------------------


class InvalidToken(Exception):
    """An unsubscribe token that was not made here (tampered with or cut short)."""


def unsubscribe_token(user) -> str:
    """The user's unsubscribe token: their id, signed (no expiry, no login needed)."""
    return signing.dumps(user.pk, salt=UNSUBSCRIBE_SALT)


def unsubscribe_path(user) -> str:
    return reverse("announcement_unsubscribe", args=[unsubscribe_token(user)])


def user_id_for_token(token: str) -> int:
    """The user id a token was made for; InvalidToken if the signature does not match."""
    try:
        user_id = signing.loads(token, salt=UNSUBSCRIBE_SALT)
    except (signing.BadSignature, ValueError, UnicodeError) as error:
        raise InvalidToken(str(error)) from None
    if not isinstance(user_id, int) or isinstance(user_id, bool):
        raise InvalidToken("not a user id")
    return user_id


def is_unsubscribed(user) -> bool:
    return EmailOptOut.objects.filter(user=user).exists()


def unsubscribe(*, user, now: datetime) -> None:
    """No more announcement e-mails for ``user`` (of any challenge); batches not yet
    sent leave them out."""
    EmailOptOut.objects.get_or_create(user=user, defaults={"created": now})


def resubscribe(*, user) -> None:
    EmailOptOut.objects.filter(user=user).delete()
