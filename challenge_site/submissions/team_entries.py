"""A participant's entries when they join a team (teams.signals, connected in
SubmissionsConfig.ready()): their quota rows locked, the limits counted with the team's,
and their entries made the team's.

Locks: the joiner's quota rows (as their own uploads take them), then the team's row (as
every member's upload takes it): the order ``services.submit`` uses.
"""

from __future__ import annotations

from django.db.models import Count, Q

from challenge_site.challenges.clock import current_phase
from challenge_site.teams.services import TeamError

from . import standings
from .entrants import Entrant
from .limits import phase_limits, utc_day
from .models import ACCEPTED, Submission, SubmissionQuota


def lock_quota_rows(*, user, challenge, **_) -> None:
    """The joiner's quota rows of every dataset of the challenge, created if missing."""
    datasets = sorted(challenge.datasets.values_list("pk", flat=True))
    for dataset_id in datasets:
        SubmissionQuota.objects.get_or_create(user=user, dataset_id=dataset_id)
    # By dataset id, with no join: FOR UPDATE would lock the joined dataset rows too,
    # which every transaction writing an entry share-locks at commit (its foreign key).
    list(
        SubmissionQuota.objects.select_for_update(no_key=True)
        .filter(user=user, dataset_id__in=datasets)
        .order_by("dataset_id")
    )


def check_limits(*, team, user, challenge, now, **_) -> None:
    """TeamError when the team's entries and the joiner's own, counted together, would be
    over a limit of the current phase: joining makes the joiner's entries the team's."""
    phase = current_phase(challenge, now=now)
    daily, total = phase_limits(challenge, phase)
    start, end = utc_day(now)
    together = (
        Submission.objects.filter(
            Entrant(team_id=team.pk, user_id=None).q() | Q(user=user, team__isnull=True),
            dataset__challenge=challenge,
            phase=phase,
            status__in=ACCEPTED,
        )
        .values("dataset__name")
        .annotate(
            today=Count("id", filter=Q(created__gte=start, created__lt=end)), total=Count("id")
        )
        .order_by("dataset__name")
    )
    for row in together:
        if daily is not None and row["today"] > daily:
            raise TeamError(
                f"Together you would have made {row['today']} submissions to "
                f"{row['dataset__name']} today, over its daily limit of {daily}: join after "
                "00:00 UTC."
            )
        if total is not None and row["total"] > total:
            raise TeamError(
                f"Together you would have made {row['total']} submissions to "
                f"{row['dataset__name']}, over its limit of {total}."
            )


def take_entries(*, team, user, challenge, **_) -> None:
    """The joiner's entries in the challenge become the team's; what depends on who made
    them (Ladder, final entries) is computed again for the team."""
    moved = Submission.objects.filter(
        user=user, team__isnull=True, dataset__challenge=challenge, is_baseline=False
    )
    datasets = {}
    for dataset_id, splits in moved.values_list("dataset_id", "splits"):
        datasets.setdefault(dataset_id, set()).update(splits)
    moved.update(team=team)
    entrant = Entrant(team_id=team.pk, user_id=None)
    for dataset in challenge.datasets.filter(pk__in=datasets).select_related("challenge"):
        standings.entries_changed(dataset=dataset, entrant=entrant, splits=datasets[dataset.pk])
        # The joiner's own best entries moved with them (their quota rows are locked).
        standings.listing_changed(dataset=dataset, entrant=Entrant(team_id=None, user_id=user.pk))
