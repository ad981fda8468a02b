"""When the bootstrap intervals of a dataset split are computed: debounced, in the background.

Scoring, rescoring and moderating an entry call :func:`request` inside their
transaction. The first request sends one task (on commit); requests that arrive while
a run is queued only raise the ``requested`` count; one that arrives while a run is
under way sends a task that finds the run busy and hands back the queue, so that the
run that finishes sees the count went up and sends the next: a burst of scored entries costs two runs,
not one per entry. The task is sent without a countdown: a delayed (ETA) task waits
unacknowledged in a worker, and kombu's Redis transport can crash the worker when it
tries to give such tasks back while Redis is down (seen in tests/stack/test_faults.py). At most one run per split computes at a time; a run whose
worker died is taken over after RUN_TIMEOUT, and the beat's sweep sends a run for any
split left behind (a broker that was down, a lost task).

Scoring comes first: while uploads to the challenge are being scored, or its entries'
requests come in a burst (a deadline rush: several since the last run, or any soon
after it), a run waits (:func:`_waits`), unless the split's intervals are older than
MAX_WAIT. The sweep (every 10 seconds) sends it once the burst is over and scoring idle;
a lone entry's run (long after the last one) never waits.
"""

import logging
import time
from datetime import datetime, timedelta
from functools import partial

from django.db import IntegrityError, transaction
from django.db.models import F, Q, Subquery
from django.utils import timezone
from kombu.exceptions import OperationalError

from challenge_site.celery import app as celery_app
from challenge_site.submissions.models import Status, Submission
from datasets.models import Dataset

from . import intervals  # the numbers; this module only says when
from .models import IntervalRun

logger = logging.getLogger(__name__)

# A run that started this long ago is taken to have died with its worker.
RUN_TIMEOUT = timedelta(minutes=15)
# Interval runs wait while uploads queued in the last SCORING_WAIT are being scored (an
# upload stuck longer is the scoring sweep's affair, not a reason to wait), but not when
# the split's intervals are older than MAX_WAIT.
SCORING_WAIT = timedelta(minutes=10)
MAX_WAIT = timedelta(minutes=2)
# A burst of requests (scored entries): BURST or more since the last run, the latest less
# than QUIET ago. The sweep (settings: every 10 s) sends its run once it is QUIET.
BURST = 2
QUIET = timedelta(seconds=3)
# A request within AFTER_RUN of the last run's end is taken as part of a burst too: in a
# deadline rush the first request after each run is one, not BURST, and a run in every
# gap between uploads took the CPU and the database from the scoring of the next ones
# (53 runs in the bench's rush of 315 uploads over 90 s, bench/stack.py --rush-pair).
AFTER_RUN = timedelta(seconds=10)
TASK = "leaderboard.intervals"
# The splits with leaderboards (services.SPLITS; not imported: services imports queries,
# which the submissions app's services must not load at import time).
SPLITS = ("val", "test", "public", "private")


def _row(dataset_id: int, split: str) -> IntervalRun:
    try:
        with transaction.atomic():
            return IntervalRun.objects.get_or_create(dataset_id=dataset_id, split=split)[0]
    except IntegrityError:  # created meanwhile by another request (or the dataset went)
        return IntervalRun.objects.get(dataset_id=dataset_id, split=split)


def send(dataset_id: int, split: str) -> None:
    """Send the run's task (by name); if the broker is down, the sweep sends it later."""
    try:
        celery_app.signature(TASK, args=(dataset_id, split)).apply_async()
    except OperationalError:
        logger.warning(
            "broker unavailable: intervals of %s/%s wait for the sweep", dataset_id, split
        )


def request(*, dataset_id: int, split: str) -> None:
    """Ask for the split's intervals to be computed again, once the caller's transaction
    commits (nothing is asked if it rolls back, or if the dataset went with it)."""
    if split in SPLITS:
        transaction.on_commit(partial(_request_now, dataset_id, split), robust=True)


def _request_now(dataset_id: int, split: str) -> None:
    # The usual case, the split's row is there (it goes with its dataset): one UPDATE,
    # two while a run is queued. Otherwise the row is made first (if the dataset stays).
    now = timezone.now()
    rows = IntervalRun.objects.filter(dataset_id=dataset_id, split=split)
    if rows.filter(queued=False).update(
        requested=F("requested") + 1, queued=True, requested_at=now
    ):
        send(dataset_id, split)
        return
    if rows.update(requested=F("requested") + 1, requested_at=now):
        return
    if not Dataset.objects.filter(pk=dataset_id).exists():
        return
    try:
        row = _row(dataset_id, split)
    except IntegrityError:  # the dataset was deleted meanwhile
        return
    now = timezone.now()
    first = IntervalRun.objects.filter(pk=row.pk, queued=False).update(
        requested=F("requested") + 1, queued=True, requested_at=now
    )
    if first:
        send(dataset_id, split)
    else:
        IntervalRun.objects.filter(pk=row.pk).update(requested=F("requested") + 1, requested_at=now)


def _claim(dataset_id: int, split: str, *, now: datetime) -> int | None:
    """Start a run: the ``requested`` count it computes, or None if one is running."""
    free = Q(running_since__isnull=True) | Q(running_since__lt=now - RUN_TIMEOUT)
    with transaction.atomic():
        row = (
            IntervalRun.objects.select_for_update()
            .filter(dataset_id=dataset_id, split=split)
            .first()
        )
        if row is None:
            return None
        if not IntervalRun.objects.filter(pk=row.pk).filter(free).exists():
            # This task was the one queued (a request during the run sends one): it is
            # spent, so the run under way must send the next at its end (_release).
            IntervalRun.objects.filter(pk=row.pk).update(queued=False)
            return None
        IntervalRun.objects.filter(pk=row.pk).update(running_since=now, queued=False)
        return row.requested


