"""A per-dataset generation number (Dataset.generation) for caches of public leaderboard
content: bumped in the transaction that changes the dataset's listed scores, read with
the dataset row the request loads anyway, and part of every cache key, so a change
invalidates every cached plot and fragment of the dataset in one UPDATE, and a cache
shared by several web processes (settings.CACHES, CACHE_URL) never serves a stale one.
The loss-against-loss plots are not cached but drawn by a worker and stored
(plot_drawings.py): a bump asks for each of the dataset's plots to be drawn again once
its transaction commits, and pages say when theirs is older than the dataset (never by
how much: the count would tell how many hidden test entries came in).

Only content that is the same for every viewer who may see it goes in such a cache
(plots, counts of listed entries): who may see a split is checked before the cache is
read, never stored in it.
"""

from functools import partial

from django.db import transaction
from django.db.models import F

from datasets.models import Dataset

from . import plot_drawings, statistics_snapshots


def bump(*, dataset_id: int) -> None:
    """Inside the transaction that changes the dataset's listed scores: one row's UPDATE
    (a FOR NO KEY UPDATE lock, which the foreign keys of new entries do not wait for)."""
    Dataset.objects.filter(pk=dataset_id).update(generation=F("generation") + 1)
    # The dataset's plots are drawn again by a worker once the change is visible to it.
    transaction.on_commit(partial(plot_drawings.dataset_changed, dataset_id), robust=True)
    transaction.on_commit(partial(statistics_snapshots.dataset_changed, dataset_id), robust=True)


def key(dataset: Dataset, *parts) -> str:
    """A cache key for content of ``dataset`` as of its generation."""
    return ":".join(["leaderboard", str(dataset.pk), str(dataset.generation), *map(str, parts)])
