"""The scoring task: idempotent, redelivery after a dead worker, the sweep, the broker down."""

from datetime import timedelta

import pytest
import time_machine
from django.conf import settings
from kombu.exceptions import OperationalError

from challenge_site.celery import app
from challenge_site.submissions import tasks
from challenge_site.submissions.models import Score, Status, Submission
from challenge_site.submissions.services import score_submission, sweep
from tests.factories import VALIDATION

from .helpers import predictions, queued_submission

TIMEOUT = timedelta(seconds=settings.SUBMISSION_SCORING_TIMEOUT)


def test_task_options_and_registration():
    assert tasks.score_submission.acks_late is True
    assert tasks.score_submission.reject_on_worker_lost is True
    assert tasks.score_submission.soft_time_limit == settings.SUBMISSION_SCORING_TIMEOUT
    assert tasks.score_submission.time_limit == settings.SUBMISSION_SCORING_TIMEOUT + 30
    assert {"submissions.score", "submissions.sweep"} <= set(app.tasks)
    schedule = app.conf.beat_schedule["sweep-submissions"]
    assert schedule["task"] == "submissions.sweep"
    assert schedule["schedule"] == float(settings.SUBMISSION_SWEEP_INTERVAL)


def test_scoring_twice_changes_nothing(gaze, participant):
    submission = queued_submission(participant, gaze.challenge)
    assert tasks.score_submission.delay(submission.pk).get() == Status.SCORED
    submission.refresh_from_db()
    finished, scores = submission.finished_at, list(Score.objects.values_list("id", "value"))
    assert tasks.score_submission.delay(submission.pk).get() is None
    submission.refresh_from_db()
    assert (submission.attempts, submission.finished_at) == (1, finished)
    assert list(Score.objects.values_list("id", "value")) == scores


def test_invalid_is_final_too_and_force_scores_again(gaze, participant, submit_zip, settings):
    settings.SUBMISSION_INVALID_ZIP_RETENTION_DAYS = 7  # kept: the default keeps no zip
    bad = submit_zip(participant, gaze.challenge, {"gaze_val_predict.txt": b"x\n"}, now=VALIDATION)
    assert score_submission(submission_id=bad.pk) is None
    again = score_submission(submission_id=bad.pk, force=True)
    assert again.status == Status.INVALID and again.attempts == 1


def test_running_submission_is_left_to_its_worker(gaze, participant):
    submission = queued_submission(participant, gaze.challenge)
    Submission.objects.filter(pk=submission.pk).update(
        status=Status.RUNNING, task_id="worker-a", started_at=VALIDATION, attempts=1
    )
    later = VALIDATION + TIMEOUT - timedelta(seconds=1)
    assert score_submission(submission_id=submission.pk, task_id="b", now=later) is None
    assert score_submission(submission_id=submission.pk, force=True, now=later) is None
    assert Submission.objects.get(pk=submission.pk).status == Status.RUNNING


def test_the_same_task_delivered_again_takes_over_at_once(gaze, participant):
    """acks_late + reject_on_worker_lost: a SIGKILLed worker's message comes back."""
    submission = queued_submission(participant, gaze.challenge)
    Submission.objects.filter(pk=submission.pk).update(
        status=Status.RUNNING, task_id="the-task", started_at=VALIDATION, attempts=1
    )
    result = tasks.score_submission.apply(args=(submission.pk,), task_id="the-task")
    assert result.get() == Status.SCORED
    submission.refresh_from_db()
    assert (submission.status, submission.attempts, submission.task_id) == (
        Status.SCORED,
        2,
        "the-task",
    )
    assert Score.objects.filter(submission=submission).count() == 4  # nlpd nmse crps rauc


def test_stale_run_is_taken_over(gaze, participant):
    submission = queued_submission(participant, gaze.challenge)
    Submission.objects.filter(pk=submission.pk).update(
        status=Status.RUNNING, task_id="dead", started_at=VALIDATION, attempts=1
    )
    scored = score_submission(submission_id=submission.pk, now=VALIDATION + TIMEOUT)
    assert scored.status == Status.SCORED and scored.attempts == 2


