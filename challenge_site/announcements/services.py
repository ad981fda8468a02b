"""Announcements: the news page's list, who receives the e-mail, its message,
unsubscribing.

E-mail, at most once per person: ``request_email`` marks the announcement SENDING and
queues its mailing (on commit) in the outbox every batched e-mail shares
(challenge_site.mailing), which sends it in batches, claiming each recipient before
their message goes out. ``EMAIL`` tells the outbox what is specific to announcements
(apps.py registers it): who receives it, the message, and the announcement's counts.
"""

from __future__ import annotations

from datetime import datetime
from functools import partial
from urllib.parse import urljoin

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import EmailMessage
from django.db import transaction
from django.db.models import F, Q, QuerySet
from django.template.loader import render_to_string
from django.urls import reverse

from challenge_site.challenges.models import Challenge, Participant, format_utc
from challenge_site.mailing import services as outbox
from challenge_site.mailing.unsubscribe import InvalidToken, sign, unsign
from challenge_site.markdown import plain_text
from challenge_site.submissions.models import Submission

from .models import Announcement, EmailOptOut, EmailState

# The announcements' mailings in the outbox (Delivery.kind; a mailing's id is the
# announcement's).
KIND = "announcement"
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
    return outbox.pending_recipients(kind=KIND, mailing=announcement)


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
        transaction.on_commit(partial(outbox.enqueue, KIND, announcement.pk))
    return announcement


def resume_email(*, announcement_id: int) -> bool:
    """Queue the task again for an announcement still being e-mailed (its task was lost:
    the broker was down, or the mail server stayed down past the retries). Only those
    not claimed yet receive it. False if it is not being e-mailed."""
    if not Announcement.objects.filter(pk=announcement_id, email_state=EmailState.SENDING).exists():
        return False
    transaction.on_commit(partial(outbox.enqueue, KIND, announcement_id))
    return True


# --- Sending (in the outbox: challenge_site.mailing) ---------------------------------------


def _being_emailed(announcement_id: int) -> Announcement | None:
    """The announcement if it is being e-mailed (a batch may go out)."""
    return (
        Announcement.objects.select_related("challenge")
        .filter(pk=announcement_id, email_state=EmailState.SENDING)
        .first()
    )


def _count(announcement_id: int, *, sent: int, failed: int, now: datetime) -> None:
    Announcement.objects.filter(pk=announcement_id).update(
        email_sent=F("email_sent") + sent, email_failed=F("email_failed") + failed
    )


def _finish(announcement_id: int, *, now: datetime) -> None:
    Announcement.objects.filter(pk=announcement_id, email_state=EmailState.SENDING).update(
        email_state=EmailState.SENT, emailed_at=now
    )


def _recipients_of(announcement: Announcement) -> QuerySet:
    return recipients(challenge=announcement.challenge)


def _message(announcement: Announcement, *, user, now: datetime, connection) -> EmailMessage:
    return build_message(announcement, user=user, connection=connection)


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


EMAIL = outbox.Kind(
    name=KIND,
    model=Announcement,
    load=_being_emailed,
    recipients=_recipients_of,
    message=_message,
    record=_count,
    finish=_finish,
    resume_hint="resume it from the admin (“E-mail to participants…”)",
)


# --- Unsubscribing ---------------------------------------------------------------------------


def unsubscribe_token(user) -> str:
    """The user's unsubscribe token: their id, signed (no expiry, no login needed)."""
    return sign(user.pk, salt=UNSUBSCRIBE_SALT)


def unsubscribe_path(user) -> str:
    return reverse("announcement_unsubscribe", args=[unsubscribe_token(user)])


def user_id_for_token(token: str) -> int:
    """The user id a token was made for; InvalidToken if the signature does not match."""
    user_id = unsign(token, salt=UNSUBSCRIBE_SALT)
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
