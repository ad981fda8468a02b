"""A kind of mailing of the tests' own, so that the outbox is tested without the apps
above it: a Group's news to its members (active, with an address), whose counts and end
are kept in LEDGERS the way an app keeps them on its mailing's row."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import Group
from django.core.mail import EmailMessage

from challenge_site.mailing import services as outbox

KIND = "club"


@dataclass
class Ledger:
    sent: int = 0
    failed: int = 0
    batches: int = 0
    finished_at: datetime | None = None


# Group id -> its mailing's state; a group without one is not being e-mailed.
LEDGERS: dict[int, Ledger] = {}


def _load(group_id: int) -> Group | None:
    ledger = LEDGERS.get(group_id)
    if ledger is None or ledger.finished_at is not None:
        return None
    return Group.objects.filter(pk=group_id).first()


def _recipients(group: Group):
    return group.user_set.filter(is_active=True).exclude(email="").order_by("pk")


def _message(group: Group, *, user, now: datetime, connection) -> EmailMessage:
    return EmailMessage(
        subject=f"News of {group.name}",
        body=f"Hello {user.username}, news of {group.name} at {now:%H:%M}.\n",
        to=[user.email],
        connection=connection,
    )


def _record(group_id: int, *, sent: int, failed: int, now: datetime) -> None:
    ledger = LEDGERS[group_id]
    ledger.sent += sent
    ledger.failed += failed
    ledger.batches += 1


def _finish(group_id: int, *, now: datetime) -> None:
    LEDGERS[group_id].finished_at = now


CLUB = outbox.Kind(
    name=KIND,
    model=Group,
    load=_load,
    recipients=_recipients,
    message=_message,
    record=_record,
    finish=_finish,
    resume_hint="start the club's news again",
)


def start(group: Group) -> Ledger:
    """The group's mailing, being e-mailed (not queued: the test runs it)."""
    LEDGERS[group.pk] = Ledger()
    return LEDGERS[group.pk]