def test_a_superseded_run_does_not_write(gaze, participant, monkeypatch):
    """Run A is slow; B takes it over; A finishing late must not overwrite B's result."""
    submission = queued_submission(participant, gaze.challenge)
    from challenge_site.submissions import evaluation

    real = evaluation.evaluate

    def slow_then_overtaken(sub, **kwargs):
        outcome = real(sub, **kwargs)
        Submission.objects.filter(pk=sub.pk).update(attempts=7)  # B claimed meanwhile
        return outcome

    monkeypatch.setattr(evaluation, "evaluate", slow_then_overtaken)
    assert score_submission(submission_id=submission.pk) is None
    submission.refresh_from_db()
    assert (submission.status, submission.attempts) == (Status.RUNNING, 7)
    assert not Score.objects.filter(submission=submission).exists()


def test_repeatedly_interrupted_scoring_ends_as_failed(gaze, participant):
    submission = queued_submission(participant, gaze.challenge)
    Submission.objects.filter(pk=submission.pk).update(
        status=Status.RUNNING,
        task_id="t",
        started_at=VALIDATION,
        attempts=settings.SUBMISSION_MAX_ATTEMPTS,
    )
    assert score_submission(submission_id=submission.pk, task_id="t") is None
    submission.refresh_from_db()
    assert submission.status == Status.FAILED
    assert submission.failure == (
        f"scoring was interrupted {settings.SUBMISSION_MAX_ATTEMPTS} times (the worker "
        "stopped each time); the organisers can rescore it"
    )
    rescored = score_submission(submission_id=submission.pk, force=True)
    assert (rescored.status, rescored.attempts) == (Status.SCORED, 1)


def test_deleted_submission_is_skipped(gaze, participant, caplog):
    submission = queued_submission(participant, gaze.challenge)
    submission.delete()
    assert score_submission(submission_id=submission.pk) is None
    assert f"submission {submission.pk} no longer exists" in caplog.text


def test_sweep_queues_stuck_submissions_again(
    gaze, participant, django_capture_on_commit_callbacks, settings
):
    settings.SUBMISSION_BATCH_SIZE = 1  # the sweep's choice alone: no batch takes `fresh`
    stuck_queued = queued_submission(participant, gaze.challenge)
    stuck_running = queued_submission(participant, gaze.challenge)
    Submission.objects.filter(pk=stuck_running.pk).update(
        status=Status.RUNNING, task_id="dead", started_at=VALIDATION, attempts=1
    )
    fresh = queued_submission(participant, gaze.challenge, now=VALIDATION + TIMEOUT)
    now = VALIDATION + TIMEOUT + timedelta(seconds=1)
    with (
        time_machine.travel(now, tick=False),
        django_capture_on_commit_callbacks(execute=True),
    ):
        swept = sweep(now=now)
    assert sorted(swept) == sorted([stuck_queued.pk, stuck_running.pk])
    statuses = dict(Submission.objects.values_list("pk", "status"))
    assert statuses == {
        stuck_queued.pk: Status.SCORED,
        stuck_running.pk: Status.SCORED,
        fresh.pk: Status.QUEUED,
    }


def test_upload_is_accepted_while_the_broker_is_down(
    gaze, participant, monkeypatch, caplog, submit_zip, django_capture_on_commit_callbacks
):
    def unreachable(*args, **kwargs):
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(tasks.score_submission, "apply_async", unreachable)
    submission = submit_zip(participant, gaze.challenge, predictions("gaze"), now=VALIDATION)
    assert submission.status == Status.QUEUED
    assert f"broker unavailable: submission {submission.pk} waits for the sweep" in caplog.text

    monkeypatch.undo()
    with django_capture_on_commit_callbacks(execute=True):
        assert sweep(now=VALIDATION + TIMEOUT * 2) == [submission.pk]
    submission.refresh_from_db()
    assert submission.status == Status.SCORED


