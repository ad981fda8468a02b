"""Scoring runs in batches: a worker that finds more small uploads of the same dataset
queued behind the one it was sent takes them too, and writes their outcomes in one
transaction.

What a run costs beside its evaluation (claiming it, locking its participant, the
board's Ladder, the intervals' request, the dataset's generation, the hooks after
commit) is then paid once per batch, or once per participant, instead of once per
upload: under a backlog one worker process scores several times as many small uploads a
second (bench/worker.py). A lone upload is scored alone, as before.

The protocol of a single run is kept for each run of a batch (services.score_submission):

- the extra runs are claimed in the first run's transaction, with SKIP LOCKED, so a
  claim never waits for a row another worker holds, and two workers never take the same
  run; each gets its own attempt, its heartbeat (one thread beats them all) and this
  task's id, so the task delivered again after its worker died takes every run of its
  batch over at once, and the sweep takes over a run whose batch went silent;
- each run's messages on the queue stay there: the worker that gets one finds its run
  running (or scored) and leaves it, after one read (services._settled);
- the outcomes are written in one transaction (``finish``) after every participant's
  lock, in one order, then every submission row, as a single run takes them; a run
  taken over meanwhile (its attempt moved on) is left out, its terms files deleted.
"""

import logging
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q

from . import evaluation, outcomes, standings, terms
from .entrants import Entrant
from .models import Status, Submission

logger = logging.getLogger(__name__)

# One thread per worker process saves terms files, another reads the batch's zips ahead
# of their evaluation (each its own S3 client: django-storages keeps one per thread);
# both wait for the object store while this thread evaluates.
_SAVING = ThreadPoolExecutor(max_workers=1, thread_name_prefix="terms-saving")
_FETCHING = ThreadPoolExecutor(max_workers=1, thread_name_prefix="zip-fetching")


@dataclass
class Run:
    """One claimed run of a batch: the submission as claimed, its attempt, and what
    its evaluation gave (``outcome``) and read (``progress``)."""

    submission: Submission
    attempt: int
    outcome: evaluation.Outcome | None = None
    progress: evaluation.Progress = field(default_factory=evaluation.Progress)
    terms: Future | None = None  # saving the outcome's terms files: their names
    fetched: Future | None = None  # reading the upload's zip (evaluation.fetch)

    @property
    def pk(self) -> int:
        return self.submission.pk


def fetch_ahead(runs: list[Run]) -> None:
    """Start reading every run's zip but the first's, in order (the batch's zips add up
    to at most SUBMISSION_BATCH_BYTES)."""
    for run in runs[1:]:
        run.fetched = evaluation.fetch(run.submission, on=_FETCHING)


def claim_more(*, first: Submission, task_id: str, now: datetime) -> list[Run]:
    """Inside the transaction that claimed ``first`` (a participant's upload): claim up to
    SUBMISSION_BATCH_SIZE − 1 more queued uploads of its dataset, oldest first, while
    their zips and ``first``'s add up to at most SUBMISSION_BATCH_BYTES; also the runs
    this task had claimed before its worker died (running under ``task_id``)."""
    more = settings.SUBMISSION_BATCH_SIZE - 1
    budget = settings.SUBMISSION_BATCH_BYTES - (first.file_size or 0)
    if more <= 0 or budget <= 0 or first.is_baseline:
        return []
    takeable = Q(status=Status.QUEUED)
    if task_id:
        takeable |= Q(status=Status.RUNNING, task_id=task_id)
    # submission_pending_idx holds only the queued and running rows: a few, whatever the
    # board's size. SKIP LOCKED: rows another worker is claiming are left to it; taken
    # last in this transaction and never waited for, they add no edge to a lock cycle.
    found = list(
        Submission.objects.select_for_update(of=("self",), no_key=True, skip_locked=True)
        .filter(
            takeable,
            dataset_id=first.dataset_id,
            is_baseline=False,
            attempts__lt=settings.SUBMISSION_MAX_ATTEMPTS,
            file_size__lte=budget,
        )
        .exclude(pk=first.pk)
        .exclude(file="")
        .order_by("queued_at", "pk")[:more]
    )
    taken = []
    for submission in found:
        if submission.file_size > budget:
            continue
        budget -= submission.file_size
        submission.dataset = first.dataset  # the same row: read once, with its challenge
        submission.status = Status.RUNNING
        submission.attempts += 1
        submission.started_at = submission.heartbeat_at = now
        submission.finished_at = None
        submission.task_id = task_id
        taken.append(Run(submission=submission, attempt=submission.attempts))
    if taken:  # one plain UPDATE: every field alike but attempts, one more on each locked row
        Submission.objects.filter(pk__in=[run.pk for run in taken]).update(
            status=Status.RUNNING,
            attempts=F("attempts") + 1,
            started_at=now,
            heartbeat_at=now,
            finished_at=None,
            task_id=task_id,
        )
    return taken


def save_terms(run: Run) -> None:
    """Start saving the evaluated run's terms files (fresh names) on the saving thread,
    which waits for the object store while this one evaluates the next run."""
    run.terms = _SAVING.submit(
        terms.save_outcome, submission_id=run.pk, outcome=run.outcome, submission=run.submission
    )


def finish(runs: list[Run]) -> list[Submission]:
    """Store the batch's outcomes: every scored run's terms files first (``save_terms``,
    or here), then every run's rows in one transaction, with the standings of each
    participant once. Returns the submissions written (a run taken over meanwhile is
    not). Nothing is written if it raises (the terms files are deleted)."""
    try:
        for run in runs:
            if run.terms is None:
                save_terms(run)
        stored = {run.pk: run.terms.result() for run in runs}
        with transaction.atomic():
            return _write(runs, stored)
    except BaseException:
        forget(runs)
        raise


def forget(runs: list[Run]) -> None:
    """Delete the terms files saved for the runs (their rows were not written): once
    every save under way has ended, so none is left behind."""
    for run in runs:
        if run.fetched is not None:
            _close(run.fetched)
            run.fetched = None
        if run.terms is None:
            continue
        try:
            names = run.terms.result()
        except Exception:
            continue  # save_outcome deleted what it had saved
        terms.delete(names.values())
        run.terms = None


def _close(fetched: Future) -> None:
    """Close a zip read ahead that no evaluation took (its temporary file goes)."""
    try:
        spooled, _ = fetched.result()
    except Exception:
        return
    spooled.close()


def _write(runs: list[Run], stored: dict[int, dict[str, str]]) -> list[Submission]:
    ids = [run.pk for run in runs]
    standings.lock_owners(ids)  # before the submissions: see standings
    rows = {
        submission.pk: submission
        for submission in Submission.objects.select_for_update(of=("self",), no_key=True)
        .select_related("dataset__challenge")
        .filter(pk__in=ids)
        .order_by("pk")
    }
    taken = []
    for run in runs:
        submission = rows.get(run.pk)
        if submission is None or (submission.status, submission.attempts) != (
            Status.RUNNING,
            run.attempt,
        ):
            logger.info("submission %s: run %s was superseded", run.pk, run.attempt)
            transaction.on_commit(partial(terms.delete, stored[run.pk].values()))
            continue
        taken.append((submission, run.outcome, stored[run.pk]))
    if not taken:
        return []
    changed = outcomes.store_many(taken)
    written = [submission for submission, _, _ in taken]
    changes: dict[Entrant, set[str]] = {}
    for submission in written:
        changes.setdefault(Entrant.of(submission), set()).update(changed[submission.pk])
    standings.entrants_changed(dataset=written[0].dataset, changes=changes)
    outcomes.finished(written)
    return written
