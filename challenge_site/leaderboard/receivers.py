"""The leaderboard's answers to changes below it (submissions.signals), connected in
LeaderboardConfig.ready()."""

from functools import partial

from django.db import transaction

from challenge_site.submissions.storage import private_storage
from datasets.models import ScoredSplit

from . import best, generation, interval_runs


def listing_changed(*, dataset, entrant=None, entrants=None, bump: bool = True, **_) -> None:
    """The participant's (or ``entrants``') best-per-participant rows follow, and
    (``bump``) the dataset's generation moves on (its cached plots and fragments are out
    of date)."""
    best.refresh_many(dataset=dataset, entrants=[entrant] if entrants is None else entrants)
    if bump:
        generation.bump(dataset_id=dataset.pk)


def boards_stale(*, dataset_id: int, **_) -> None:
    generation.bump(dataset_id=dataset_id)


def intervals_stale(*, dataset_id: int, split: str, **_) -> None:
    interval_runs.request(dataset_id=dataset_id, split=split)


def export_deleted(*, instance, **_) -> None:
    """A BoardExport row went (its dataset was deleted): its file in the private storage
    follows once the deletion commits (nothing else names it)."""
    if instance.file:
        transaction.on_commit(partial(private_storage().delete, instance.file), robust=True)


def shown_entries_changed(*, challenge, **_) -> int:
    """The challenge's options or its publication changed who the public boards list
    (late joiners' entries on the test's public part): every dataset's generation moves
    on (cached pages, exports and plots are made again) and the public part's intervals
    are computed again over the entries now listed. Returns 0 (no entry rescored)."""
    for dataset in challenge.datasets.all():
        generation.bump(dataset_id=dataset.pk)
        if challenge.has_public_part:
            interval_runs.request(dataset_id=dataset.pk, split=ScoredSplit.PUBLIC)
    return 0
