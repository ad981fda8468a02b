"""Whole-board downloads (CSV, JSON) built by a worker into the private storage.

A whole board of a million entries takes minutes to write, longer than a web worker may
answer (gunicorn's timeout cut the streamed CSV at ~100,000 rows with a 200). So a
download asks for the board's file at the board's current :func:`version`; when there is
none, :func:`request` sends one build and the view answers 202. Single flight per file,
as interval_runs: at most one build at a time; requests during a build raise
``requested`` and the build that ends sees it and sends one more. The worker
(:func:`build`) streams the rows from the database a chunk at a time into a temporary
file, hashing as it writes, saves it under a fresh name only once complete, and flips the
row to ready in one transaction (the old file is deleted when that commits). A build
that fails records why and leaves the last complete file alone, which is never served
for a version it was not built at. The beat's sweep sends builds left behind.
"""

import hashlib
import logging
import secrets
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from functools import partial

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.core.files import File
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.db.models.functions import Greatest
from django.urls import reverse
from django.utils import timezone
from kombu.exceptions import OperationalError

from challenge_site.celery import app as celery_app
from challenge_site.challenges import policy
from challenge_site.submissions.storage import private_storage
from datasets.models import Dataset

from . import services
from .exports import csv_lines, json_lines
from .models import BoardExport, IntervalRun
from .queries import Board

logger = logging.getLogger(__name__)

TASK = "leaderboard.build_export"
FOLDER = "leaderboard-exports"
# The task's limits (tasks.build_export); a build that started longer ago than
# BUILD_TIMEOUT died with its worker and may be taken over.
SOFT_LIMIT_SECONDS = 3600
BUILD_TIMEOUT = timedelta(seconds=SOFT_LIMIT_SECONDS + 300)
# A build asked for this long ago and not started was lost (a broker that was down).
QUEUED_TIMEOUT = timedelta(minutes=5)
Status = BoardExport.Status
Audience = BoardExport.Audience
CONTENT_TYPES = {"csv": "text/csv; charset=utf-8", "json": "application/json"}


# --- Which file a board's download is -------------------------------------------------


def version(dataset: Dataset, split: str) -> int:
    """The board's content version: the dataset's generation (listed scores) plus the
    split's computed interval runs (the interval columns). Both only grow, so the sum
    changes whenever either does; one indexed query."""
    computed = (
        IntervalRun.objects.filter(dataset=dataset, split=split)
        .values_list("computed", flat=True)
        .first()
    )
    return dataset.generation + (computed or 0)


def audience(board: Board, *, now: datetime) -> str:
    """Who may read the board's file: everyone, or (test scores before publication, the
    exact board behind the Ladder, an unreleased slice, a challenge not open yet) the
    organisers only. The content depends on no viewer; keying on this keeps a file made
    for organisers from ever being served to anyone else, whatever the rules say later."""
    challenge, anyone = board.dataset.challenge, AnonymousUser()
    public = (
        policy.datasets_open(challenge, user=anyone, now=now)
        and policy.scores_public(challenge, board.split)
        and not policy.ladder_applies(challenge, board.split, user=anyone, now=now)
        and (not board.slice or policy.slices_visible(challenge, board.split, user=anyone, now=now))
    )
    return Audience.PUBLIC if public else Audience.ORGANISERS


def _key(board: Board, *, fmt: str, audience: str) -> dict:
    return {
        "dataset": board.dataset,
        "split": board.split,
        "slice": board.slice,
        "sort": board.sort.name,
        "best": board.best,
        "final": board.final,
        "format": fmt,
        "audience": audience,
    }


def find(board: Board, *, fmt: str, audience: str) -> BoardExport | None:
    return BoardExport.objects.filter(**_key(board, fmt=fmt, audience=audience)).first()


def servable(row: BoardExport | None, *, current: int) -> bool:
    """A complete file of the board's current version."""
    return row is not None and bool(row.file) and row.built == current


def failed(row: BoardExport | None, *, current: int) -> bool:
    """The last build failed and nothing newer was asked for since (a retry is the
    user's: a GET does not loop on a build that fails)."""
    return row is not None and row.status == Status.FAILED and row.requested >= current


# --- Asking for a build ---------------------------------------------------------------


def send(export_id: int) -> None:
    """Send the build's task (by name); if the broker is down, the sweep sends it later."""
    try:
        celery_app.signature(TASK, args=(export_id,)).apply_async()
    except OperationalError:
        logger.warning("broker unavailable: export %s waits for the sweep", export_id)


