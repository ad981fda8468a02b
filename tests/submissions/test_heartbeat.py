"""The heartbeat of a scoring run, and the take-over of a run whose heartbeat stopped."""

import os
import subprocess
import sys
import threading
import time
from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from challenge_site.submissions import evaluation, heartbeat, services
from challenge_site.submissions.models import Score, SplitResult, Status, Submission
from tests.factories import VALIDATION

from .helpers import queued_submission

STALE = timedelta(seconds=settings.SUBMISSION_HEARTBEAT_STALE)
TIMEOUT = timedelta(seconds=settings.SUBMISSION_SCORING_TIMEOUT)


def running(submission, *, attempts=1, heartbeat_at=VALIDATION, task_id="dead"):
    Submission.objects.filter(pk=submission.pk).update(
        status=Status.RUNNING,
        attempts=attempts,
        task_id=task_id,
        started_at=VALIDATION,
        heartbeat_at=heartbeat_at,
    )
    submission.refresh_from_db()
    return submission


def heartbeat_threads(submission_id):
    return [t for t in threading.enumerate() if t.name.startswith(f"heartbeat-{submission_id}-")]


def test_settings_defaults():
    assert settings.SUBMISSION_HEARTBEAT_INTERVAL == 10
    assert settings.SUBMISSION_HEARTBEAT_STALE == 30
    assert settings.SUBMISSION_SWEEP_INTERVAL == 15


def test_a_beat_refreshes_only_the_running_attempt_it_names(gaze, participant):
    submission = running(queued_submission(participant, gaze.challenge), attempts=2)
    later = VALIDATION + timedelta(seconds=5)
    assert heartbeat.beat(submission_id=submission.pk, attempt=1, now=later) is False
    assert Submission.objects.get(pk=submission.pk).heartbeat_at == VALIDATION
    assert heartbeat.beat(submission_id=submission.pk, attempt=2, now=later) is True
    assert Submission.objects.get(pk=submission.pk).heartbeat_at == later
    Submission.objects.filter(pk=submission.pk).update(status=Status.SCORED)
    assert heartbeat.beat(submission_id=submission.pk, attempt=2) is False
    assert Submission.objects.get(pk=submission.pk).heartbeat_at == later


@pytest.mark.django_db(transaction=True)
def test_the_thread_beats_until_another_worker_takes_the_run_over(gaze, participant, monkeypatch):
    submission = running(queued_submission(participant, gaze.challenge))
    real_beat = heartbeat.beat
    results = []
    stopped = threading.Event()

    def beat_then_taken_over(**kwargs):
        result = real_beat(**kwargs)
        results.append(result)
        if len(results) == 2:  # another worker claims the run: attempt 2
            Submission.objects.filter(pk=submission.pk).update(attempts=2)
        if not result:
            stopped.set()
        return result

    monkeypatch.setattr(heartbeat, "beat", beat_then_taken_over)
    with heartbeat.beating(submission_id=submission.pk, attempt=1, interval=0.01):
        assert stopped.wait(timeout=10)
        deadline = time.monotonic() + 5
        while heartbeat_threads(submission.pk) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert heartbeat_threads(submission.pk) == []  # ended by itself, inside the block
    assert results == [True, True, False]
    submission.refresh_from_db()
    assert abs(submission.heartbeat_at - timezone.now()) < timedelta(seconds=30)  # a beat's
    assert submission.attempts == 2


def test_the_block_ending_stops_the_thread_at_once_without_a_beat(gaze, participant):
    submission = running(queued_submission(participant, gaze.challenge))
    started = time.monotonic()
    with heartbeat.beating(submission_id=submission.pk, attempt=1, interval=60):
        assert len(heartbeat_threads(submission.pk)) == 1
    assert time.monotonic() - started < 2
    assert heartbeat_threads(submission.pk) == []
    assert Submission.objects.get(pk=submission.pk).heartbeat_at == VALIDATION


def test_a_scoring_run_beats_while_it_evaluates(gaze, participant, monkeypatch):
    submission = queued_submission(participant, gaze.challenge)
    real = evaluation.evaluate
    alive = []

    def evaluate(sub, **kwargs):
        alive.append([t.name for t in heartbeat_threads(sub.pk)])
        return real(sub, **kwargs)

    monkeypatch.setattr(evaluation, "evaluate", evaluate)
    now = VALIDATION + timedelta(minutes=1)
    scored = services.score_submission(submission_id=submission.pk, now=now)
    assert scored.status == Status.SCORED
    assert alive == [[f"heartbeat-{submission.pk}-1"]]
    assert heartbeat_threads(submission.pk) == []
    scored.refresh_from_db()
    assert scored.heartbeat_at == now  # set by the claim: the first beat


def test_is_stale_reads_the_heartbeat_else_the_start(gaze, participant):
    submission = running(queued_submission(participant, gaze.challenge))
    assert not heartbeat.is_stale(submission, now=VALIDATION + STALE - timedelta(seconds=1))
    assert heartbeat.is_stale(submission, now=VALIDATION + STALE)
    submission.heartbeat_at = None  # a run claimed before heartbeats: the timeout
    assert not heartbeat.is_stale(submission, now=VALIDATION + STALE)
    assert heartbeat.is_stale(submission, now=VALIDATION + TIMEOUT)


