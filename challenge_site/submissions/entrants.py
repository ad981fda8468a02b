"""Who an entry belongs to for ranking, limits and final selections: its team, or its
user when it has none (the baseline has neither).

Everything that groups entries "per participant" (best-per-participant boards, the
Ladder, final selections, limits, their locks) goes through ``Entrant``, so a team is one
participant whichever member made the entry.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Case, F, Q, When

from challenge_site.teams.models import Membership, Team

from .models import Submission, SubmissionQuota


@dataclass(frozen=True)
class Entrant:
    team_id: int | None
    user_id: int | None

    @classmethod
    def of(cls, submission: Submission) -> Entrant | None:
        """The entry's participant; None for a baseline."""
        if submission.team_id is not None:
            return cls(team_id=submission.team_id, user_id=None)
        if submission.user_id is not None:
            return cls(team_id=None, user_id=submission.user_id)
        return None

    @classmethod
    def for_user(cls, *, user_id: int, team_id: int | None) -> Entrant:
        return cls(team_id=team_id, user_id=None if team_id else user_id)

    @classmethod
    def in_challenge(cls, *, user, challenge_id: int) -> Entrant:
        """Whom ``user``'s entries to the challenge belong to now: their team, or them."""
        team_id = (
            Membership.objects.filter(challenge_id=challenge_id, user=user)
            .values_list("team_id", flat=True)
            .first()
        )
        return cls.for_user(user_id=user.pk, team_id=team_id)

    @property
    def is_team(self) -> bool:
        return self.team_id is not None

    def q(self, prefix: str = "") -> Q:
        """The entries of this participant (``prefix``: the path to the submission)."""
        if self.team_id is not None:
            return Q(**{f"{prefix}team_id": self.team_id})
        return Q(**{f"{prefix}user_id": self.user_id, f"{prefix}team__isnull": True})

    def entries(self):
        return Submission.objects.filter(self.q(), is_baseline=False)

    def lock(self, *, dataset_id: int) -> None:
        """Serialise this participant's changes on the dataset: a user's quota row (as
        submit locks it), or their team's row (every member's submit locks it too)."""
        if self.team_id is not None:
            # NO KEY UPDATE: an entry written with the team's id share-locks the team's
            # key at commit; a plain FOR UPDATE would make those two wait in a circle.
            Team.objects.select_for_update(no_key=True).filter(pk=self.team_id).first()
            return
        # The row is there once the user has submitted to the dataset: locked in one
        # query; made first otherwise.
        found = (
            SubmissionQuota.objects.select_for_update()
            .filter(user_id=self.user_id, dataset_id=dataset_id)
            .first()
        )
        if found is None:
            quota, _ = SubmissionQuota.objects.get_or_create(
                user_id=self.user_id, dataset_id=dataset_id
            )
            SubmissionQuota.objects.select_for_update().filter(pk=quota.pk).first()


def any_of_q(entrants, prefix: str = "") -> Q:
    """The entries of any of the participants (``prefix``: the path to the submission);
    none for no participant."""
    whose = Q(pk__in=[])
    for entrant in set(entrants):
        whose |= entrant.q(prefix)
    return whose


def lock_all(entrants, *, dataset_id: int) -> None:
    """Lock several participants in the one order every transaction uses (no deadlock)."""
    for entrant in sorted(set(entrants), key=lock_order):
        entrant.lock(dataset_id=dataset_id)


def lock_order(entrant: Entrant) -> tuple[int, int]:
    # Users' quota rows before teams' rows: the order submit takes them in (its user's
    # quota row, then their team's row).
    return (1, entrant.team_id) if entrant.team_id is not None else (0, entrant.user_id)


def of_rows(rows) -> Entrant | None:
    """The Entrant of a (team_id, user_id) pair read with ``values_list``."""
    team_id, user_id = rows
    if team_id is None and user_id is None:
        return None
    return Entrant.for_user(user_id=user_id, team_id=team_id)


def partition(prefix: str = "") -> list:
    """Window partition "per participant": the team, else the user (NULLs, the baseline,
    are a partition of their own)."""
    return [
        F(f"{prefix}team"),
        Case(When(**{f"{prefix}team__isnull": True}, then=F(f"{prefix}user"))),
    ]
