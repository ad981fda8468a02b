"""When a challenge's statistics (statistics.py) and their drawings (statistics_plots.py)
are computed: by a worker, one computation at a time per challenge.

A request never computes: at a million submissions the page's aggregates take many
seconds. The page and the drawings serve the latest snapshot (StatisticsSnapshot: the
tables as JSON, the four drawings as SVG). They call :func:`request` when there is none
yet or when it is older than STALE_AFTER (uploads that fail or wait change the outcomes
without a change of the listed scores); so does every change of a dataset's listed
scores, once it commits (generation.bump), for a challenge whose page was viewed. The
first request sends one task (``leaderboard.compute_statistics``, queue ``boards``);
requests that arrive while one is queued or computing only raise ``requested``, and the
computation that finishes sees it went up and sends the next: a burst of changes costs
two computations, not one each. A computation whose worker died is taken over after
COMPUTE_TIMEOUT, and the beat's sweep (``leaderboard.sweep_statistics``) sends one for
any challenge left behind (a lost task, a broker that was down). Where tasks run
in-process (no broker), the request's send computes inline.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import partial

from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone
from kombu.exceptions import OperationalError

from challenge_site.celery import app as celery_app
from challenge_site.challenges.models import Challenge

from . import statistics, statistics_plots
from .models import StatisticsSnapshot
from .statistics import (
    Cell,
    Daily,
    DatasetRow,
    Day,
    OutcomeRow,
    Outcomes,
    Statistics,
    Turnaround,
    Turnarounds,
)

logger = logging.getLogger(__name__)

TASK = "leaderboard.compute_statistics"
SWEEP_TASK = "leaderboard.sweep_statistics"
# A computation that started this long ago is taken to have died with its worker (a
# million submissions take well under a minute).
COMPUTE_TIMEOUT = timedelta(minutes=5)
# A computation sent this long ago and never started is taken to be lost.
QUEUE_TIMEOUT = timedelta(minutes=2)
# A viewed snapshot older than this is computed again (invalid, failed and pending
# uploads, and the days of a running challenge, change it without a score changing).
STALE_AFTER = timedelta(minutes=5)


@dataclass(frozen=True)
class Plot:
    title: str
    numbers: Callable[[Statistics], object]  # the part of the statistics drawn
    draw: Callable  # (numbers, title=) -> SVG


PLOTS = {
    "daily": Plot("valid submissions per day", lambda s: s.daily, statistics_plots.daily_svg),
    "datasets": Plot("per dataset and phase", lambda s: s.datasets, statistics_plots.datasets_svg),
    "outcomes": Plot(
        "what became of the uploads", lambda s: s.outcomes, statistics_plots.outcomes_svg
    ),
    "turnaround": Plot(
        "from upload to scored", lambda s: s.turnaround, statistics_plots.turnaround_svg
    ),
}
SVG_FIELDS = [f"{kind}_svg" for kind in PLOTS]


# --- The numbers as JSON ------------------------------------------------------------------


def _microseconds(value: timedelta | None) -> int | None:
    return None if value is None else value // timedelta(microseconds=1)


def _outcome(row: OutcomeRow) -> dict:
    return {
        "label": str(row.label),
        **{
            name: getattr(row, name)
            for name in (
                "uploads",
                "scored",
                "invalid",
                "failed",
                "pending",
                "participants",
                "uploaders",
            )
        },
    }


def _turnaround(row: Turnaround) -> list:
    return [str(row.label), row.scored, _microseconds(row.median)]


def dump(stats: Statistics) -> dict:
    """The statistics as JSON-ready data (:func:`load` gives them back, equal)."""
    return {
        "daily": {
            "days": [
                [day.number, day.date.isoformat(), day.validation, day.test]
                for day in stats.daily.days
            ],
            "after_deadline": stats.daily.after_deadline,
            "test_start_day": stats.daily.test_start_day,
        },
        "datasets": [
            [row.name, row.task, [[cell.submissions, cell.participants] for cell in row.cells]]
            for row in stats.datasets
        ],
        "outcomes": {
            "phases": [_outcome(row) for row in stats.outcomes.phases],
            "total": _outcome(stats.outcomes.total),
        },
        "turnaround": {
            "phases": [_turnaround(row) for row in stats.turnaround.phases],
            "total": _turnaround(stats.turnaround.total),
        },
    }


def _load_turnaround(label: str, scored: int, median: int | None) -> Turnaround:
    return Turnaround(label, scored, None if median is None else timedelta(microseconds=median))


def load(data: dict) -> Statistics:
    """The statistics :func:`dump` stored."""
    daily, turnaround = data["daily"], data["turnaround"]
    return Statistics(
        daily=Daily(
            days=tuple(
                Day(number=number, date=date.fromisoformat(day), validation=v, test=t)
                for number, day, v, t in daily["days"]
            ),
            after_deadline=daily["after_deadline"],
            test_start_day=daily["test_start_day"],
        ),
        datasets=tuple(
            DatasetRow(name=name, task=task, cells=tuple(Cell(*cell) for cell in cells))
            for name, task, cells in data["datasets"]
        ),
        outcomes=Outcomes(
            phases=tuple(OutcomeRow(**row) for row in data["outcomes"]["phases"]),
            total=OutcomeRow(**data["outcomes"]["total"]),
        ),
        turnaround=Turnarounds(
            phases=tuple(_load_turnaround(*row) for row in turnaround["phases"]),
            total=_load_turnaround(*turnaround["total"]),
        ),
    )


# --- Asking for a computation ---------------------------------------------------------


def send(challenge_id: int) -> None:
    """Send the computation's task (by name); if the broker is down, the sweep sends it."""
    try:
        celery_app.signature(TASK, args=(challenge_id,)).apply_async()
    except OperationalError:
        logger.warning("broker unavailable: statistics of %s wait for the sweep", challenge_id)