def request(
    *, board: Board, fmt: str, audience: str, current: int, retry: bool = False
) -> BoardExport:
    """Ask for the board's file at version ``current``: send one build unless one is on
    its way (then only ``requested`` grows, and that build sends the next). ``retry``:
    also after a failed build of the same version (the status page's button). Where
    tasks run in-process the build is done when this returns; the row as it is then."""
    now = timezone.now()
    key = _key(board, fmt=fmt, audience=audience)
    row = BoardExport.objects.filter(**key).first()
    if row is None:
        try:
            with transaction.atomic():
                row = BoardExport.objects.create(
                    **key, requested=current, requested_at=now, status=Status.QUEUED
                )
        except IntegrityError:  # made meanwhile by another request
            row = BoardExport.objects.get(**key)
        else:
            send(row.pk)
            row.refresh_from_db()
            return row
    idle = Q(status=Status.READY) | Q(status=Status.FAILED, requested__lt=current)
    if retry:
        idle |= Q(status=Status.FAILED)
    first = BoardExport.objects.filter(idle, pk=row.pk).update(
        status=Status.QUEUED, requested=Greatest(F("requested"), current), requested_at=now
    )
    if first:
        send(row.pk)
    else:
        BoardExport.objects.filter(pk=row.pk).update(requested=Greatest(F("requested"), current))
    row.refresh_from_db()
    return row


# --- Building (the worker) ------------------------------------------------------------


def _claim(export_id: int, *, now: datetime) -> BoardExport | None:
    """Start a build: the row, or None if none is asked for or one is under way (a
    duplicate message, or the sweep's resend of a build that is running)."""
    with transaction.atomic():
        row = BoardExport.objects.select_for_update().filter(pk=export_id).first()
        if row is None:
            return None
        stale = row.building_since is not None and row.building_since < now - BUILD_TIMEOUT
        if not (row.status == Status.QUEUED or (row.status == Status.BUILDING and stale)):
            return None
        row.status, row.building_since = Status.BUILDING, now
        row.save(update_fields=["status", "building_since"])
        return row


def board_of(row: BoardExport, dataset: Dataset) -> Board:
    losses = {loss.name: loss for loss in dataset.shown_losses()}
    if row.sort not in losses:
        raise BuildError(f"The loss {row.sort} is no longer shown on this dataset.")
    # A public file leaves out what the public board leaves out (late joiners' entries).
    withheld = row.audience == Audience.PUBLIC and policy.late_feedback_withheld(
        dataset.challenge, row.split, user=AnonymousUser()
    )
    return Board(
        dataset,
        row.split,
        losses[row.sort],
        row.best,
        final=row.final,
        slice=row.slice,
        late_withheld=withheld,
    )


class BuildError(Exception):
    """A reason a build cannot be done, in words for the status page."""


class _Counted:
    """The rows as they go by, counted (the file's row count)."""

    def __init__(self, rows):
        self.rows, self.count = rows, 0

    def __iter__(self):
        for row in self.rows:
            self.count += 1
            yield row


def submission_url() -> Callable[[int], str]:
    """``url_for(pk)``: the entry's absolute URL under SITE_URL (a worker has no request);
    reversed once, not per row."""
    marker = 987654321
    head, tail = reverse("submission_detail", args=[marker]).split(str(marker))
    base = settings.SITE_URL.rstrip("/") + head
    return lambda pk: f"{base}{pk}{tail}"


def meta(board: Board) -> dict:
    """The JSON file's fields before its rows: the API's. (Not the version: it moves
    with every split's scores, and would count test entries before publication.)"""
    dataset = board.dataset
    return {
        "challenge": dataset.challenge.slug,
        "dataset": dataset.name,
        "split": board.split,
        "sort": board.sort.name,
        "view": "best" if board.best else "all",
        "slice": board.slice or None,
        "feedback": "exact",
        "final_ranking": board.final,
    }