def test_run_over_the_time_limit_fails_with_a_reason(gaze, participant, monkeypatch):
    from celery.exceptions import SoftTimeLimitExceeded

    from challenge_site.submissions import evaluation

    def too_slow(submission, **kwargs):
        raise SoftTimeLimitExceeded()

    submission = queued_submission(participant, gaze.challenge)
    monkeypatch.setattr(evaluation, "evaluate", too_slow)
    failed = score_submission(submission_id=submission.pk)
    assert failed.status == Status.FAILED
    assert failed.failure == (
        f"scoring took longer than {settings.SUBMISSION_SCORING_TIMEOUT} seconds"
    )
    assert not Score.objects.filter(submission=submission).exists()


def test_database_gone_while_storing_leaves_the_run_to_its_retry(gaze, participant, monkeypatch):
    """A PostgreSQL restart while the scores are written: the run is interrupted, not
    failed; the task's retry (same task id) takes it over and stores one set of scores."""
    from django.db import OperationalError as DatabaseOperationalError

    submission = queued_submission(participant, gaze.challenge)
    real = Score.objects.bulk_create

    def server_restarting(objs, *args, **kwargs):
        real(list(objs)[:1], *args, **kwargs)
        raise DatabaseOperationalError("the database system is shutting down")

    monkeypatch.setattr(Score.objects, "bulk_create", server_restarting)
    with pytest.raises(DatabaseOperationalError):
        score_submission(submission_id=submission.pk, task_id="the-task")
    submission.refresh_from_db()
    assert (submission.status, submission.attempts, submission.failure) == (
        Status.RUNNING,
        1,
        "",
    )
    assert not Score.objects.filter(submission=submission).exists()

    monkeypatch.undo()
    again = score_submission(submission_id=submission.pk, task_id="the-task")
    assert (again.status, again.attempts) == (Status.SCORED, 2)
    assert Score.objects.filter(submission=submission).count() == 4  # nlpd nmse crps rauc


def test_database_gone_while_reading_targets_is_not_a_failure(gaze, participant, monkeypatch):
    from django.db import InterfaceError

    from challenge_site.submissions import evaluation

    def connection_closed(submission, **kwargs):
        raise InterfaceError("connection already closed")

    submission = queued_submission(participant, gaze.challenge)
    monkeypatch.setattr(evaluation, "evaluate", connection_closed)
    with pytest.raises(InterfaceError):
        score_submission(submission_id=submission.pk)
    assert Submission.objects.get(pk=submission.pk).status == Status.RUNNING


def _database_gone():
    from django.db import OperationalError as DatabaseOperationalError

    return DatabaseOperationalError("server closed the connection unexpectedly")


def _object_store_gone():
    from botocore.exceptions import ReadTimeoutError

    return ReadTimeoutError(endpoint_url="http://s3.internal:8333/site-private/x.zip")


@pytest.mark.parametrize("went_away", [_database_gone, _object_store_gone])
def test_task_retries_shortly_when_a_service_went_away(went_away, gaze, participant, monkeypatch):
    from celery.exceptions import Retry

    error = went_away()

    def gone(**kwargs):
        raise error

    retries = []

    def retry(**kwargs):
        retries.append(kwargs)
        return Retry()

    monkeypatch.setattr(tasks.services, "score_submission", gone)
    monkeypatch.setattr(tasks.score_submission, "retry", retry)
    with pytest.raises(Retry):
        tasks.score_submission(1)
    assert retries == [
        {
            "exc": error,
            "countdown": tasks.DATABASE_RETRY_DELAY,
            "max_retries": tasks.DATABASE_RETRIES,
        }
    ]


# --- Memory: a cap per run in the worker's pool processes (the cap: test_resources.py) ----


