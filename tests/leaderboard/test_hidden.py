"""leaderboard.hidden: why a split's scores are hidden, in words (the pages and the API)."""

from datetime import timedelta

import pytest

from challenge_site.leaderboard.hidden import hidden_reason
from tests.factories import DEADLINE, START, make_user

SECOND = timedelta(seconds=1)


def test_hidden_reason_says_when_test_scores_come(challenge, organiser):
    participant = make_user("participant")
    before = hidden_reason(challenge, split="test", user=participant, now=DEADLINE)
    assert "after the deadline (08 Feb 2030, 23:59 UTC)" in before
    after = hidden_reason(challenge, split="test", user=participant, now=DEADLINE + SECOND)
    assert "have not published them yet" in after
    assert hidden_reason(challenge, split="val", user=participant, now=START) is None
    assert hidden_reason(challenge, split="test", user=organiser, now=START) is None


@pytest.mark.parametrize(
    ("split", "public_part", "published", "reason"),
    [
        (
            "private",
            True,
            False,
            "The private part's scores decide the ranking: they are published with the "
            "results, after the deadline (08 Feb 2030, 23:59 UTC).",
        ),
        ("private", True, True, None),
        ("public", True, False, None),
        ("public", False, False, "This challenge has no public part of the test set."),
        ("train", False, False, None),
    ],
)
def test_hidden_reason_of_each_split(challenge, split, public_part, published, reason):
    challenge.test_public_fraction = 0.3 if public_part else 0
    challenge.results_published = published
    participant = make_user("participant")
    assert hidden_reason(challenge, split=split, user=participant, now=START) == reason
