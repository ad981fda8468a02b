"""Submissions: intake under the phase rules and limits, scoring runs, rescoring, the sweep.

Every function takes keyword arguments and an explicit ``now`` where the clock matters.
"""

import logging
import traceback
from datetime import datetime, timedelta
from functools import partial

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import InterfaceError as DatabaseInterfaceError
from django.db import OperationalError as DatabaseOperationalError
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone
from kombu.exceptions import OperationalError

from challenge_site.celery import app as celery_app
from challenge_site.challenges import policy
from challenge_site.challenges.clock import current_phase
from challenge_site.challenges.models import Challenge, Phase
from datasets.models import Dataset
from scoring.upload_check import (  # noqa: F401 - PHASE_SPLITS: the site's name for it
    PHASE_SPLITS,
    check_phase,
    unknown_dataset,
)

from . import batches, evaluation, formatcheck, heartbeat, outcomes, standings, terms
from .archive import ArchiveError, Contents, Limits, inspect, open_zip, verify
from .entrants import Entrant
from .limits import LimitReached, check_allowance, check_rejected_today
from .models import (
    FINAL,
    Mark,
    Score,
    Status,
    Submission,
    SubmissionQuota,
)
from .policy import valid_q
from .resources import memory_cap
from .retention import delete_stored_zip, purge_invalid_zips  # noqa: F401 - callers name them here

logger = logging.getLogger(__name__)

# PHASE_SPLITS (imported above): the splits each phase accepts, and the one it requires.
MARKS = {Phase.VALIDATION: Mark.BEFORE, Phase.TEST: Mark.NONE, Phase.POST: Mark.AFTER}
# The database went away (a restart, a failover, the network): a scoring run that meets
# one of these is interrupted, not failed; the task tries again (see tasks.py).
DATABASE_GONE = (DatabaseOperationalError, DatabaseInterfaceError)
try:  # django-storages' S3 backend: the object store out of reach, or its answer cut off
    from botocore.exceptions import ConnectionError as S3ConnectionError
    from botocore.exceptions import HTTPClientError as S3HTTPClientError

    STORAGE_GONE = (S3ConnectionError, S3HTTPClientError)
except ImportError:  # files on a local disk: no storage error passes by itself
    STORAGE_GONE = ()
# Either service gone (a restart, a failover, the network): the run is interrupted, left
# running for the task's retry or the sweep, never failed, since nothing was wrong with
# the upload (a worker on another host reads it from the object store).
INTERRUPTED = DATABASE_GONE + STORAGE_GONE


class Rejected(Exception):
    """The upload cannot be accepted; ``errors`` maps a form field (or "__all__") to reasons."""

    def __init__(self, errors: dict[str, list[str]]):
        self.errors = errors
        super().__init__("; ".join(m for messages in errors.values() for m in messages))


# --- Intake --------------------------------------------------------------------------


def read_upload(upload, *, dataset_name: str | None, limits: Limits, dataset_names=()) -> Contents:
    """Cheap structural checks of an uploaded zip; Rejected lists the problems.
    ``dataset_names``: the challenge's datasets, which a misnamed file may have meant."""
    try:
        with open_zip(upload, size=upload.size, limits=limits) as archive:
            contents = inspect(
                archive, dataset_name=dataset_name, limits=limits, dataset_names=dataset_names
            )
            verify(archive, contents)
    except ArchiveError as error:
        raise Rejected({"file": error.problems}) from None
    return contents


def check_splits(contents: Contents, *, challenge: Challenge, phase: Phase) -> None:
    """Rejected unless the phase accepts the zip's splits (scoring.upload_check.check_phase,
    which a participant's machine runs too)."""
    if problems := check_phase(contents, phase, challenge.test_start):
        raise Rejected({"file": problems})


