"""A running demo challenge that cannot be climbed by probing: a public part of the test
set, the Ladder for feedback and final selections (issue: leaderboards that cannot be
climbed). Its test phase is open from 2026 to 2030, so the Ladder is in force while the
demo runs; the datasets are new draws of two covariate-shift generators."""

from . import covshift
from .common import DemoChallenge


def build(seed: int) -> DemoChallenge:
    udon, wheat = covshift.udon(seed + 1), covshift.wheat(seed + 1)
    return DemoChallenge(
        {
            "slug": "probing",
            "title": "A leaderboard that cannot be probed (running demo)",
            "description": "A running challenge with the three defences against leaderboard "
            "probing: half of the test examples form a public part, scored at once; the other "
            "half decides the final ranking when the results are published; validation and "
            "public scores are shown through the Ladder (Blum & Hardt 2015); and each "
            "participant chooses two final entries per dataset.\n\nThe numbers are generated.",
            "rules": "Submit as often as the limits allow. Read *How this challenge ranks* "
            "below: your shown score only moves when an entry is really better.",
            "start": "2026-09-01T00:00:00Z",
            "test_start": "2026-10-01T00:00:00Z",
            "deadline": "2030-12-31T23:59:59Z",
            "results_published": False,
            "val_daily_limit": 10,
            "test_daily_limit": 5,
            "test_inputs_release": "test_start",
            "test_targets_release": "after_publication",
            "test_public_fraction": 0.5,
            "final_entries": 2,
            "feedback": "ladder",
        },
        [udon, wheat],
    )
