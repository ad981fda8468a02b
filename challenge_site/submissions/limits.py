"""Submission limits per participant (a team, or a user without one), dataset and phase:
per UTC day, and over the test phase; and a cap per user and UTC day on uploads that
were invalid or failed.

Accepted submissions count against the limits (queued, running, scored and failed; not
invalid ones; withdrawn ones still count). services.submit calls check_allowance while it
holds the participant's lock (entrants.Entrant.lock), so concurrent uploads, a team's
members' too, are counted one after the other.
"""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db.models import Count, Q

from challenge_site.challenges.clock import current_phase
from challenge_site.challenges.models import Challenge, Phase
from datasets.models import Dataset

from .entrants import Entrant
from .models import ACCEPTED, REJECTED, Submission


class LimitReached(Exception):
    """Over a submission limit; ``retry_after`` seconds until the daily one resets (or None)."""

    def __init__(self, message: str, *, retry_after: int | None):
        self.message = message
        self.retry_after = retry_after
        super().__init__(message)


def utc_day(now: datetime) -> tuple[datetime, datetime]:
    start = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return start, start + timedelta(days=1)


def phase_limits(challenge: Challenge, phase: Phase) -> tuple[int | None, int | None]:
    """(daily, total) limits per user and dataset; after the deadline the test phase's
    daily limit still holds (scores there are public once results are)."""
    if phase == Phase.VALIDATION:
        return challenge.val_daily_limit, None
    if phase == Phase.TEST:
        return challenge.test_daily_limit, challenge.test_total_limit
    if phase == Phase.POST:
        return challenge.test_daily_limit, None
    return 0, 0


@dataclass(frozen=True)
class Allowance:
    dataset: Dataset
    daily_limit: int | None
    used_today: int
    total_limit: int | None
    used_total: int

    @property
    def remaining(self) -> int | None:
        left = [
            limit - used
            for limit, used in (
                (self.daily_limit, self.used_today),
                (self.total_limit, self.used_total),
            )
            if limit is not None
        ]
        return max(min(left), 0) if left else None


def allowances(*, user, challenge: Challenge, now: datetime) -> list[Allowance]:
    """What the user (their team, if they are in one) may still submit today to each
    dataset, in the current phase."""
    phase = current_phase(challenge, now=now)
    daily, total = phase_limits(challenge, phase)
    start, end = utc_day(now)
    entrant = Entrant.in_challenge(user=user, challenge_id=challenge.pk)
    counts = {
        row["dataset"]: row
        for row in Submission.objects.filter(
            entrant.q(), dataset__challenge=challenge, phase=phase, status__in=ACCEPTED
        )
        .values("dataset")
        .annotate(
            today=Count("id", filter=Q(created__gte=start, created__lt=end)), total=Count("id")
        )
    }
    return [
        Allowance(
            dataset,
            daily,
            counts.get(dataset.pk, {}).get("today", 0),
            total,
            counts.get(dataset.pk, {}).get("total", 0),
        )
        for dataset in challenge.datasets.all()
    ]


def check_allowance(*, entrant: Entrant, dataset: Dataset, phase: Phase, now: datetime) -> None:
    """LimitReached unless one more accepted submission of the participant (a team counts
    its members' together) fits; call it under the participant's lock."""
    daily, total = phase_limits(dataset.challenge, phase)
    accepted = Submission.objects.filter(
        entrant.q(), dataset=dataset, phase=phase, status__in=ACCEPTED
    )
    start, end = utc_day(now)
    who = "your team has" if entrant.is_team else "you have"
    if daily is not None and accepted.filter(created__gte=start, created__lt=end).count() >= daily:
        raise LimitReached(
            f"{who} made {daily} submission{'s' if daily != 1 else ''} to {dataset.name} "
            f"today, the daily limit in the {phase.label.lower()}; the limit resets at "
            "00:00 UTC",
            retry_after=int((end - now).total_seconds()) + 1,
        )
    if total is not None and accepted.count() >= total:
        raise LimitReached(
            f"{who} made {total} submission{'s' if total != 1 else ''} to {dataset.name} "
            f"in the {phase.label.lower()}, its overall limit",
            retry_after=None,
        )


def check_rejected_today(*, user, now: datetime) -> None:
    """LimitReached once the user's uploads found invalid or failed today (UTC, over every
    challenge) reach SUBMISSION_MAX_REJECTED_PER_DAY: each keeps its report (and, for a
    while, its zip), so they may not be made without end."""
    cap = settings.SUBMISSION_MAX_REJECTED_PER_DAY
    start, end = utc_day(now)
    rejected = Submission.objects.filter(
        user=user, created__gte=start, created__lt=end, status__in=REJECTED
    ).count()
    if rejected >= cap:
        raise LimitReached(
            f"you have made {cap} upload{'s' if cap != 1 else ''} today that "
            f"{'were' if cap != 1 else 'was'} invalid or could not be scored, the most a "
            "participant may make in a day; uploads are accepted again at 00:00 UTC. "
            "Check your files with python -m scoring evaluate first (see the file formats "
            "page)",
            retry_after=int((end - now).total_seconds()) + 1,
        )
