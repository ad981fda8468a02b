"""A demo challenge in its validation phase, so that teams can form while the demo runs
(every other demo is past it). Its dates are relative to the day it is written: opened
three weeks before, test phase three weeks after, deadline six weeks after; `make run`
writes it again each time, so it stays in its validation phase whenever the demo is
started. The datasets are new draws (seed + 2) of two covariate-shift generators."""

from datetime import UTC, date, datetime, time, timedelta

from . import covshift
from .common import DemoChallenge

OPENED = timedelta(days=21)  # before today: the demo entries of its validation phase exist
TEST_PHASE = timedelta(days=21)  # after today: teams form until then
DEADLINE = timedelta(days=42)


def _utc(day: date) -> str:
    return datetime.combine(day, time(), tzinfo=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def build(seed: int, *, today: date | None = None) -> DemoChallenge:
    today = today or datetime.now(UTC).date()
    udon, wheat = covshift.udon(seed + 2), covshift.wheat(seed + 2)
    return DemoChallenge(
        {
            "slug": "teamwork",
            "title": "Teams welcome (running demo, validation phase)",
            "description": "A running challenge in its validation phase: form a team on the "
            "*Your team* page, invite others by user name or share the team's link; a team "
            "submits as one until the test phase begins, when teams are fixed.\n\n"
            "The numbers are generated.",
            "start": _utc(today - OPENED),
            "test_start": _utc(today + TEST_PHASE),
            "deadline": _utc(today + DEADLINE),
            "results_published": False,
            "val_daily_limit": 10,
            "test_daily_limit": 5,
            "max_team_size": 3,
        },
        [udon, wheat],
    )