def test_a_run_with_a_fresh_heartbeat_is_left_alone_past_the_timeout(gaze, participant):
    later = VALIDATION + TIMEOUT * 2
    submission = running(queued_submission(participant, gaze.challenge), heartbeat_at=later)
    assert services.score_submission(submission_id=submission.pk, task_id="b", now=later) is None
    assert services.sweep(now=later + STALE - timedelta(seconds=1)) == []
    submission.refresh_from_db()
    assert (submission.status, submission.attempts, submission.task_id) == (
        Status.RUNNING,
        1,
        "dead",
    )


def test_a_stale_heartbeat_is_taken_over_long_before_the_timeout(
    gaze, participant, django_capture_on_commit_callbacks
):
    submission = running(queued_submission(participant, gaze.challenge))
    now = VALIDATION + STALE + timedelta(seconds=1)
    assert now < VALIDATION + TIMEOUT
    with django_capture_on_commit_callbacks(execute=False) as sent:
        assert services.sweep(now=now) == [submission.pk]
        assert services.sweep(now=now + timedelta(seconds=1)) == []  # sent: left alone
    assert len(sent) == 1
    scored = services.score_submission(submission_id=submission.pk, task_id="b", now=now)
    assert (scored.status, scored.attempts, scored.task_id) == (Status.SCORED, 2, "b")


def test_takeover_then_the_old_run_finishing_late_leaves_one_set_of_scores(
    gaze, participant, django_capture_on_commit_callbacks
):
    """Run A's worker stalls (no beat); B takes over and scores; A wakes up and finishes:
    its _finish finds attempt 2 and writes nothing; one set of scores, B's."""
    submission = queued_submission(participant, gaze.challenge)
    attempt_a = services._claim(
        submission_id=submission.pk, force=False, task_id="a", now=VALIDATION
    )
    assert attempt_a == 1
    outcome_a = evaluation.evaluate(
        Submission.objects.select_related("dataset__challenge").get(pk=submission.pk),
        progress=evaluation.Progress(),
    )
    later = VALIDATION + STALE + timedelta(seconds=1)
    with django_capture_on_commit_callbacks(execute=True):
        scored_b = services.score_submission(submission_id=submission.pk, task_id="b", now=later)
    assert (scored_b.status, scored_b.attempts) == (Status.SCORED, 2)
    scores_b = sorted(Score.objects.filter(submission=submission).values_list("id", "value"))
    assert len(scores_b) == 4  # nlpd nmse crps rauc, once
    assert heartbeat.beat(submission_id=submission.pk, attempt=attempt_a) is False
    with django_capture_on_commit_callbacks(execute=True):
        late = services._finish(submission_id=submission.pk, attempt=attempt_a, outcome=outcome_a)
    assert late is None
    assert sorted(Score.objects.filter(submission=submission).values_list("id", "value")) == (
        scores_b
    )
    assert SplitResult.objects.filter(submission=submission).count() == 1
    submission.refresh_from_db()
    assert (submission.status, submission.attempts, submission.task_id) == (
        Status.SCORED,
        2,
        "b",
    )


def test_a_stale_limit_under_two_beats_stops_start_up(tmp_path):
    """One late beat must never hand a live run to another worker."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("SUBMISSION_", "DJANGO_", "DATABASE_", "CELERY_"))
    }
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "challenge_site.settings",
            "VAR_DIR": str(tmp_path),
            "SUBMISSION_HEARTBEAT_INTERVAL": "10",
            "SUBMISSION_HEARTBEAT_STALE": "15",
        }
    )
    probe = "import django; django.setup()"
    result = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode != 0
    assert (
        "SUBMISSION_HEARTBEAT_STALE must be at least twice SUBMISSION_HEARTBEAT_INTERVAL"
        in result.stderr
    )
    env["SUBMISSION_HEARTBEAT_STALE"] = "20"
    ok = subprocess.run(
        [
            sys.executable,
            "-c",
            probe + "; from django.conf import settings as s; "
            "print(s.SUBMISSION_HEARTBEAT_INTERVAL, s.SUBMISSION_HEARTBEAT_STALE)",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ok.stdout.split() == ["10", "20"], ok.stderr


@pytest.mark.django_db(transaction=True)
def test_one_thread_beats_every_run_of_a_batch_until_each_is_gone(gaze, participant, monkeypatch):
    first = running(queued_submission(participant, gaze.challenge))
    second = running(queued_submission(participant, gaze.challenge))
    real_beat = heartbeat.beat
    beats: list[tuple[int, bool]] = []
    done = threading.Event()

    def counted(**kwargs):
        result = real_beat(**kwargs)
        beats.append((kwargs["submission_id"], result))
        if len(beats) == 2:  # after one beat of each, another worker takes `first` over
            Submission.objects.filter(pk=first.pk).update(attempts=2)
        if len(beats) >= 6:
            done.set()
        return result

    monkeypatch.setattr(heartbeat, "beat", counted)
    with heartbeat.beating_runs([(first.pk, 1), (second.pk, 1)], interval=0.01):
        assert done.wait(timeout=10)
        assert len(heartbeat_threads(first.pk)) == 1  # one thread for the batch
    assert beats[:3] == [(first.pk, True), (second.pk, True), (first.pk, False)]
    # `first` is beaten no more; `second` still is, every time.
    assert set(beats[3:]) == {(second.pk, True)}
    assert Submission.objects.get(pk=second.pk).heartbeat_at != VALIDATION  # beaten
