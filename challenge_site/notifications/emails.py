"""What the two opt-in e-mails share: who asked for them, absolute links, the
one-click unsubscribe token and the message itself.

Links start with SITE_URL (settings): these e-mails are sent by Celery workers, which
have no request to take a host from.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import EmailMessage
from django.db import models
from django.db.models import QuerySet
from django.template.loader import render_to_string
from django.urls import reverse

from challenge_site.accounts.services import profile_for
from challenge_site.mailing.unsubscribe import InvalidToken, sign, unsign

UNSUBSCRIBE_SALT = "challenge_site.notifications.unsubscribe"


class Kind(models.TextChoices):
    """A kind of notification; its label completes "an e-mail when …"."""

    SCORING = "scoring", "a submission of yours has finished scoring"
    RESULTS = "results", "a challenge you submitted to publishes its results"


# The Profile field that says the user asked for the kind (off by default).
PREFERENCE = {
    Kind.SCORING: "email_on_scoring_finished",
    Kind.RESULTS: "email_on_results_published",
}


def opted_in(users: QuerySet, *, kind: Kind) -> QuerySet:
    """Those of ``users`` who asked for ``kind`` and can receive it (an active account
    with an address)."""
    return users.filter(is_active=True, **{f"profile__{PREFERENCE[kind]}": True}).exclude(email="")


def is_subscribed(user, *, kind: Kind) -> bool:
    return opted_in(get_user_model().objects.filter(pk=user.pk), kind=kind).exists()


def set_subscribed(*, user, kind: Kind, on: bool) -> None:
    profile = profile_for(user)
    setattr(profile, PREFERENCE[kind], on)
    profile.save(update_fields=[PREFERENCE[kind]])


def absolute(path: str) -> str:
    return settings.SITE_URL.rstrip("/") + path


# --- Unsubscribing -----------------------------------------------------------------------


def unsubscribe_token(user, *, kind: Kind) -> str:
    """The user's token for one kind: their id and the kind, signed (no expiry, no login
    needed: whoever holds the e-mail may turn that kind off)."""
    return sign([user.pk, str(kind)], salt=UNSUBSCRIBE_SALT)


def read_token(token: str) -> tuple[int, Kind]:
    """(user id, kind) of a token; InvalidToken if it was not made by unsubscribe_token."""
    value = unsign(token, salt=UNSUBSCRIBE_SALT)
    if not (isinstance(value, list) and len(value) == 2):
        raise InvalidToken("not a [user, kind] pair")
    user_id, kind = value
    if not isinstance(user_id, int) or isinstance(user_id, bool) or kind not in Kind.values:
        raise InvalidToken("not a [user, kind] pair")
    return user_id, Kind(kind)


def unsubscribe_url(user, *, kind: Kind) -> str:
    return absolute(reverse("notification_unsubscribe", args=[unsubscribe_token(user, kind=kind)]))


# --- The message ---------------------------------------------------------------------------


def one_line(text: str) -> str:
    """A header cannot hold a line break."""
    return " ".join(text.split())


def build(*, user, kind: Kind, subject: str, template: str, context: dict, connection=None):
    """A plain-text e-mail to ``user`` whose footer says why they receive it and links
    their one-click unsubscribe (also as List-Unsubscribe, RFC 8058)."""
    unsubscribe = unsubscribe_url(user, kind=kind)
    context = {
        **context,
        "user": user,
        "kind": kind,
        "site_name": settings.SITE_NAME,
        "profile_url": absolute(reverse("profile")) + "#notifications",
        "unsubscribe_url": unsubscribe,
    }
    return EmailMessage(
        subject=one_line(subject),
        body=render_to_string(template, context).strip() + "\n",
        to=[user.email],
        headers={
            "List-Unsubscribe": f"<{unsubscribe}>",
            "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
        },
        connection=connection,
    )