def submit(
    *,
    user,
    challenge: Challenge,
    dataset_name: str | None,
    method: str,
    description: str,
    authors: str,
    upload,
    now: datetime,
) -> Submission:
    """Check and store an upload, counted against the limits; scoring is queued on commit.

    Raises Rejected (the request is wrong) or LimitReached.
    """
    phase = current_phase(challenge, now=now)
    if phase == Phase.UPCOMING:
        raise Rejected(
            {
                "__all__": [
                    f"submissions open with the challenge, {challenge.start:%d %b %Y %H:%M} UTC"
                ]
            }
        )
    check_rejected_today(user=user, now=now)
    datasets = {dataset.name: dataset for dataset in challenge.datasets.all()}
    if dataset_name and dataset_name not in datasets:
        raise Rejected(
            {"dataset": [f"no dataset {dataset_name!r}; choose one of {', '.join(datasets)}"]}
        )
    limits = Limits.from_settings()
    contents = read_upload(
        upload, dataset_name=dataset_name or None, limits=limits, dataset_names=list(datasets)
    )
    dataset = datasets.get(contents.dataset_name)
    if dataset is None:
        raise Rejected({"file": unknown_dataset(contents, list(datasets))})
    check_splits(contents, challenge=challenge, phase=phase)

    submission = Submission(
        user=user,
        dataset=dataset,
        method=method,
        description=description,
        authors=authors,
        created=now,
        queued_at=now,
        phase=phase,
        mark=MARKS[phase],
        original_filename=(upload.name or "")[-255:],
        file_size=upload.size,
        splits=[str(split) for split in contents.splits],
    )
    submission.file.save("submission.zip", upload, save=False)
    SubmissionQuota.objects.get_or_create(user=user, dataset=dataset)
    try:
        with transaction.atomic():
            # Serialises this user's uploads to this dataset until the insert commits; it
            # also holds off their joining a team (teams.services locks it first).
            SubmissionQuota.objects.select_for_update().get(user=user, dataset=dataset)
            entrant = Entrant.in_challenge(user=user, challenge_id=challenge.pk)
            if entrant.is_team:
                entrant.lock(dataset_id=dataset.pk)  # and every member's uploads
                submission.team_id = entrant.team_id
            check_allowance(entrant=entrant, dataset=dataset, phase=phase, now=now)
            submission.save()
            transaction.on_commit(partial(enqueue, submission.pk))
    except LimitReached:
        submission.file.delete(save=False)
        # Over the limit, a file that breaks the format still gets its line errors (the
        # check costs the limit nothing and reads no target); only a valid one the 429.
        if not formatcheck.allowed(user=user, now=now):
            raise
        problems = formatcheck.format_problems(
            upload=upload, dataset=dataset, dataset_names=datasets, limits=limits
        )
        if problems:
            raise Rejected({"file": problems}) from None
        raise
    except BaseException:
        submission.file.delete(save=False)
        raise
    return submission


# --- Scoring runs ----------------------------------------------------------------------


def enqueue(submission_id: int, *, force: bool = False) -> None:
    """Send the scoring task (by name: tasks.py imports this module, not the other way
    round); if the broker is down, the sweep sends it later. The task is registered
    (apps.py imports tasks.py), so without a broker it runs here and now, eagerly."""
    try:
        celery_app.signature("submissions.score", args=(submission_id, force)).delay()
    except OperationalError:
        logger.warning("broker unavailable: submission %s waits for the sweep", submission_id)


def score_submission(
    *, submission_id: int, force: bool = False, task_id: str = "", now: datetime | None = None
) -> Submission | None:
    """Score one submission: queued → running → scored | invalid | failed.

    Idempotent: a final submission is only scored again with ``force``; a running one
    is left alone unless its run is stale (heartbeat.is_stale: its heartbeat stopped, or
    without one older than the timeout) or this is the same task delivered again (its
    worker died). While it runs, a thread keeps its heartbeat. Small uploads of the same
    dataset queued behind it are scored with it, in one batch (batches.py). Returns the
    submission if this call scored it.
    Raises one of INTERRUPTED if the database or the object store went away: the
    submission is left running, to be taken over by the task's retry or, failing that,
    by the sweep.
    """
    now = now or timezone.now()
    found = _found(submission_id)
    if not force and _settled(found, task_id=task_id, now=now):
        return None
    with transaction.atomic():
        claimed = _claim_run(
            submission_id=submission_id,
            force=force,
            task_id=task_id,
            now=now,
            owners=None if found is None else standings.owners_from(found),
        )
        if claimed is None:
            return None
        attempt, submission = claimed
        more = [] if force else batches.claim_more(first=submission, task_id=task_id, now=now)
    if not more:
        with heartbeat.beating(submission_id=submission_id, attempt=attempt):
            return _run(submission_id=submission_id, attempt=attempt, submission=submission)
    runs = [batches.Run(submission=submission, attempt=attempt), *more]
    with heartbeat.beating_runs([(run.pk, run.attempt) for run in runs]):
        return _run_batch(runs)