def write(board: Board, *, fmt: str, out) -> tuple[int, int, str]:
    """Write the whole board to the binary file ``out``: (rows, bytes, sha256 hex)."""
    rows = _Counted(services.iter_rows(board=board))
    url_for = submission_url()
    if fmt == BoardExport.Format.JSON:
        lines = json_lines(board, rows, url_for=url_for, meta=meta(board))
    else:
        lines = csv_lines(board, rows, url_for=url_for)
    digest, size, batch = hashlib.sha256(), 0, []
    for line in lines:
        batch.append(line)
        if len(batch) >= 1000:  # a thousand lines per write and hash update
            size += _put("".join(batch), out, digest)
            batch.clear()
    size += _put("".join(batch), out, digest)
    return rows.count, size, digest.hexdigest()


def _put(text: str, out, digest) -> int:
    data = text.encode()
    digest.update(data)
    out.write(data)
    return len(data)


def build(*, export_id: int) -> bool:
    """Build the row's file unless a build is under way or none is asked for; True if
    this one built it. A failure is recorded on the row (and raised on to the task)."""
    claimed_at = timezone.now()
    row = _claim(export_id, now=claimed_at)
    if row is None:
        return False
    started, name = time.monotonic(), ""
    try:
        dataset = Dataset.objects.select_related("challenge").get(pk=row.dataset_id)
        board = board_of(row, dataset)
        built = version(dataset, row.split)
        with tempfile.TemporaryFile() as spool:
            rows, size, sha256 = write(board, fmt=row.format, out=spool)
            spool.seek(0)
            name = f"{FOLDER}/{row.dataset_id}/{row.pk}-{secrets.token_hex(8)}.{row.format}"
            name = private_storage().save(name, File(spool))
    except BaseException as error:
        _fail(row.pk, claimed_at, reason=_reason(error))
        if name:
            private_storage().delete(name)
        raise
    done = {"rows": rows, "bytes": size, "sha256": sha256, "built": built}
    if not _finish(row.pk, claimed_at, name, seconds=time.monotonic() - started, **done):
        private_storage().delete(name)  # taken over meanwhile: the other build's file wins
        return False
    return True


def _reason(error: BaseException) -> str:
    """What the status page says (the details go to the log, not to the page)."""
    if isinstance(error, BuildError):
        return str(error)
    if isinstance(error, SoftTimeLimitExceeded):
        return f"The build took longer than its limit of {SOFT_LIMIT_SECONDS} seconds."
    if isinstance(error, OSError):
        return "The file could not be written or saved to the storage."
    return "An unexpected error stopped the build; it has been logged."


def _fail(export_id: int, claimed_at: datetime, *, reason: str) -> None:
    BoardExport.objects.filter(pk=export_id, building_since=claimed_at).update(
        status=Status.FAILED, building_since=None, error=reason
    )


def _finish(export_id: int, claimed_at: datetime, name: str, *, seconds: float, **done) -> bool:
    """Flip the row to the new file in one transaction (unless another build took it
    over); the old file goes once that commits, and a build asked for meanwhile is sent.
    A file equal to the last one keeps the last one and its time: a board whose rows did
    not change (the version also moves with the other splits' scores, test scores before
    publication among them) shows no sign of a change."""
    with transaction.atomic():
        row = BoardExport.objects.select_for_update().get(pk=export_id)
        if row.building_since != claimed_at:
            return False
        same = bool(row.file) and (row.sha256, row.bytes) == (done["sha256"], done["bytes"])
        old, now = (name if same else row.file), timezone.now()
        again = row.requested > done["built"]
        row.built, row.building_since, row.error = done["built"], None, ""
        if not same:
            row.file, row.rows, row.bytes = name, done["rows"], done["bytes"]
            row.sha256, row.seconds, row.built_at = done["sha256"], seconds, now
        row.status = Status.QUEUED if again else Status.READY
        if again:
            row.requested_at = now
        row.save()
        if old and old != row.file:
            transaction.on_commit(partial(private_storage().delete, old), robust=True)
        if again:
            transaction.on_commit(partial(send, export_id), robust=True)
    return True


def sweep(*, now: datetime) -> list[int]:
    """Send a build for every row asked for and not started since QUEUED_TIMEOUT (a lost
    message), or building since BUILD_TIMEOUT (a worker that died)."""
    behind = BoardExport.objects.filter(
        Q(status=Status.QUEUED, requested_at__lt=now - QUEUED_TIMEOUT)
        | Q(status=Status.BUILDING, building_since__lt=now - BUILD_TIMEOUT)
    )
    ids = list(behind.values_list("pk", flat=True))
    for export_id in ids:
        BoardExport.objects.filter(pk=export_id, status=Status.QUEUED).update(requested_at=now)
        send(export_id)
    return ids
