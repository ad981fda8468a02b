"""The e-mail "the results are published" to the participants of a challenge who asked
for it (Profile.email_on_results_published).

Once per challenge: the first publication (a ChallengeEvent, written by Challenge.save
whoever publishes) creates its ResultsMailing in the same transaction and queues the
task on commit; a withdrawal and a second publication send nothing more. The task sends
batches exactly as the announcements' e-mail does (announcements.services): each batch
claims its recipients (a ResultsDelivery row each, committed, unique per person) before
any message goes out, so a retried or repeated task never sends anyone a second e-mail;
a worker killed mid-batch leaves a few "not confirmed" and unsent. A mailing whose task
was lost (broker down, worker gone) is queued again by the beat (``resume_stalled``).
"""

from __future__ import annotations

import logging
import smtplib
from contextvars import ContextVar
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import get_connection
from django.db import DatabaseError, IntegrityError, transaction
from django.db.models import F, Q, QuerySet
from django.urls import reverse

from challenge_site import policy
from challenge_site.announcements.models import DeliveryStatus
from challenge_site.announcements.services import Batch
from challenge_site.celery import app as celery_app
from challenge_site.challenges.models import Challenge, ChallengeEvent, EventKind
from challenge_site.submissions.models import Submission
from challenge_site.teams.models import Membership
from datasets.models import Kind, Split

from . import emails
from .models import MailingState, ResultsDelivery, ResultsMailing

logger = logging.getLogger(__name__)

TASK = "notifications.results_batch"
# A mailing still being sent whose last batch is older than this is queued again.
RESUME_AFTER = timedelta(minutes=10)


def recipients(challenge: Challenge) -> QuerySet:
    """Who submitted to one of the challenge's datasets, alone or through their team, and
    asked for this e-mail."""
    entries = Submission.objects.filter(dataset__challenge=challenge, is_baseline=False)
    teams = entries.filter(team__isnull=False).values("team")
    members = Membership.objects.filter(team__in=teams).values("user")
    users = get_user_model().objects.filter(Q(pk__in=entries.values("user")) | Q(pk__in=members))
    return emails.opted_in(users, kind=emails.Kind.RESULTS).order_by("pk")


def pending_recipients(mailing: ResultsMailing) -> QuerySet:
    claimed = ResultsDelivery.objects.filter(mailing=mailing).values("user")
    return recipients(mailing.challenge).exclude(pk__in=claimed)


# --- Starting -------------------------------------------------------------------------------


def on_challenge_event(sender, instance: ChallengeEvent, created: bool, **kwargs) -> None:
    """post_save of ChallengeEvent (apps.py): a publication starts the mailing."""
    if created and instance.kind == EventKind.PUBLISHED:
        start(event=instance)


def start(*, event: ChallengeEvent) -> ResultsMailing | None:
    """Create the challenge's mailing (the first time) inside the publication's
    transaction, and queue its task on commit. A failure here is logged and leaves the
    publication as it is (the savepoint)."""
    try:
        with transaction.atomic():
            mailing, created = ResultsMailing.objects.get_or_create(
                challenge_id=event.challenge_id,
                defaults={
                    "event": event,
                    "requested_at": event.at,
                    "recipients": recipients(event.challenge).count(),
                },
            )
    except DatabaseError:
        logger.exception("challenge %s: the results e-mail was not started", event.challenge_id)
        return None
    if mailing.state == MailingState.SENDING:  # new, or stopped by a withdrawal
        mailing_id = mailing.pk

        def after_commit():
            enqueue(mailing_id)

        transaction.on_commit(after_commit, robust=True)
    return mailing


# Set while tasks run in-process (no broker): the next batch, queued from inside a run,
# waits in this list instead of nesting a run per batch (announcements.services.enqueue).
_in_process_queue: ContextVar[list[int] | None] = ContextVar("results_queue", default=None)


def enqueue(mailing_id: int) -> None:
    """Send the batch task by name (tasks.py imports this module); never raises: the
    beat's resume_stalled queues a mailing whose task was lost."""
    if not celery_app.conf.task_always_eager:
        try:
            celery_app.signature(TASK, args=(mailing_id,)).delay()
        except Exception:
            logger.warning(
                "results mailing %s waits for the resume: broker unavailable", mailing_id
            )
        return
    queue = _in_process_queue.get()
    if queue is not None:
        queue.append(mailing_id)
        return
    queue = [mailing_id]
    token = _in_process_queue.set(queue)
    try:
        while queue:
            pk = queue.pop(0)
            try:
                celery_app.signature(TASK, args=(pk,)).delay()
            except Exception:  # in-process the mail server's failures arrive here
                logger.exception("results mailing %s stopped; the resume carries on", pk)
    finally:
        _in_process_queue.reset(token)


