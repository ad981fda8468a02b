"""The challenge clock: its phases and milestones, as functions of an explicit ``now``.

The release and visibility rules (challenges.policy) and every page that shows a date
ask these; nothing here reads the real clock.
"""

from dataclasses import dataclass
from datetime import datetime

from .models import Challenge, Phase


@dataclass(frozen=True)
class Milestone:
    label: str
    when: datetime
    passed: bool


def current_phase(challenge: Challenge, *, now: datetime) -> Phase:
    """Upcoming before start; validation until test_start; test until the deadline
    (inclusive); post-challenge afterwards."""
    if now < challenge.start:
        return Phase.UPCOMING
    if now < challenge.test_start:
        return Phase.VALIDATION
    if now <= challenge.deadline:
        return Phase.TEST
    return Phase.POST


def timeline(challenge: Challenge, *, now: datetime) -> list[Milestone]:
    """The three dates, each marked passed exactly when current_phase has moved beyond it."""
    return [
        Milestone(
            "Challenge opens: datasets released, validation phase begins",
            challenge.start,
            passed=now >= challenge.start,
        ),
        Milestone(
            "Test phase begins: validation targets released",
            challenge.test_start,
            passed=now >= challenge.test_start,
        ),
        Milestone(
            "Deadline for test submissions", challenge.deadline, passed=now > challenge.deadline
        ),
    ]


def next_milestone(challenge: Challenge, *, now: datetime) -> Milestone | None:
    """The first milestone still ahead, or None once the deadline has passed."""
    return next((m for m in timeline(challenge, now=now) if not m.passed), None)
