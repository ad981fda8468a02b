"""Sending one e-mail to many people in batches, at most once per person: the engine of
the announcements' e-mail and of the results e-mail.

An app registers a Kind (in its AppConfig.ready) that says what is specific: which row
holds a mailing's state, whether a batch may go out now, who receives it, the message,
and how the row counts what went out. The app starts a mailing by marking its row and
calling ``enqueue`` (on commit); each run of the task (``send_batch``) opens the mail
connection, then claims the next batch (a Delivery row per recipient, committed) and only
then sends. Whatever happens next, a claimed person is never claimed again: a retried or
repeated task, a second request and two runs at once (the unique Delivery triple, and the
row lock on the mailing's row around each claim) all skip them. Should a worker die
between a claim and its message, that person's row stays "not confirmed" and they get
nothing: the e-mail is sent at most once, not at least once. A mail server that refuses
the connection claims nobody (the task tries again later); one that fails mid-batch
leaves the unsent rest of the batch unclaimed, sent by the retry.
"""

from __future__ import annotations

import logging
import smtplib
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime

from celery.exceptions import Retry
from django.conf import settings
from django.core.mail import EmailMessage, get_connection
from django.db import IntegrityError, models, transaction
from django.db.models import QuerySet
from django.db.models.signals import post_delete

from challenge_site.celery import app as celery_app

from .models import Delivery, DeliveryStatus

logger = logging.getLogger(__name__)

TASK = "mailing.send_batch"
# The mail server is down or the connection broke: the task tries again later...
MAIL_UNAVAILABLE = (smtplib.SMTPException, OSError)
# ...this many seconds later, at most this many times (then the mailing stays "being
# e-mailed" until its app resumes it: an organiser in the admin, the beat).
MAIL_RETRY_DELAY = 60
MAIL_RETRIES = 10


# --- Kinds of mailing ------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Kind:
    """What an app supplies for its mailings; ``mailing`` below is a row of ``model``."""

    name: str  # stored in Delivery.kind and sent to the task: never rename one in use
    model: type[models.Model]  # holds a mailing's state; locked around each claim
    # The mailing with this id if a batch may go out now (still being e-mailed, ...).
    load: Callable[[int], models.Model | None]
    # Everyone the mailing is for at this moment, ordered by pk (claims go in that order).
    recipients: Callable[[models.Model], QuerySet]
    # (mailing, *, user, now, connection) -> the message to ``user``.
    message: Callable[..., EmailMessage]
    # (mailing_id, *, sent, failed, now): add a finished batch's counts.
    record: Callable[..., None]
    # (mailing_id, *, now): a batch found fewer recipients than it could take.
    finish: Callable[..., None]
    # How a mailing that stopped goes on; logged when the task cannot be queued or run.
    resume_hint: str


_kinds: dict[str, Kind] = {}


def register(kind: Kind) -> Kind:
    """Make ``kind`` known to the task (once; registering the same object again is
    harmless). Deleting one of its mailings deletes its Delivery rows, as a foreign key
    would."""
    if _kinds.setdefault(kind.name, kind) is not kind:
        raise ValueError(f"a mailing kind named {kind.name!r} is already registered")
    post_delete.connect(_forget, sender=kind.model, dispatch_uid=f"mailing.forget.{kind.name}")
    return kind


def _forget(sender, instance, **kwargs) -> None:
    names = [kind.name for kind in _kinds.values() if kind.model is sender]
    Delivery.objects.filter(kind__in=names, mailing_id=instance.pk).delete()


def pending_recipients(*, kind: str, mailing: models.Model) -> QuerySet:
    """Recipients of ``mailing`` not claimed yet by one of its batches."""
    claimed = Delivery.objects.filter(kind=kind, mailing_id=mailing.pk).values("user")
    return _kinds[kind].recipients(mailing).exclude(pk__in=claimed)


# --- Queueing the task ---------------------------------------------------------------------


# Set while tasks run in-process (no broker): a task that queues the next batch from
# inside a run adds to this list instead of nesting a run per batch (which would pile up
# a stack frame per batch); the outermost enqueue runs them one after another.
_in_process_queue: ContextVar[list[tuple[str, int]] | None] = ContextVar(
    "mailing_queue", default=None
)


