"""The e-mail "the results are published" to the participants of a challenge who asked
for it (Profile.email_on_results_published).

Once per challenge: the first publication (a ChallengeEvent, written by challenges.services
whoever publishes) creates its ResultsMailing in the same transaction and queues it on
commit; a withdrawal and a second publication send nothing more. The outbox every
batched e-mail shares (challenge_site.mailing, told what is specific by ``EMAIL``) sends
it in batches: each batch claims its recipients (a Delivery row each, committed, unique
per person) before any message goes out, so a retried or repeated task never sends
anyone a second e-mail; a worker killed mid-batch leaves a few "not confirmed" and
unsent. A mailing whose task was lost (broker down, worker gone) is queued again by the
beat (``resume_stalled``).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.contrib.auth import get_user_model
from django.core.mail import EmailMessage
from django.db import DatabaseError, transaction
from django.db.models import F, Q, QuerySet
from django.urls import reverse

from challenge_site.challenges import policy
from challenge_site.challenges.models import Challenge, ChallengeEvent, EventKind
from challenge_site.mailing import services as outbox
from challenge_site.submissions.models import Submission
from challenge_site.teams.models import Membership
from datasets.models import Kind, Split

from . import emails
from .models import MailingState, ResultsMailing

logger = logging.getLogger(__name__)

# The results mailings in the outbox (Delivery.kind; a mailing's id is the
# ResultsMailing's).
KIND = "results"
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
            outbox.enqueue(KIND, mailing_id)

        transaction.on_commit(after_commit, robust=True)
    return mailing


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
        outbox.enqueue(KIND, mailing_id)
    return ids


# --- Sending -----------------------------------------------------------------------------------


def _publishing(mailing_id: int) -> ResultsMailing | None:
    """The mailing if a batch may go out: still being sent, and the results published
    (nothing goes out while they are withdrawn; the next publication carries on)."""
    return (
        ResultsMailing.objects.select_related("challenge")
        .filter(pk=mailing_id, state=MailingState.SENDING, challenge__results_published=True)
        .first()
    )


def _recipients_of(mailing: ResultsMailing) -> QuerySet:
    return recipients(mailing.challenge)


def _count(mailing_id: int, *, sent: int, failed: int, now: datetime) -> None:
    ResultsMailing.objects.filter(pk=mailing_id).update(
        sent=F("sent") + sent, failed=F("failed") + failed, last_batch_at=now
    )


def _finish(mailing_id: int, *, now: datetime) -> None:
    ResultsMailing.objects.filter(pk=mailing_id, state=MailingState.SENDING).update(
        state=MailingState.SENT, finished_at=now
    )


def _message(mailing: ResultsMailing, *, user, now: datetime, connection) -> EmailMessage:
    return build_message(mailing.challenge, user=user, now=now, connection=connection)


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


EMAIL = outbox.Kind(
    name=KIND,
    model=ResultsMailing,
    load=_publishing,
    recipients=_recipients_of,
    message=_message,
    record=_count,
    finish=_finish,
    resume_hint="the beat queues it again (notifications.resume_results)",
)