def _in_process() -> bool:
    """Tasks run in-process (the Celery app's switch, which the tests set too): then no
    worker shares a host with scoring, and no run waits."""
    return bool(celery_app.conf.task_always_eager)


def scoring_busy(*, dataset_id: int, now: datetime) -> bool:
    """Some upload to the dataset's challenge queued in the last SCORING_WAIT is waiting for
    or under scoring: its interval runs then wait, so that on a host shared with the
    scoring workers a deadline rush is scored without them (issue 29). Never with tasks
    run in-process (there a run waits for nothing). Served by the scoring sweep's partial
    index (status IN (queued, running), queued_at): only the few rows waiting are joined."""
    if _in_process():
        return False
    challenge = Dataset.objects.filter(pk=dataset_id).values("challenge_id")
    return Submission.objects.filter(
        status__in=[Status.QUEUED, Status.RUNNING],
        queued_at__gt=now - SCORING_WAIT,
        dataset__challenge_id=Subquery(challenge),
    ).exists()


def _in_burst(*, now: datetime) -> Q:
    """Rows whose requests come in a burst: the latest less than QUIET ago, and BURST or
    more since the last run or the last run ended less than AFTER_RUN ago (a deadline
    rush: each scored entry asks again). A lone request, long after the last run, is
    none."""
    since_run = Q(requested__gte=F("computed") + BURST) | Q(computed_at__gt=now - AFTER_RUN)
    return Q(requested_at__gt=now - QUIET) & since_run


def _waits(dataset_id: int, split: str, *, now: datetime) -> bool:
    """This run waits for scoring: its requests come in a burst, or uploads to its
    challenge are being scored (:func:`scoring_busy`), and its intervals were computed
    less than MAX_WAIT ago (a split never computed, or computed long ago, runs anyway:
    a busy site's intervals lag by MAX_WAIT at most). A run that waits hands its queue
    back: the next request, or the sweep once the burst is over and scoring idle, sends
    it again. With tasks run in-process nothing waits."""
    if _in_process():
        return False
    rows = IntervalRun.objects.filter(
        dataset_id=dataset_id, split=split, running_since__isnull=True,
        computed_at__gt=now - MAX_WAIT,
    )  # fmt: skip
    if not scoring_busy(dataset_id=dataset_id, now=now):
        rows = rows.filter(_in_burst(now=now))
    return bool(rows.update(queued=False))


def run(*, dataset_id: int, split: str) -> bool:
    """Compute the split's intervals unless a run is under way or the run waits for
    scoring (:func:`_waits`); True if this one ran."""
    if _waits(dataset_id, split, now=timezone.now()):
        return False
    generation = _claim(dataset_id, split, now=timezone.now())
    if generation is None:
        return False
    started = time.monotonic()
    try:
        summary = intervals.compute_and_store(dataset_id=dataset_id, split=split)
    except BaseException:
        _release(dataset_id, split, generation)
        raise
    _release(dataset_id, split, generation, summary=summary, seconds=time.monotonic() - started)
    return True


def _release(dataset_id: int, split: str, generation: int, *, summary=None, seconds=None):
    """End a run: record what it computed (``summary``; None if it failed) and send the
    next run if requests arrived meanwhile."""
    with transaction.atomic():
        row = IntervalRun.objects.select_for_update().get(dataset_id=dataset_id, split=split)
        row.running_since = None
        fields = ["running_since", "queued"]
        if summary is not None:
            if row.resampled and row.resampled != summary.resampled:
                transaction.on_commit(partial(intervals.delete_resampled, row.resampled))
            row.computed = max(row.computed, generation)
            row.computed_at = timezone.now()
            row.seconds = seconds
            row.entries = summary.entries
            row.resampled = summary.resampled
            fields += ["computed", "computed_at", "seconds", "entries", "resampled"]
        again = row.requested > generation and not row.queued and summary is not None
        row.queued = row.queued or again
        row.save(update_fields=fields)
        if again:
            transaction.on_commit(partial(send, dataset_id, split))


def sweep(*, now: datetime) -> list[tuple[int, str]]:
    """Send a run for every split with requests left over and no run on its way since
    RUN_TIMEOUT (a lost task, a broker that was down), and, once its burst is over and
    its challenge's scoring idle, for every split whose run waited (requests left over,
    none queued or running)."""
    stale = now - RUN_TIMEOUT
    behind = IntervalRun.objects.filter(requested__gt=F("computed"), requested_at__lt=stale).filter(
        Q(running_since__isnull=True) | Q(running_since__lt=stale)
    )
    splits = list(behind.values_list("dataset_id", "split"))
    waited = (
        IntervalRun.objects.filter(
            requested__gt=F("computed"), queued=False, running_since__isnull=True
        )
        .exclude(_in_burst(now=now))
        .values_list("dataset_id", "split")
    )
    splits += [
        (dataset_id, split)
        for dataset_id, split in waited
        if (dataset_id, split) not in splits and not scoring_busy(dataset_id=dataset_id, now=now)
    ]
    for dataset_id, split in splits:
        IntervalRun.objects.filter(dataset_id=dataset_id, split=split).update(queued=True)
        send(dataset_id, split)
    return splits
