"""A scoring run's outcome written to the database, inside the run's transaction: its
Score and SplitResult rows, its final status and report, and what follows from them (the
participant's standings, the intervals, the e-mail).

``write`` is one run's (services._finish); ``store`` is the rows alone, for a batch of
runs (batches.finish) whose standings follow once per participant.
"""

from functools import partial

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from . import evaluation, probing, signals, standings
from .archive import bounded
from .entrants import Entrant
from .models import Score, SplitResult, Status, Submission
from .storage import private_storage


def write(submission: Submission, outcome, *, stored: dict[str, str] | None = None) -> None:
    """Replace scores and split results and set the final status (inside a transaction,
    after the participant's lock); ``stored`` names the terms files of a scored outcome.
    The intervals of every split whose scores came or went are asked for again."""
    splits = store(submission, outcome, stored=stored)
    standings.entries_changed(
        dataset=submission.dataset,
        entrant=Entrant.of(submission),
        splits=splits,
        locked=True,  # lock_owners took the participant's lock (_claim, _finish)
    )
    finished([submission])


def finished(submissions: list[Submission]) -> None:
    """E-mails on commit, for those who asked (the notifications app's receiver): one
    signal for the runs written in this transaction."""
    signals.scoring_finished.send(sender=Submission, submissions=submissions)


def store(submission: Submission, outcome, *, stored: dict[str, str] | None = None) -> set[str]:
    """``write`` without its consequences: the rows and the status. Returns every split
    whose scores came or went (the previous run's and this one's)."""
    return store_many([(submission, outcome, stored or {})])[submission.pk]


def store_many(runs: list[tuple[Submission, object, dict[str, str]]]) -> dict[int, set[str]]:
    """``store`` for several runs (submission, outcome, its stored terms files) at once:
    their rows replaced in one query of each kind. Returns, by submission id, every split
    whose scores came or went."""
    ids = [submission.pk for submission, _, _ in runs]
    previous: dict[int, set[str]] = {pk: set() for pk in ids}
    for pk, split in SplitResult.objects.filter(submission__in=ids).values_list(
        "submission_id", "split"
    ):
        previous[pk].add(split)
    Score.objects.filter(submission__in=ids).delete()
    if any(previous.values()):  # none (first runs): nothing to collect and delete
        SplitResult.objects.filter(submission__in=ids).delete()
    scored = [run for run in runs if run[1].status == Status.SCORED]
    if scored:
        _create_rows(scored)
    baselines: dict = {}  # the runs' baseline terms, each read once (probing.record)
    for submission, outcome, stored in runs:
        _set_status(submission, outcome, stored, baselines=baselines)
    return {
        submission.pk: previous[submission.pk] | set(stored) | set(submission.splits)
        for submission, _, stored in runs
    }


def _create_rows(scored: list[tuple[Submission, object, dict[str, str]]]) -> None:
    """The Score and SplitResult rows of scored runs, in one INSERT of each kind."""
    Score.objects.bulk_create(
        Score(
            submission=submission,
            dataset_id=submission.dataset_id,
            split=result.split,
            loss=loss,
            value=value,
        )
        for submission, outcome, _ in scored
        for result in outcome.splits
        # The split's losses, then each on every slice ("LOSS@SLICE", scoring.md §8).
        for loss, value in [*result.scores.items(), *result.slice_scores.items()]
    )
    SplitResult.objects.bulk_create(
        SplitResult(
            submission=submission,
            split=result.split,
            filename=result.filename,
            rows=result.rows,
            non_probabilistic=result.non_probabilistic,
            certain=result.certain,
            plot_data=result.plot_data,
            terms=stored.get(str(result.split), ""),
        )
        for submission, outcome, stored in scored
        for result in outcome.splits
    )


def _set_status(
    submission: Submission, outcome, stored: dict[str, str], *, baselines: dict
) -> None:
    """The run's final status and report on the submission's row (one UPDATE);
    ``stored``: split → its terms file's name; ``baselines``: probing.record's."""
    if outcome.status == Status.SCORED and submission.is_baseline:
        submission.splits = [str(result.split) for result in outcome.splits]
    submission.status = outcome.status
    submission.errors = evaluation.bounded_report(outcome.errors)
    submission.failure = bounded(outcome.failure, 2000)
    submission.failure_detail = bounded(outcome.failure_detail, evaluation.REPORT_MAX_BYTES)
    submission.finished_at = timezone.now()
    fields = ["status", "errors", "failure", "failure_detail", "finished_at", "splits"]
    if outcome.status == Status.INVALID and settings.SUBMISSION_INVALID_ZIP_RETENTION_DAYS == 0:
        fields += _drop_invalid_zip(submission)
    if outcome.status == Status.SCORED and not submission.is_baseline:
        submission.predictions_sha256 = outcome.fingerprint
        # The probing fields go with the status, in one UPDATE (record reads only the
        # participant's other entries, the baseline and the challenge).
        fields += probing.record(
            submission=submission, outcome=outcome, save=False, stored=stored, baselines=baselines
        )
    submission.save(update_fields=fields)


def _drop_invalid_zip(submission: Submission) -> list[str]:
    """An invalid upload keeps only its report: its zip is deleted once the transaction
    commits, so invalid uploads store nothing (the caller saves the fields returned)."""
    if not submission.file:
        return []
    transaction.on_commit(partial(private_storage().delete, submission.file.name))
    submission.file = ""
    submission.file_deleted_at = submission.finished_at
    return ["file", "file_deleted_at"]