def _found(submission_id: int) -> Submission | None:
    """The submission as one plain read finds it: what ``_settled`` and the claim's lock
    of its participant (standings.lock_owners) read of it."""
    return (
        Submission.objects.filter(pk=submission_id)
        .only(
            "status",
            "task_id",
            "heartbeat_at",
            "started_at",
            "dataset_id",
            "team_id",
            "user_id",
            "is_baseline",
        )
        .first()
    )


def _settled(found: Submission | None, *, task_id: str, now: datetime) -> bool:
    """Whether, by one plain read (``_found``), the submission is not to be claimed:
    scored already or running a live run of another task (a batch took it). The claim's
    locked read decides everything else; a run that goes stale just after this read is
    taken over by the sweep's next message."""
    if found is None:
        return False  # the claim logs it
    if found.status in FINAL:
        return True
    return (
        found.status == Status.RUNNING
        and not (task_id and task_id == found.task_id)
        and not heartbeat.is_stale(found, now=now)
    )


def _run(
    *, submission_id: int, attempt: int, submission: Submission | None = None
) -> Submission | None:
    """Evaluate the claimed run ``attempt`` and store its outcome (see score_submission).
    ``submission``: the row as the claim left it, with its dataset and challenge."""
    if submission is None:
        submission = Submission.objects.select_related("dataset__challenge").get(pk=submission_id)
    run = batches.Run(submission=submission, attempt=attempt)
    _evaluate(run)
    return _finish_safely(run)


def _evaluate(run: batches.Run) -> None:
    """The run's outcome (a failed one if the evaluation raised), in ``run.outcome``."""
    cap = None
    try:
        with memory_cap(settings.SUBMISSION_MAX_MEMORY_BYTES) as cap:
            run.outcome = evaluation.evaluate(
                run.submission, progress=run.progress, fetched=run.fetched
            )
    except INTERRUPTED:
        logger.warning("submission %s: interrupted, left to its retry", run.pk)
        raise
    except Exception as error:
        run.outcome = _failed_run(run.pk, error, progress=run.progress, cap=cap)
    finally:
        run.fetched = None  # the evaluation took the zip read ahead, and closed it


def _finish_safely(run: batches.Run) -> Submission | None:
    """``_finish`` the run; if storing its outcome raised, store a failure instead."""
    submission_id, attempt = run.pk, run.attempt
    try:
        return _finish(
            submission_id=submission_id, attempt=attempt, outcome=run.outcome, run=run.submission
        )
    except DATABASE_GONE:
        logger.warning(
            "submission %s: the database went away while storing the scores", submission_id
        )
        raise
    except Exception as error:
        logger.exception("storing the scores of submission %s failed", submission_id)
        failed = evaluation.Outcome.failed(
            evaluation.GENERIC_FAILURE
            if run.progress.hidden_targets_read
            else f"storing the scores failed: {type(error).__name__}",
            _cause(error),
        )
        return _finish(submission_id=submission_id, attempt=attempt, outcome=failed)


def _run_batch(runs: list[batches.Run]) -> Submission | None:
    """Evaluate every run of a batch, then store their outcomes together; if that
    raised, each run's is stored alone (so one entry that cannot be stored fails alone).
    Returns the first run's submission if this call scored it."""
    batches.fetch_ahead(runs)
    try:
        for run in runs:
            _evaluate(run)
            batches.save_terms(run)
    except BaseException:
        batches.forget(runs)
        raise
    try:
        written = batches.finish(runs)
    except DATABASE_GONE:
        logger.warning("batch of %s: the database went away while storing the scores", runs[0].pk)
        raise
    except Exception:
        logger.exception("storing the scores of the batch of %s failed", runs[0].pk)
        written = [_finish_safely(run) for run in runs]
    return next((s for s in written if s is not None and s.pk == runs[0].pk), None)


