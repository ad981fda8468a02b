"""Celery tasks of the leaderboards: thin wrappers around interval_runs and plot_drawings."""

import logging

from celery import shared_task
from django.utils import timezone

from . import export_files, interval_runs, plot_drawings

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


@shared_task(name=plot_drawings.TASK, acks_late=True, soft_time_limit=240, time_limit=270)
def draw_plot(dataset_id: int, split: str, ranking: str, point: str) -> bool:
    """One loss-against-loss plot (single flight: see plot_drawings). A failure is logged,
    not raised: where tasks run in-process it would otherwise reach the request that asked
    for it; the plot stays behind (requested > drawn) and the sweep sends it again."""
    try:
        return plot_drawings.draw(dataset_id=dataset_id, split=split, ranking=ranking, point=point)
    except Exception:
        logger.exception("plot %s/%s %s against %s failed", dataset_id, split, ranking, point)
        return False


@shared_task(name="leaderboard.sweep_boards", acks_late=True)
def sweep_boards() -> dict:
    """Send the plots (and exports) asked for and left behind."""
    now = timezone.now()
    return {"plots": plot_drawings.sweep(now=now), "exports": export_files.sweep(now=now)}


@shared_task(
    name=export_files.TASK,
    acks_late=True,
    soft_time_limit=export_files.SOFT_LIMIT_SECONDS,
    time_limit=export_files.SOFT_LIMIT_SECONDS + 60,
)
def build_export(export_id: int) -> bool:
    """One whole-board file (single flight: see export_files). A failure is recorded on
    the row (the status page says why) and logged, not raised: where tasks run
    in-process it would otherwise reach the request that asked for the file."""
    try:
        return export_files.build(export_id=export_id)
    except Exception:
        logger.exception("export %s failed", export_id)
        return False


@shared_task(
    name="leaderboard.compute_statistics", acks_late=True, soft_time_limit=240, time_limit=270
)
def compute_statistics(challenge_id: int) -> bool:
    """A challenge's statistics page and its drawings (single flight: see
    statistics_snapshots). A failure is logged, not raised: where tasks run in-process it
    would otherwise reach the request that asked; the snapshot stays behind (requested >
    computed) and the sweep sends it again."""
    from . import statistics_snapshots

    try:
        return statistics_snapshots.compute(challenge_id=challenge_id)
    except Exception:
        logger.exception("statistics of challenge %s failed", challenge_id)
        return False


@shared_task(name="leaderboard.sweep_statistics", acks_late=True)
def sweep_statistics() -> list:
    """Send the statistics computations asked for and left behind."""
    from . import statistics_snapshots

    return statistics_snapshots.sweep(now=timezone.now())
