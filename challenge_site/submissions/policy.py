"""Which entries are listed, whose they are, and who may open them.

Built on ``challenge_site.challenges.policy`` (organisers, which splits' scores are
public, the Ladder). Every filter on an entry's state that decides what is listed is a
builder here, with a ``prefix`` for the queries that reach the entries through a relation
(``Score.objects.filter(listed_q("submission__"))``); leaderboards, the Ladder, probing,
final selections, plots, statistics and exports use them, and tests/test_architecture.py
fails on a module that writes one by hand. Truth tables: tests/submissions/test_policy.py.

- **Listed entries** are the scored submissions (and baselines) that the organisers
  neither hid nor disqualified (baselines never are) and their participant did not
  withdraw; leaderboards, results, plots and exports list nothing else.
- **Private parts** of a submission (the zip, error report, failure message, an entry
  that is not scored) belong to its owner and the organisers; a team's entries belong to
  every member.
"""

from __future__ import annotations

from datetime import datetime

from django.db.models import Q, QuerySet

from challenge_site.challenges.policy import is_organiser, is_superuser, organised_q
from challenge_site.teams.models import Membership

from .models import Moderation, Status, Submission

# --- What is listed -------------------------------------------------------------------


def _q(prefix: str, **lookups) -> Q:
    return Q(**{f"{prefix}{name}": value for name, value in lookups.items()})


def valid_q(prefix: str = "") -> Q:
    """Entries that passed validation and were scored, listed or not (the statistics'
    "valid submissions", which count moderated entries too; probing's previous entry)."""
    return _q(prefix, status=Status.SCORED)


def unmoderated_q(prefix: str = "") -> Q:
    """Entries the organisers neither hid nor disqualified (baselines never are)."""
    return _q(prefix, moderation=Moderation.NONE)


def not_withdrawn_q(prefix: str = "") -> Q:
    """Entries their participant did not withdraw."""
    return _q(prefix, withdrawn_at__isnull=True)


def standing_q(prefix: str = "") -> Q:
    """Entries that still stand, scored or not: neither moderated nor withdrawn (a final
    choice counts only while its entry stands)."""
    return unmoderated_q(prefix) & not_withdrawn_q(prefix)


def listed_q(prefix: str = "") -> Q:
    """Entries that leaderboards, results, plots and exports list (baselines included):
    scored, and standing."""
    return valid_q(prefix) & standing_q(prefix)


def ladder_steps_q(prefix: str = "") -> Q:
    """The steps of a participant's Ladder: its listed entries, and its withdrawn ones (a
    withdrawn entry leaves the boards but stays a step: taken out, the Ladder would judge
    the later entries again, and withdrawing would reveal what it keeps back)."""
    return valid_q(prefix) & unmoderated_q(prefix)


def page_public_q(prefix: str = "") -> Q:
    """Entries whose page everyone may open (in an open challenge) and whose scores
    everyone may read once their split is public: the listed ones, and the disqualified
    ones, whose page says why they are not ranked. Hidden and withdrawn ones are not."""
    return (
        valid_q(prefix)
        & _q(prefix, moderation__in=[Moderation.NONE, Moderation.DISQUALIFIED])
        & not_withdrawn_q(prefix)
    )


# --- Whose they are -------------------------------------------------------------------


def owned_q(user, prefix: str = "") -> Q:
    """The entries ``user`` owns: those they made without a team, and their teams'
    (whoever made them). Every "my submissions" list, API and permission check goes
    through this."""
    if not user.is_authenticated:
        return Q(pk__in=[])
    teams = Membership.objects.filter(user=user).values("team_id")
    return Q(**{f"{prefix}user": user, f"{prefix}team__isnull": True}) | Q(
        **{f"{prefix}team__in": teams}
    )


def owned_submissions(user) -> QuerySet[Submission]:
    """The entries ``user`` may list as theirs (My submissions, GET /api/v1/submissions/)."""
    return Submission.objects.filter(owned_q(user), is_baseline=False)


def owns(submission: Submission, *, user) -> bool:
    """``user`` may act on the entry as its participant (final choice, withdrawal)."""
    if not user.is_authenticated or submission.is_baseline:
        return False
    if submission.team_id is not None:
        return Membership.objects.filter(team_id=submission.team_id, user=user).exists()
    return submission.user_id == user.pk


# --- Who may open them ----------------------------------------------------------------


def visible_submissions(*, user, now: datetime) -> QuerySet[Submission]:
    """Submissions whose page ``user`` may open: listed ones of open challenges, their
    own, and every one for organisers."""
    submissions = Submission.objects.select_related("dataset__challenge", "user__profile", "team")
    if is_superuser(user):
        return submissions
    public = page_public_q() & Q(
        dataset__challenge__opened_at__isnull=False, dataset__challenge__start__lte=now
    )
    if user.is_authenticated:
        return submissions.filter(public | owned_q(user) | organised_q(user, "dataset__challenge"))
    return submissions.filter(public)


def can_see_private(submission: Submission, *, user) -> bool:
    """The zip, the error report and the failure message: the owner and organisers."""
    return is_organiser(user, submission.dataset.challenge) or owns(submission, user=user)


def can_see_failure_detail(submission: Submission, *, user) -> bool:
    """The cause of a run that failed on our side (it may depend on hidden targets)."""
    return is_organiser(user, submission.dataset.challenge)
