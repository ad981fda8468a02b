"""Accounts that joined a challenge during its test phase (Challenge.late_joiners_feedback).

When a challenge gives them no public feedback, their entries get no score on the test's
public part before the results are published, from anyone but the organisers: not on
their own pages, not on the public board, and they take no part in the board's Ladder
(a change of the board's released best would tell them one bit). Their entries count for
the final ranking like any other.

An account's participation begins at the earliest of: its Participant row's ``joined``,
its team membership's ``joined`` and its first entry to the challenge. An entry made as
a team is never late: teams form only until the test phase begins, so a team's earliest
member joined before it (the team counts as joined at its earliest member's join).
"""

from django.db.models import Exists, OuterRef, Q

from challenge_site.challenges.models import Challenge, Participant
from challenge_site.challenges.policy import late_feedback_withheld
from challenge_site.teams.models import Membership

from .models import Submission

# What the participant reads in place of a public-part score.
WITHHELD = "no public feedback: you joined during the test phase"
WITHHELD_OTHERS = "no public feedback: this account joined during the test phase"


def late_q(challenge: Challenge, prefix: str = "") -> Q:
    """The entries (``prefix``: the path to the submission) of accounts whose
    participation began at or after the test phase's start, in a challenge that gives
    them no public feedback; no entry otherwise. One subquery per condition (indexed by
    the unique (challenge, user) constraints and the submissions' user index)."""
    if challenge.late_joiners_feedback:
        return Q(pk__in=[])
    user = OuterRef(f"{prefix}user_id")
    began = challenge.test_start
    joined_before = Participant.objects.filter(challenge=challenge, user=user, joined__lt=began)
    in_team_before = Membership.objects.filter(challenge=challenge, user=user, joined__lt=began)
    entered_before = Submission.objects.filter(
        dataset__challenge=challenge, user=user, created__lt=began
    )
    return (
        Q(**{f"{prefix}team__isnull": True, f"{prefix}user__isnull": False})
        & ~Exists(joined_before)
        & ~Exists(in_team_before)
        & ~Exists(entered_before)
    )


def is_late(submission: Submission) -> bool:
    """Whether ``submission`` is a late joiner's (see late_q): one query, none when the
    challenge gives late joiners feedback."""
    challenge = submission.dataset.challenge
    if challenge.late_joiners_feedback or submission.is_baseline:
        return False
    return Submission.objects.filter(pk=submission.pk).filter(late_q(challenge)).exists()


def withheld(submission: Submission, split: str, *, user) -> bool:
    """Whether ``split``'s scores of ``submission`` are kept from ``user``: a late
    joiner's entry on the test's public part while the challenge withholds their feedback
    (policy.late_feedback_withheld). Every per-entry view of a split asks this beside
    exact_scores_visible: its scores, its plots, which entries count."""
    challenge = submission.dataset.challenge
    return late_feedback_withheld(challenge, split, user=user) and is_late(submission)