def _failed_run(submission_id: int, error: Exception, *, progress, cap: int | None):
    """The Outcome of a run that raised: its reason for the participant, unless the run
    had read a hidden split's targets (then GENERIC_FAILURE); the cause for staff."""
    if isinstance(error, SoftTimeLimitExceeded):
        logger.error("scoring submission %s took too long", submission_id)
        reason = f"scoring took longer than {settings.SUBMISSION_SCORING_TIMEOUT} seconds"
    elif isinstance(error, MemoryError):
        logger.error("scoring submission %s ran out of memory", submission_id)
        reason = (
            f"scoring needed more than {cap / 1_000_000:.0f} MB of memory"
            if cap
            else "scoring ran out of memory"
        )
    else:
        logger.exception("scoring submission %s failed", submission_id)
        reason = f"{type(error).__name__}: {error}"
    if progress.hidden_targets_read:
        return evaluation.Outcome.failed(evaluation.GENERIC_FAILURE, f"{reason}\n\n{_cause(error)}")
    return evaluation.Outcome.failed(reason, _cause(error))


def _cause(error: BaseException) -> str:
    """The exception and its traceback, for staff."""
    return "".join(traceback.format_exception(error))


def _claim(*, submission_id: int, force: bool, task_id: str, now: datetime | None) -> int | None:
    """Mark the submission running and return the attempt number, or None to skip it."""
    with transaction.atomic():
        claimed = _claim_run(submission_id=submission_id, force=force, task_id=task_id, now=now)
    return None if claimed is None else claimed[0]


def _claim_run(
    *,
    submission_id: int,
    force: bool,
    task_id: str,
    now: datetime | None,
    owners: set | None = None,
) -> tuple[int, Submission] | None:
    """``_claim``'s attempt number with the submission as claimed (its dataset and
    challenge read with it, which the run needs), or None to skip it; inside the
    caller's transaction. ``owners``: its participant as read just before
    (standings.owners_from), locked first."""
    now = now or timezone.now()
    # Before the submission: see standings.
    standings.lock_owners([submission_id], read=owners)
    # Only its own row locked (as in _finish): never the dataset's or challenge's.
    submission = (
        Submission.objects.select_for_update(of=("self",), no_key=True)
        .select_related("dataset__challenge")
        .filter(pk=submission_id)
        .first()
    )
    if submission is None:
        logger.warning("submission %s no longer exists", submission_id)
        return None
    if submission.status in FINAL:
        if not force:
            return None
        submission.attempts = 0
    elif submission.status == Status.RUNNING:
        stale = heartbeat.is_stale(submission, now=now)
        redelivered = bool(task_id) and task_id == submission.task_id
        if not (stale or redelivered):
            return None
    if not submission.is_baseline and not submission.file:
        logger.info("submission %s: its zip was deleted; not scored again", submission_id)
        return None
    if submission.attempts >= settings.SUBMISSION_MAX_ATTEMPTS:
        # A pool process killed each time (out of memory, …) never got to say why.
        reason = (
            f"scoring was interrupted {submission.attempts} times (the worker stopped "
            "each time); the organisers can rescore it"
        )
        challenge = submission.dataset.challenge
        hidden = not all(policy.scores_public(challenge, s) for s in submission.splits)
        outcomes.write(
            submission,
            evaluation.Outcome.failed(evaluation.GENERIC_FAILURE if hidden else reason, reason),
        )
        return None
    # A listed entry scored again leaves the boards until its new scores are in.
    was_listed = submission.status == Status.SCORED
    submission.status = Status.RUNNING
    submission.attempts += 1
    submission.started_at = now
    submission.heartbeat_at = now  # the first beat; the run's thread keeps it fresh
    submission.finished_at = None
    submission.task_id = task_id
    submission.save(
        update_fields=[
            "status",
            "attempts",
            "started_at",
            "heartbeat_at",
            "finished_at",
            "task_id",
        ]
    )
    if was_listed:
        standings.listing_changed(dataset=submission.dataset, entrant=Entrant.of(submission))
    return submission.attempts, submission


def _finish(
    *, submission_id: int, attempt: int, outcome, run: Submission | None = None
) -> Submission | None:
    """Store the outcome: the terms files first (fresh names), then the rows in one
    transaction, asking for the intervals of every split whose entries changed.
    ``run``: the submission as the run read it, which names the terms files."""
    stored = terms.save_outcome(submission_id=submission_id, outcome=outcome, submission=run)
    try:
        with transaction.atomic():
            standings.lock_owners([submission_id])  # before the submission: see standings
            # With its dataset and challenge (what outcomes.write reads), only its own row locked:
            # never the dataset's, behind which every run finishing on it would wait.
            submission = (
                Submission.objects.select_for_update(of=("self",), no_key=True)
                .select_related("dataset__challenge")
                .get(pk=submission_id)
            )
            if submission.status != Status.RUNNING or submission.attempts != attempt:
                logger.info("submission %s: run %s was superseded", submission_id, attempt)
                transaction.on_commit(partial(terms.delete, stored.values()))
                return None
            # The replaced SplitResult rows' terms files go on commit (apps.py).
            outcomes.write(submission, outcome, stored=stored)
    except BaseException:
        terms.delete(stored.values())
        raise
    return submission


