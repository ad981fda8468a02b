"""Zips that are no longer kept: invalid ones after the retention days, deleted submissions'."""

import logging
from datetime import datetime, timedelta
from functools import partial

from django.conf import settings
from django.db import transaction

from .models import Status, Submission
from .storage import private_storage

logger = logging.getLogger("challenge_site.submissions.services")


def purge_invalid_zips(*, now: datetime) -> int:
    """Delete the zips of submissions found invalid more than
    SUBMISSION_INVALID_ZIP_RETENTION_DAYS ago (their reports stay); returns how many."""
    cutoff = now - timedelta(days=settings.SUBMISSION_INVALID_ZIP_RETENTION_DAYS)
    old = Submission.objects.filter(status=Status.INVALID, finished_at__lt=cutoff).exclude(file="")
    purged = 0
    for submission_id in old.values_list("pk", flat=True).iterator():
        with transaction.atomic():
            submission = (
                Submission.objects.select_for_update()
                .filter(pk=submission_id, status=Status.INVALID, finished_at__lt=cutoff)
                .exclude(file="")
                .first()
            )
            if submission is None:
                continue  # rescored or deleted meanwhile
            name = submission.file.name
            submission.file = ""
            submission.file_deleted_at = now
            submission.save(update_fields=["file", "file_deleted_at"])
            transaction.on_commit(partial(private_storage().delete, name))
        purged += 1
    if purged:
        logger.info("deleted the zips of %s invalid submission(s)", purged)
    return purged


def delete_stored_zip(*, submission: Submission) -> None:
    """Remove a deleted submission's zip from the private storage once the deletion commits."""
    if submission.file:
        transaction.on_commit(partial(private_storage().delete, submission.file.name))
