"""The heartbeat of a scoring run: how the sweep tells a live run from one whose worker died.

While a run is in progress, a daemon thread refreshes ``Submission.heartbeat_at`` every
SUBMISSION_HEARTBEAT_INTERVAL seconds. services._claim and services.sweep take over a
running submission whose beat is older than SUBMISSION_HEARTBEAT_STALE (a SIGKILLed
worker host, a pool process killed by the kernel), instead of waiting for the whole
SUBMISSION_SCORING_TIMEOUT.

The beat is a conditional UPDATE on (pk, attempt, status running): once another worker
took the run over (attempts + 1) or the run ended, the old thread's UPDATE matches no row
and the thread stops, so it can never keep a later attempt's run looking alive.
"""

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

from django.conf import settings
from django.db import DatabaseError, connections
from django.utils import timezone

from .models import Status, Submission

logger = logging.getLogger(__name__)

# How long the end of a run waits for its heartbeat thread to stop.
JOIN_SECONDS = 30


def beat(*, submission_id: int, attempt: int, now: datetime | None = None) -> bool:
    """Record that the run ``attempt`` of the submission is alive; False if that run is no
    longer the submission's running attempt (taken over, finished)."""
    return bool(
        Submission.objects.filter(pk=submission_id, attempts=attempt, status=Status.RUNNING).update(
            heartbeat_at=now or timezone.now()
        )
    )


def _beating(runs: list[tuple[int, int]], interval: float, stop: threading.Event) -> None:
    """The thread: a beat of every run (submission id, attempt) every ``interval`` seconds
    until ``stop`` or every run is gone (one that is gone is beaten no more). Its own
    database connection (Django's are per thread) is closed when it ends."""
    alive = list(runs)
    try:
        while alive and not stop.wait(interval):
            for submission_id, attempt in list(alive):
                try:
                    if not beat(submission_id=submission_id, attempt=attempt):
                        logger.info(
                            "submission %s: run %s is no longer running; heartbeat stops",
                            submission_id,
                            attempt,
                        )
                        alive.remove((submission_id, attempt))
                except DatabaseError:
                    # The database away for a moment: the run itself will notice if it
                    # lasts; the next beat tries again (a few missed beats only make the
                    # run look stale, and its _finish then finds it superseded: never two
                    # writers).
                    logger.warning("submission %s: heartbeat failed", submission_id, exc_info=True)
                    connections.close_all()  # a fresh connection for the next beat
    finally:
        connections.close_all()


@contextmanager
def beating(*, submission_id: int, attempt: int, interval: float | None = None) -> Iterator[None]:
    """Keep the run ``attempt`` of the submission alive while the block runs."""
    with beating_runs([(submission_id, attempt)], interval=interval):
        yield


@contextmanager
def beating_runs(runs: list[tuple[int, int]], *, interval: float | None = None) -> Iterator[None]:
    """Keep every run (submission id, attempt) of a batch alive while the block runs, from
    one thread. The thread is a daemon (a dying process never waits for it) and is stopped
    and joined on the way out, so no beat follows the end of the runs."""
    stop = threading.Event()
    first_id, first_attempt = runs[0]
    thread = threading.Thread(
        target=_beating,
        args=(
            list(runs),
            settings.SUBMISSION_HEARTBEAT_INTERVAL if interval is None else interval,
            stop,
        ),
        name=f"heartbeat-{first_id}-{first_attempt}",
        daemon=True,
    )
    thread.start()
    try:
        yield
    finally:
        stop.set()
        # At most one beat in flight (a row locked by _finish's transaction until it
        # commits, then matching no row); bounded all the same, a hung database must not
        # hold the worker: a late beat of an ended run matches no row.
        thread.join(timeout=JOIN_SECONDS)
        if thread.is_alive():
            logger.warning("submission %s: heartbeat thread still busy", first_id)


def is_stale(submission: Submission, *, now: datetime) -> bool:
    """Whether a running submission's run counts as dead: its heartbeat is older than
    SUBMISSION_HEARTBEAT_STALE or, for a run without one (started before heartbeats),
    it started longer than SUBMISSION_SCORING_TIMEOUT ago."""
    if submission.heartbeat_at is not None:
        age = settings.SUBMISSION_HEARTBEAT_STALE
        return (now - submission.heartbeat_at).total_seconds() >= age
    if submission.started_at is None:
        return True
    return (now - submission.started_at).total_seconds() >= settings.SUBMISSION_SCORING_TIMEOUT