def test_worker_memory_settings():
    assert settings.CELERY_WORKER_MAX_MEMORY_PER_CHILD == 1024 * 1024  # KB: 1 GB
    assert app.conf.worker_max_memory_per_child == settings.CELERY_WORKER_MAX_MEMORY_PER_CHILD
    assert settings.SUBMISSION_MAX_MEMORY_BYTES == 1024**3


def test_worker_memory_settings_come_from_the_environment(tmp_path):
    import json
    import os
    import subprocess
    import sys

    probe = (
        "import json, django; django.setup(); from django.conf import settings; "
        "from challenge_site.celery import app; print(json.dumps(["
        "app.conf.worker_max_memory_per_child, settings.SUBMISSION_MAX_MEMORY_BYTES, "
        "settings.SUBMISSION_MAX_REJECTED_PER_DAY, "
        "settings.SUBMISSION_INVALID_ZIP_RETENTION_DAYS]))"
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "challenge_site.settings",
        "VAR_DIR": str(tmp_path),
        "CELERY_WORKER_MAX_MEMORY_PER_CHILD": "300000",
        "SUBMISSION_MAX_MEMORY_BYTES": "200000000",
        "SUBMISSION_MAX_REJECTED_PER_DAY": "7",
        "SUBMISSION_INVALID_ZIP_RETENTION_DAYS": "2",
    }
    env.pop("DATABASE_URL", None)
    out = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(out.splitlines()[-1]) == [300000, 200000000, 7, 2]


def test_a_run_over_the_memory_cap_fails_with_a_plain_reason(gaze, participant, monkeypatch):
    import numpy as np

    from challenge_site.submissions import evaluation, resources

    def greedy(submission, **kwargs):
        return np.empty(1024**3, dtype=np.uint8)  # 1 GB of address space

    submission = queued_submission(participant, gaze.challenge)
    monkeypatch.setattr(resources, "IN_POOL_PROCESS", True)
    monkeypatch.setattr(settings, "SUBMISSION_MAX_MEMORY_BYTES", 256 * 1024 * 1024)
    monkeypatch.setattr(evaluation, "evaluate", greedy)
    failed = score_submission(submission_id=submission.pk, task_id="t")
    assert (failed.status, failed.attempts) == (Status.FAILED, 1)
    assert failed.failure == "scoring needed more than 268 MB of memory"
    assert "MemoryError" in failed.failure_detail


class WorkerKilled(BaseException):
    """What the task sees of a pool process killed mid-run (by the OOM killer): nothing
    more runs, nothing is written, and the broker delivers the message again."""


def test_a_run_killed_every_time_ends_failed_after_the_attempts(gaze, participant, monkeypatch):
    from challenge_site.submissions import evaluation

    def killed(submission, **kwargs):
        raise WorkerKilled()

    submission = queued_submission(participant, gaze.challenge)
    monkeypatch.setattr(evaluation, "evaluate", killed)
    for attempt in range(1, settings.SUBMISSION_MAX_ATTEMPTS + 1):
        with pytest.raises(WorkerKilled):
            score_submission(submission_id=submission.pk, task_id="the-task")
        submission.refresh_from_db()
        assert (submission.status, submission.attempts) == (Status.RUNNING, attempt)
    assert score_submission(submission_id=submission.pk, task_id="the-task") is None
    submission.refresh_from_db()
    assert submission.status == Status.FAILED
    assert submission.failure.startswith(
        f"scoring was interrupted {settings.SUBMISSION_MAX_ATTEMPTS} times"
    )


def test_interrupted_runs_of_a_hidden_split_fail_with_the_generic_message(gaze, participant):
    from challenge_site.submissions.evaluation import GENERIC_FAILURE

    submission = queued_submission(participant, gaze.challenge)
    Submission.objects.filter(pk=submission.pk).update(
        splits=["test"],  # as if made in the test phase
        status=Status.RUNNING,
        task_id="t",
        started_at=VALIDATION,
        attempts=settings.SUBMISSION_MAX_ATTEMPTS,
    )
    assert score_submission(submission_id=submission.pk, task_id="t") is None
    submission.refresh_from_db()
    assert (submission.status, submission.failure) == (Status.FAILED, GENERIC_FAILURE)
    assert submission.failure_detail.startswith("scoring was interrupted")


