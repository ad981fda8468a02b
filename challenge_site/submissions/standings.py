"""What follows from a change to a participant's entries: their Ladder, which entries
count for the final ranking, and the intervals of every split the entries are scored on.

Scoring, moderation, deletion and final choices call ``entries_changed`` inside their
transaction; the participant's quota row is locked first (``lock_owners``, before any
submission row), so that two changes at once are applied one after the other and never
deadlock.
"""

from django.contrib.auth import get_user_model
from django.db import transaction

from challenge_site.leaderboard import interval_runs
from datasets.models import TEST_PARTS, Dataset, Split

from . import finals, ladder
from .models import Submission, SubmissionQuota


def lock(*, dataset_id: int, user_id: int) -> None:
    """Serialise the participant's changes on the dataset (their quota row, as submit)."""
    quota, _ = SubmissionQuota.objects.get_or_create(user_id=user_id, dataset_id=dataset_id)
    SubmissionQuota.objects.select_for_update().filter(pk=quota.pk).first()


def lock_owners(submission_ids) -> None:
    """Lock the quota rows of the participants of these submissions, in one order, before
    the caller locks or changes the submissions themselves: every transaction that ends
    in ``entries_changed`` takes its locks quota first, submissions second, so two of
    them never wait for each other (finals.refresh updates all of a participant's
    entries)."""
    owners = sorted(
        set(
            Submission.objects.filter(pk__in=list(submission_ids), user__isnull=False)
            .values_list("dataset_id", "user_id")
            .distinct()
        )
    )
    for dataset_id, user_id in owners:
        lock(dataset_id=dataset_id, user_id=user_id)


def scored_splits(splits, *, has_public_part: bool) -> list[str]:
    """The splits a submission with predictions for ``splits`` is scored on: the test's
    parts too when the challenge has them."""
    found = {str(split) for split in splits}
    if has_public_part and Split.TEST in found:
        found.update(str(part) for part in TEST_PARTS)
    return sorted(found)


def entries_changed(*, dataset: Dataset, user_id: int | None, splits) -> None:
    """Recompute what depends on the participant's listed entries (inside a transaction).
    ``user_id`` None (the baseline) only asks for the intervals."""
    for split in scored_splits(splits, has_public_part=dataset.challenge.has_public_part):
        interval_runs.request(dataset_id=dataset.pk, split=split)
    if user_id is None:
        return
    with transaction.atomic():
        lock(dataset_id=dataset.pk, user_id=user_id)
        for split in ladder.LADDER_SPLITS:
            ladder.refresh(dataset=dataset, user_id=user_id, split=split)
        finals.refresh(dataset=dataset, user_id=user_id)


def entry_deleted(*, dataset_id: int, user_id: int | None, splits) -> None:
    """After a deleted entry's transaction commits: recompute for its participant, if
    the dataset and the participant are still there (a whole dataset may have gone)."""
    dataset = Dataset.objects.select_related("challenge").filter(pk=dataset_id).first()
    if dataset is None:
        return
    if user_id is not None and not get_user_model().objects.filter(pk=user_id).exists():
        user_id = None
    entries_changed(dataset=dataset, user_id=user_id, splits=splits)