def _rows(challenge_id: int):
    return StatisticsSnapshot.objects.filter(challenge_id=challenge_id)


def _row(challenge_id: int) -> StatisticsSnapshot:
    try:
        with transaction.atomic():
            return StatisticsSnapshot.objects.get_or_create(challenge_id=challenge_id)[0]
    except IntegrityError:  # created meanwhile by another request
        return _rows(challenge_id).defer("numbers", *SVG_FIELDS).get()


def request(challenge_id: int, *, row: StatisticsSnapshot | None = None) -> bool:
    """Ask for a computation of the challenge's statistics (``row``: its row if the
    caller read it). True if this call sent the task. While one is queued (not started)
    nothing is written: it will read every change committed before this call."""
    row = row or _row(challenge_id)
    if row.queued:
        return False
    first = StatisticsSnapshot.objects.filter(pk=row.pk, queued=False).update(
        requested=F("requested") + 1, queued=True, requested_at=timezone.now()
    )
    if first:
        send(challenge_id)
    return bool(first)


def stale(row: StatisticsSnapshot, *, now: datetime) -> bool:
    return row.computed_at is None or row.computed_at < now - STALE_AFTER


def latest(challenge: Challenge, *, now: datetime, fields: list[str]) -> StatisticsSnapshot | None:
    """The challenge's snapshot (only ``fields`` and the bookkeeping read), with
    ``pending`` set (a computation is asked for); asks for one when there is none, or when
    the latest is stale and none is on its way. None before the first computation ends
    (where tasks run in-process, the request's send computes it, and the row is read
    again)."""
    rows = _rows(challenge.pk).only(
        "requested", "computed", "queued", "computing_since", "computed_at", "seconds", *fields
    )
    row = rows.first()
    idle = row is not None and not row.queued and row.computing_since is None
    if row is None or (idle and stale(row, now=now)):
        sent = request(challenge.pk, row=row)
        if sent and celery_app.conf.task_always_eager:
            row = rows.first()
    if row is None or row.computed_at is None:
        return None
    row.pending = row.queued or row.computing_since is not None or row.requested > row.computed
    return row


def dataset_changed(dataset_id: int) -> None:
    """After a change of the dataset's listed scores commits: a computation of its
    challenge's statistics, if the page has a snapshot (a page nobody viewed is computed
    when first viewed): one query, and a write only if none is queued."""
    row = (
        StatisticsSnapshot.objects.filter(challenge__datasets=dataset_id)
        .only("queued", "challenge_id")
        .first()
    )
    if row is not None:
        request(row.challenge_id, row=row)


# --- The worker's computation -----------------------------------------------------------


