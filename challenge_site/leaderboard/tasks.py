"""Celery tasks of the leaderboards: thin wrappers around interval_runs."""

import logging

from celery import shared_task
from django.utils import timezone

from . import interval_runs

logger = logging.getLogger(__name__)


@shared_task(name=interval_runs.TASK, acks_late=True, soft_time_limit=600, time_limit=660)
def compute_intervals(dataset_id: int, split: str) -> bool:
    """The bootstrap intervals of one dataset split (debounced: see interval_runs).

    A failure is logged, not raised: where tasks run in-process it would otherwise reach
    the request that scored an entry; the split stays behind (requested > computed) and
    the sweep sends it again."""
    try:
        return interval_runs.run(dataset_id=dataset_id, split=split)
    except Exception:
        logger.exception("intervals of dataset %s, %s split, failed", dataset_id, split)
        return False


@shared_task(name="leaderboard.sweep_intervals", acks_late=True)
def sweep_intervals() -> list:
    """Send a run for every split whose intervals were asked for and never computed."""
    return interval_runs.sweep(now=timezone.now())
