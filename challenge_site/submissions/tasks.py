"""Celery tasks: thin wrappers that pass an id to the services.

services.py sends the scoring task by its name and never imports this module.
"""

from celery import shared_task
from celery.signals import worker_process_init
from django.conf import settings
from django.utils import timezone

from . import resources, services

# After the database or the object store went away mid-run: try again this many seconds later, at most this
# many times (then the sweep queues the run again once it counts as stuck).
DATABASE_RETRY_DELAY = 5
DATABASE_RETRIES = 3


@shared_task(
    name="submissions.score",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=settings.SUBMISSION_SCORING_TIMEOUT,
    time_limit=settings.SUBMISSION_SCORING_TIMEOUT + 30,
)
def score_submission(self, submission_id: int, force: bool = False) -> str | None:
    """Score one submission; delivered again if the worker dies (see services)."""
    try:
        submission = services.score_submission(
            submission_id=submission_id, force=force, task_id=self.request.id or ""
        )
    except services.INTERRUPTED as error:
        # The retry keeps the task id, so it takes the interrupted run over (attempts + 1).
        raise self.retry(
            exc=error, countdown=DATABASE_RETRY_DELAY, max_retries=DATABASE_RETRIES
        ) from error
    return submission.status if submission is not None else None


@shared_task(name="submissions.sweep", acks_late=True)
def sweep_submissions() -> list[int]:
    """Queue again the submissions stuck in the queue or in a run that died."""
    return services.sweep(now=timezone.now())


@shared_task(name="submissions.purge_invalid_zips", acks_late=True)
def purge_invalid_zips() -> int:
    """Delete the zips of submissions found invalid more than the retention days ago."""
    return services.purge_invalid_zips(now=timezone.now())


@worker_process_init.connect(weak=False, dispatch_uid="submissions.mark_pool_process")
def mark_pool_process(**kwargs) -> None:
    """A prefork pool process starts: its scoring runs get a memory cap (resources.py)."""
    resources.mark_pool_process()
