"""A per-dataset generation number (Dataset.generation) for caches of public leaderboard
content: bumped in the transaction that changes the dataset's listed scores, read with
the dataset row the request loads anyway, and part of every cache key, so a change
invalidates every cached plot and fragment of the dataset in one UPDATE, and a cache
shared by several web processes (settings.CACHES, CACHE_URL) never serves a stale one.

Only content that is the same for every viewer who may see it goes in such a cache
(plots, counts of listed entries): who may see a split is checked before the cache is
read, never stored in it.
"""

from django.db.models import F

from datasets.models import Dataset


def bump(*, dataset_id: int) -> None:
    """Inside the transaction that changes the dataset's listed scores: one row's UPDATE
    (a FOR NO KEY UPDATE lock, which the foreign keys of new entries do not wait for)."""
    Dataset.objects.filter(pk=dataset_id).update(generation=F("generation") + 1)


def key(dataset: Dataset, *parts) -> str:
    """A cache key for content of ``dataset`` as of its generation."""
    return ":".join(["leaderboard", str(dataset.pk), str(dataset.generation), *map(str, parts)])