def _claim(challenge_id: int, *, now: datetime) -> tuple[int, datetime] | None:
    """Start a computation: (the ``requested`` count it answers, its start), or None if
    one is under way or the latest is current."""
    with transaction.atomic():
        row = (
            _rows(challenge_id)
            .only("requested", "computed", "queued", "computing_since", "computed_at")
            .select_for_update()
            .first()
        )
        if row is None or (row.computing_since and row.computing_since >= now - COMPUTE_TIMEOUT):
            return None  # under way: its end sends the next one if needed
        if row.computed_at is not None and row.computed >= row.requested:
            StatisticsSnapshot.objects.filter(pk=row.pk).update(queued=False)
            return None
        StatisticsSnapshot.objects.filter(pk=row.pk).update(computing_since=now, queued=False)
        return row.requested, now


@dataclass(frozen=True)
class Computed:
    stats: Statistics
    svgs: dict[str, str]  # kind -> SVG
    seconds: float


def make(challenge: Challenge, *, now: datetime) -> Computed:
    """The statistics of the challenge and their four drawings, as the page shows them."""
    started = time.monotonic()
    stats = statistics.challenge_statistics(challenge=challenge, now=now)
    svgs = {
        kind: plot.draw(plot.numbers(stats), title=f"{challenge.title}: {plot.title}")
        for kind, plot in PLOTS.items()
    }
    return Computed(stats, svgs, time.monotonic() - started)


def compute(*, challenge_id: int) -> bool:
    """The worker's computation unless one is under way or current; True if computed."""
    claimed = _claim(challenge_id, now=timezone.now())
    if claimed is None:
        return False
    count, since = claimed
    try:
        challenge = Challenge.objects.get(pk=challenge_id)
        computed = make(challenge, now=timezone.now())
    except BaseException:
        _release(challenge_id, count, since, computed=None)
        raise
    _release(challenge_id, count, since, computed=computed)
    return True


def _release(challenge_id: int, count: int, since: datetime, *, computed: Computed | None):
    """End a computation: keep it (``computed``; None if it failed) unless a later one was
    kept meanwhile, and send the next if requests arrived meanwhile."""
    with transaction.atomic():
        row = (
            _rows(challenge_id)
            .only("requested", "computed", "queued", "computing_since", "computed_at")
            .select_for_update()
            .first()
        )
        if row is None:  # the challenge went
            return
        fields = ["queued"]
        if row.computing_since == since:  # not taken over meanwhile
            row.computing_since = None
            fields.append("computing_since")
        if computed is not None and (row.computed_at is None or count >= row.computed):
            row.computed, row.computed_at, row.seconds = count, timezone.now(), computed.seconds
            row.numbers = dump(computed.stats)
            for kind, svg in computed.svgs.items():
                setattr(row, f"{kind}_svg", svg)
            fields += ["computed", "computed_at", "seconds", "numbers", *SVG_FIELDS]
        # A task sent during the computation found it under way and did nothing: again.
        again = computed is not None and row.requested > count
        row.queued = again
        if again:
            row.requested_at = timezone.now()
            fields.append("requested_at")
            transaction.on_commit(partial(send, challenge_id), robust=True)
        row.save(update_fields=fields)


def sweep(*, now: datetime) -> list[int]:
    """Send a computation for every challenge asked for and left behind: sent
    QUEUE_TIMEOUT ago and never started (or never sent: a broker that was down), or
    computing since COMPUTE_TIMEOUT (a worker that died)."""
    # statisticssnapshot_behind_idx: the few challenges with work left.
    behind = StatisticsSnapshot.objects.filter(
        Q(requested__gt=F("computed")) | Q(computed_at__isnull=True)
    ).filter(
        Q(computing_since__isnull=True, requested_at__lt=now - QUEUE_TIMEOUT)
        | Q(computing_since__isnull=True, requested_at__isnull=True)
        | Q(computing_since__lt=now - COMPUTE_TIMEOUT)
    )
    found = list(behind.values_list("pk", "challenge_id"))
    for pk, challenge_id in found:
        StatisticsSnapshot.objects.filter(pk=pk).update(queued=True, requested_at=now)
        send(challenge_id)
    return [challenge_id for _, challenge_id in found]