# --- Sending the task, the sweep ---------------------------------------------------------


def test_services_send_the_task_by_name_without_importing_tasks():
    """services.py ↔ tasks.py: tasks imports services, never the other way round."""
    import ast
    from pathlib import Path

    source = Path(tasks.__file__).with_name("services.py").read_text()
    imported = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            imported.add(("." * node.level) + (node.module or ""))
            imported.update(f"{'.' * node.level}{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
    assert not {name for name in imported if name.endswith("tasks")}, imported


def test_the_task_sent_by_name_runs_in_process_when_eager(gaze, participant, monkeypatch):
    from challenge_site.submissions.services import enqueue

    submission = queued_submission(participant, gaze.challenge)
    enqueue(submission.pk)
    submission.refresh_from_db()
    assert submission.status == Status.SCORED


def test_the_sweep_leaves_a_just_requeued_submission_alone(
    gaze, participant, django_capture_on_commit_callbacks
):
    stuck_queued = queued_submission(participant, gaze.challenge)
    stuck_running = queued_submission(participant, gaze.challenge)
    Submission.objects.filter(pk=stuck_running.pk).update(
        status=Status.RUNNING, task_id="dead", started_at=VALIDATION, attempts=1
    )
    now = VALIDATION + TIMEOUT + timedelta(seconds=1)
    # The first sweep queues both again (the task is not run: no worker took it yet).
    with django_capture_on_commit_callbacks(execute=False):
        assert sorted(sweep(now=now)) == sorted([stuck_queued.pk, stuck_running.pk])
    assert set(Submission.objects.values_list("queued_at", flat=True)) == {now}
    # A sweep right after, or any time within the timeout, leaves them alone.
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        assert sweep(now=now + timedelta(seconds=1)) == []
        assert sweep(now=now + TIMEOUT) == []
    assert callbacks == []
    statuses = dict(Submission.objects.values_list("pk", "status"))
    assert statuses == {stuck_queued.pk: Status.QUEUED, stuck_running.pk: Status.RUNNING}


# --- Zips of invalid submissions are deleted after some days (test_retention.py) ---------


def test_the_purge_runs_from_celery_beat():
    schedule = app.conf.beat_schedule["purge-invalid-zips"]
    assert schedule["task"] == "submissions.purge_invalid_zips"
    assert schedule["schedule"] == 3600.0
    assert "submissions.purge_invalid_zips" in app.tasks


def test_object_store_gone_while_reading_is_an_interruption_not_a_failure(
    gaze, participant, monkeypatch
):
    """S3 out of reach while a worker reads the upload (it has no copy on its own disk):
    the run is left to its retry, which scores the entry once the store answers again."""
    from botocore.exceptions import EndpointConnectionError
    from django.core.files.storage import FileSystemStorage

    submission = queued_submission(participant, gaze.challenge)

    def unreachable(self, name, mode="rb"):
        raise EndpointConnectionError(endpoint_url="http://s3.internal:8333/site-private")

    monkeypatch.setattr(FileSystemStorage, "_open", unreachable)
    with pytest.raises(EndpointConnectionError):
        score_submission(submission_id=submission.pk, task_id="the-task")
    submission.refresh_from_db()
    assert (submission.status, submission.attempts, submission.failure) == (
        Status.RUNNING,
        1,
        "",
    )
    assert not Score.objects.filter(submission=submission).exists()

    monkeypatch.undo()
    again = score_submission(submission_id=submission.pk, task_id="the-task")
    assert (again.status, again.attempts) == (Status.SCORED, 2)
