"""Why a split's scores are hidden from a user, in the words the leaderboard pages and
the API give (who may see them is challenges.policy's ``split_visible``)."""

from __future__ import annotations

from datetime import datetime

from challenge_site.challenges.models import Challenge
from challenge_site.challenges.policy import split_visible
from challenge_site.challenges.splits import ScoredSplit


def hidden_reason(challenge: Challenge, *, split: str, user, now: datetime) -> str | None:
    """Why ``user`` may not see the scores of ``split`` at ``now``, or None if they may."""
    if split_visible(challenge, split, user=user):
        return None
    if split == ScoredSplit.PRIVATE:
        return (
            "The private part's scores decide the ranking: they are published with the "
            "results, after the deadline "
            f"({challenge.deadline:%d %b %Y, %H:%M} UTC)."
        )
    if split == ScoredSplit.PUBLIC:
        return "This challenge has no public part of the test set."
    if now <= challenge.deadline:
        return (
            "Test scores are published with the results, after the deadline "
            f"({challenge.deadline:%d %b %Y, %H:%M} UTC)."
        )
    return "Test scores are published with the results; the organisers have not published them yet."