def resume_stalled(*, now: datetime) -> list[int]:
    """Queue again the mailings of published results with no batch for RESUME_AFTER."""
    cutoff = now - RESUME_AFTER
    ids = list(
        ResultsMailing.objects.filter(state=MailingState.SENDING, challenge__results_published=True)
        .filter(
            Q(last_batch_at__lt=cutoff) | Q(last_batch_at__isnull=True, requested_at__lt=cutoff)
        )
        .values_list("pk", flat=True)
    )
    for mailing_id in ids:
        enqueue(mailing_id)
    return ids


# --- Sending -----------------------------------------------------------------------------------


def send_batch(*, mailing_id: int, now: datetime, size: int | None = None) -> Batch:
    """Send the next ``size`` recipients (ANNOUNCEMENT_EMAIL_BATCH_SIZE) their e-mail;
    the mailing is SENT once a batch finds fewer. Nothing is sent while the results are
    withdrawn (the next publication carries on). Raises one of MAIL_UNAVAILABLE when the
    mail server is down or fails mid-batch (what was sent is recorded first)."""
    size = size or settings.ANNOUNCEMENT_EMAIL_BATCH_SIZE
    mailing = ResultsMailing.objects.select_related("challenge").filter(pk=mailing_id).first()
    if mailing is None or mailing.state != MailingState.SENDING:
        return Batch()
    if not mailing.challenge.results_published:
        return Batch()
    with get_connection(fail_silently=False) as connection:
        claimed = _claim(mailing, size=size, now=now)
        if claimed is None:  # another run holds the batch; it carries on from there
            return Batch()
        sent: list[int] = []
        failed: dict[int, str] = {}
        try:
            for delivery, user in claimed:
                message = build_message(
                    mailing.challenge, user=user, now=now, connection=connection
                )
                try:
                    connection.send_messages([message])
                except smtplib.SMTPRecipientsRefused as error:
                    failed[delivery.pk] = str(error)[:500]
                else:
                    sent.append(delivery.pk)
        finally:
            _record(mailing, claimed=claimed, sent=sent, failed=failed, now=now)
    if len(claimed) < size:
        ResultsMailing.objects.filter(pk=mailing.pk, state=MailingState.SENDING).update(
            state=MailingState.SENT, finished_at=now
        )
        return Batch(len(sent), len(failed), more=False)
    return Batch(len(sent), len(failed), more=True)


def _claim(mailing: ResultsMailing, *, size: int, now: datetime):
    """A committed ResultsDelivery for each of the next ``size`` pending recipients;
    [(delivery, user)], or None if another run claimed some of them at the same moment."""
    try:
        with transaction.atomic():
            # Runs of one mailing claim one after another, each seeing the rows of the last.
            ResultsMailing.objects.select_for_update().filter(pk=mailing.pk).first()
            users = list(pending_recipients(mailing)[:size])
            deliveries = ResultsDelivery.objects.bulk_create(
                ResultsDelivery(mailing=mailing, user=user, email=user.email, claimed_at=now)
                for user in users
            )
    except IntegrityError:
        return None
    return list(zip(deliveries, users, strict=True))


def _record(mailing, *, claimed, sent: list[int], failed: dict[int, str], now) -> None:
    """Sent and refused rows marked; rows whose message was not handed over (the batch
    stopped) deleted, so the retry sends them."""
    done = set(sent) | set(failed)
    released = [delivery.pk for delivery, _ in claimed if delivery.pk not in done]
    with transaction.atomic():
        ResultsDelivery.objects.filter(pk__in=sent).update(status=DeliveryStatus.SENT, sent_at=now)
        for pk, error in failed.items():
            ResultsDelivery.objects.filter(pk=pk).update(status=DeliveryStatus.FAILED, error=error)
        ResultsDelivery.objects.filter(pk__in=released).delete()
        ResultsMailing.objects.filter(pk=mailing.pk).update(
            sent=F("sent") + len(sent), failed=F("failed") + len(failed), last_batch_at=now
        )


def build_message(challenge: Challenge, *, user, now: datetime, connection=None):
    datasets = [
        (
            dataset.name,
            emails.absolute(reverse("leaderboard", args=[challenge.slug, dataset.name]))
            + "?split=test",
        )
        for dataset in challenge.datasets.order_by("position", "name")
    ]
    context = {
        "challenge": challenge,
        "results_url": emails.absolute(reverse("challenge_results", args=[challenge.slug])),
        "leaderboards": datasets,
        "submissions_url": emails.absolute(reverse("my_submissions")),
        "targets_released": (Split.TEST, Kind.TARGETS) in policy.released_parts(challenge, now=now),
    }
    return emails.build(
        user=user,
        kind=emails.Kind.RESULTS,
        subject=f"{challenge.title}: the results are published",
        template="notifications/results_email.txt",
        context=context,
        connection=connection,
    )