def enqueue(kind: str, mailing_id: int) -> None:
    """Send the batch task by name (tasks.py imports this module, not the other way
    round). Without a broker the task runs here, eagerly, each batch after the last.
    Never raises: it runs after the commit of whatever started the mailing, which stays
    "being e-mailed" for its app to resume (the hint is logged)."""
    hint = _kinds[kind].resume_hint
    if not celery_app.conf.task_always_eager:
        try:
            celery_app.signature(TASK, args=(kind, mailing_id)).delay()
        except Exception:
            logger.warning("broker unavailable: %s %s waits; %s", kind, mailing_id, hint)
        return
    queue = _in_process_queue.get()
    if queue is not None:
        queue.append((kind, mailing_id))
        return
    queue = [(kind, mailing_id)]
    token = _in_process_queue.set(queue)
    try:
        while queue:
            name, pk = queue.pop(0)
            try:
                celery_app.signature(TASK, args=(name, pk)).delay()
            except (Retry, *MAIL_UNAVAILABLE):  # in-process a retry is raised, not queued
                logger.exception(
                    "mail server unavailable: %s %s is not fully e-mailed; %s",
                    name,
                    pk,
                    _kinds[name].resume_hint,
                )
            except Exception:
                logger.exception("%s %s stopped; %s", name, pk, _kinds[name].resume_hint)
    finally:
        _in_process_queue.reset(token)


# --- Sending ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Batch:
    sent: int = 0
    failed: int = 0
    more: bool = False  # queue another run: the batch was full


def send_batch(*, kind: str, mailing_id: int, now: datetime, size: int | None = None) -> Batch:
    """Send the next ``size`` recipients (ANNOUNCEMENT_EMAIL_BATCH_SIZE, the one setting
    of every mailing) their e-mail; the kind finishes the mailing once a batch finds
    fewer. Nothing is sent while the kind's ``load`` finds no mailing to send. Raises one
    of MAIL_UNAVAILABLE when the mail server is down or fails mid-batch (what was sent is
    recorded first; the unsent rest of the batch is released for the retry)."""
    spec = _kinds[kind]
    size = size or settings.ANNOUNCEMENT_EMAIL_BATCH_SIZE
    mailing = spec.load(mailing_id)
    if mailing is None:
        return Batch()
    # Opened before anyone is claimed: a server that is down leaves the batch untouched.
    with get_connection(fail_silently=False) as connection:
        claimed = _claim(spec, mailing, size=size, now=now)
        if claimed is None:  # another run holds the batch; it carries on from there
            return Batch()
        sent: list[int] = []
        failed: dict[int, str] = {}
        try:
            for delivery, user in claimed:
                message = spec.message(mailing, user=user, now=now, connection=connection)
                try:
                    connection.send_messages([message])
                except smtplib.SMTPRecipientsRefused as error:
                    failed[delivery.pk] = str(error)[:500]
                else:
                    sent.append(delivery.pk)
        finally:
            _record(spec, mailing, claimed=claimed, sent=sent, failed=failed, now=now)
    if len(claimed) < size:
        spec.finish(mailing.pk, now=now)
        return Batch(len(sent), len(failed), more=False)
    return Batch(len(sent), len(failed), more=True)


def _claim(spec: Kind, mailing: models.Model, *, size: int, now: datetime):
    """Write a Delivery row for each of the next ``size`` pending recipients, committed
    before any message goes out; [(delivery, user)], or None if another run claimed
    some of them at the same moment."""
    try:
        with transaction.atomic():
            # Runs of the same mailing claim one after another, each seeing the rows of
            # the last (the unique triple would refuse a double claim anyway).
            spec.model.objects.select_for_update().filter(pk=mailing.pk).first()
            users = list(pending_recipients(kind=spec.name, mailing=mailing)[:size])
            deliveries = Delivery.objects.bulk_create(
                Delivery(
                    kind=spec.name,
                    mailing_id=mailing.pk,
                    user=user,
                    email=user.email,
                    claimed_at=now,
                )
                for user in users
            )
    except IntegrityError:
        return None
    return list(zip(deliveries, users, strict=True))


def _record(spec: Kind, mailing, *, claimed, sent: list[int], failed: dict[int, str], now):
    """After a batch: sent and refused rows marked, counts added; rows whose message was
    not handed over (the batch stopped) deleted, so the retry sends them."""
    done = set(sent) | set(failed)
    released = [delivery.pk for delivery, _ in claimed if delivery.pk not in done]
    with transaction.atomic():
        Delivery.objects.filter(pk__in=sent).update(status=DeliveryStatus.SENT, sent_at=now)
        for pk, error in failed.items():
            Delivery.objects.filter(pk=pk).update(status=DeliveryStatus.FAILED, error=error)
        Delivery.objects.filter(pk__in=released).delete()
        spec.record(mailing.pk, sent=len(sent), failed=len(failed), now=now)