# --- Rescoring, the sweep, baselines -------------------------------------------------


def rescore(*, submissions: QuerySet[Submission]) -> int:
    """Queue every given submission to be scored again (on commit); returns how many.
    Invalid submissions whose zip was deleted are left as they are."""
    ids = list(submissions.exclude(is_baseline=False, file="").values_list("pk", flat=True))
    for submission_id in ids:
        transaction.on_commit(partial(enqueue, submission_id, force=True))
    return len(ids)


def lacking_losses(dataset: Dataset) -> QuerySet[Submission]:
    """The dataset's scored entries (its baseline included) with a scored split missing a
    loss the dataset shows (Dataset.shown_losses): scored before that loss was registered
    (a plug-in installed since, spec §9) or listed (a loss that applies only under some
    options, as wis with quantile levels)."""
    shown = {loss.name for loss in dataset.shown_losses()}
    rows = (
        Score.objects.filter(valid_q("submission__"), dataset=dataset)
        .exclude(loss__contains="@")  # a slice's scores (LOSS@SLICE) follow their loss
        .values_list("submission_id", "split", "loss")
    )
    found: dict[tuple[int, str], set[str]] = {}
    for submission_id, split, loss in rows:
        found.setdefault((submission_id, split), set()).add(loss)
    ids = {submission_id for (submission_id, _), names in found.items() if not shown <= names}
    return Submission.objects.filter(pk__in=ids)


def rescore_lacking(*, dataset: Dataset) -> int:
    """Queue the entries of :func:`lacking_losses` to be scored again (on commit): a loss
    added to the dataset's list, or installed, fills their columns."""
    return rescore(submissions=lacking_losses(dataset))


def sweep(*, now: datetime) -> list[int]:
    """Queue again the submissions left queued longer than the timeout, and the running
    ones whose run is stale (heartbeat.is_stale); one sent again is left alone for as long
    (``queued_at``), so a sweep every few seconds does not send it again each time."""
    cutoff = now - timedelta(seconds=settings.SUBMISSION_SCORING_TIMEOUT)
    dead = now - timedelta(seconds=settings.SUBMISSION_HEARTBEAT_STALE)
    stuck = Submission.objects.filter(
        Q(status=Status.QUEUED, queued_at__lt=cutoff)
        | Q(status=Status.RUNNING, heartbeat_at__lt=dead, queued_at__lt=dead)
        | Q(
            status=Status.RUNNING,
            heartbeat_at__isnull=True,
            started_at__lt=cutoff,
            queued_at__lt=cutoff,
        )
    )
    with transaction.atomic():
        ids = list(stuck.select_for_update().values_list("pk", flat=True))
        Submission.objects.filter(pk__in=ids).update(queued_at=now)
        for submission_id in ids:
            transaction.on_commit(partial(enqueue, submission_id))
    if ids:
        logger.warning("sweep: queued submissions %s again", ids)
    return ids


def refresh_baseline(*, dataset: Dataset, now: datetime) -> Submission:
    """The dataset's baseline entry, created if needed and queued to be scored."""
    baseline, _ = Submission.objects.get_or_create(
        dataset=dataset,
        is_baseline=True,
        defaults={
            "method": "Baseline",
            "description": (
                "Ignores the inputs: the training frequency of class +1 (classification), "
                "the training targets' class frequencies (multiclass) or a Gaussian with "
                "the training targets' mean and variance (regression)."
            ),
            "created": now,
            "queued_at": now,
            "phase": current_phase(dataset.challenge, now=now),
            "mark": Mark.NONE,
        },
    )
    transaction.on_commit(partial(enqueue, baseline.pk, force=True))
    return baseline


def dataset_files_changed(*, dataset: Dataset, now: datetime) -> None:
    """Targets may have changed: score the baseline and every finished submission again."""
    refresh_baseline(dataset=dataset, now=now)
    rescore(submissions=dataset.submissions.filter(is_baseline=False, status__in=FINAL))
