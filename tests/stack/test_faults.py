"""Faults on the real stack: a worker killed while scoring, Redis stopped, PostgreSQL restarted.

Each test restores the service in a ``finally`` and checks that it answers again (CI goes
on on this machine right after), and checks the stack's own processes are back too.

Settings of the stack run (conftest): SUBMISSION_SCORING_TIMEOUT=20 (a run or a queued
submission counts as stuck after 20 s) and SUBMISSION_SWEEP_INTERVAL=2 (beat sends the
sweep every 2 s), so a submission whose message was lost is queued again within ~25 s.
"""

import os
import signal
from functools import cache

import pytest

from challenge_site.submissions.models import Score, SplitResult, Submission

from .conftest import orm, statuses, wait_final
from .data import make_zip, prediction_zip, sample_lines
from .harness import (
    postgres_ensure_running,
    postgres_ready,
    postgres_restart,
    redis_ensure_running,
    redis_ready,
    redis_stop,
    wait_until,
)

# Regression losses of a split scored from samples ("2 s1 … sK" rows).
SAMPLE_ROWS, SAMPLES = 20_000, 400


@cache
def slow_zip() -> bytes:
    """20,000 rows of 400 samples each (56 MB, about 25 MB zipped): a valid file that
    takes the worker a few seconds to score (decompress, parse, sort every row's samples),
    long enough to be caught mid-run."""
    return make_zip({"big_val_predict.txt": sample_lines(SAMPLE_ROWS, SAMPLES)}, level=1)


def upload_slow(api) -> int:
    response = api.api_submit("stack", slow_zip(), dataset="big", method="Many samples")
    assert response.status == 201, response
    return response.json()["id"]


def wait_running(pk: int) -> None:
    wait_until(
        lambda: statuses([pk]).get(pk) == "running",
        timeout=60,
        interval=0.02,
        what=f"submission {pk} to start running",
    )


def assert_scored_once(pk: int, *, attempts: int | tuple[int, ...]) -> None:
    """Scored, after ``attempts`` runs, with one set of Score rows and one SplitResult."""
    submission = orm(lambda: Submission.objects.get(pk=pk))
    assert submission.status == "scored", (submission.status, submission.failure)
    assert submission.attempts in (attempts if isinstance(attempts, tuple) else (attempts,))
    scores = orm(lambda: list(Score.objects.filter(submission_id=pk).values_list("split", "loss")))
    assert scores and len(scores) == len(set(scores)) and {s for s, _ in scores} == {"val"}
    assert orm(lambda: SplitResult.objects.filter(submission_id=pk).count()) == 1


def sweeps_seen(stack) -> int:
    return stack.log_tail("worker", size=10**7).count("Task submissions.sweep[")


def assert_left_alone(stack, pk: int) -> None:
    """Two more sweeps run and the finished submission is not scored again."""
    finished = orm(lambda: Submission.objects.get(pk=pk).finished_at)
    seen = sweeps_seen(stack)
    wait_until(lambda: sweeps_seen(stack) >= seen + 2, timeout=30, what="two more sweeps")
    assert orm(lambda: Submission.objects.get(pk=pk).finished_at) == finished


def ensure_worker(stack) -> None:
    process = stack.processes.get("worker")
    if process is None or process.poll() is not None:
        stack.processes.pop("worker", None)
        stack.start_worker()
    stack.wait_worker_ready()


def test_pool_process_killed_while_scoring_is_redelivered_at_once(stack, challenge, api):
    """SIGKILL to the pool processes mid-run: the worker's main process rejects the task
    (reject_on_worker_lost), Redis delivers it again, and the same task id takes it over."""
    pk = upload_slow(api)
    try:
        wait_running(pk)
        children = stack.worker_children()
        assert children
        for pid in children:
            os.kill(pid, signal.SIGKILL)
        assert statuses([pk])[pk] == "running"  # killed mid-run, not finished
        assert wait_final(stack, [pk], timeout=90) == {pk: "scored"}
        assert_scored_once(pk, attempts=2)
        assert "WorkerLostError" in stack.log_tail("worker", size=10**6)
        assert_left_alone(stack, pk)
    finally:
        ensure_worker(stack)


def test_worker_killed_while_scoring_is_scored_once_after_restart(stack, challenge, api):
    """SIGKILL to the whole worker mid-run: its message stays unacknowledged in Redis; after
    a restart the sweep queues the stuck run again (its heartbeat stale: the harness beats
    every 2 s, stale after 6 s)."""
    pk = upload_slow(api)
    try:
        wait_running(pk)
        stack.kill_worker()
        assert statuses([pk])[pk] == "running"
        stack.start_worker()
        stack.wait_worker_ready()
        assert wait_final(stack, [pk], timeout=120) == {pk: "scored"}
        assert_scored_once(pk, attempts=2)
        assert_left_alone(stack, pk)
    finally:
        ensure_worker(stack)


def test_upload_while_redis_is_down_is_accepted_and_scored_when_it_returns(
    stack, challenge, api, participant
):
    from .client import Client

    spec = challenge["datasets"]["sines"]
    browser_like = Client(stack.base_url)
    browser_like.login(participant["username"], "a-long-Passphrase-42")
    try:
        # Redis stops while gunicorn is receiving the upload, then a form upload follows.
        by_api = api.post_multipart_interrupted(
            "/api/v1/submissions/",
            {"challenge": "stack", "dataset": "sines", "method": "No broker"},
            {"file": ("predictions.zip", prediction_zip("sines", spec))},
            midway=redis_stop,
        )
        assert by_api.status == 201, by_api
        assert by_api.json()["status"] == "queued"
        by_form = browser_like.form_submit("stack", prediction_zip("sines", spec, seed=2))
        assert by_form.status == 302, by_form
        ids = [by_api.json()["id"], int(by_form.headers["Location"].rstrip("/").split("/")[-1])]
        assert set(statuses(ids).values()) == {"queued"}
        assert "broker unavailable" in stack.log_tail("web", size=10**6)
    finally:
        redis_ensure_running()
    assert redis_ready()
    stack.wait_worker_ready()
    assert wait_final(stack, ids, timeout=120) == dict.fromkeys(ids, "scored")
    for pk in ids:
        assert_scored_once(pk, attempts=1)


def test_postgres_restart_loses_no_submission(stack, challenge, api):
    """A restart while one submission is being scored and others wait: every upload made
    before it and after it ends scored, once (the interrupted run is queued again)."""
    spec = challenge["datasets"]["sines"]

    def upload(seed):
        response = api.api_submit("stack", prediction_zip("sines", spec, seed=seed))
        assert response.status == 201, response
        return response.json()["id"]

    slow = upload_slow(api)
    wait_running(slow)
    before = [upload(seed) for seed in range(10, 14)]
    try:
        postgres_restart()
        wait_until(postgres_ready, timeout=60, interval=0.2, what="PostgreSQL after restart")
    finally:
        postgres_ensure_running()
    # Each gunicorn worker finds its persistent connection dead and opens a new one
    # (CONN_HEALTH_CHECKS): no request fails once the server is back.
    for _ in range(6):
        assert stack.healthy()
    after = [upload(seed) for seed in range(20, 24)]
    ids = [slow, *before, *after]
    assert wait_final(stack, ids, timeout=120) == dict.fromkeys(ids, "scored")
    assert_scored_once(slow, attempts=(1, 2))
    for pk in before + after:
        assert_scored_once(pk, attempts=(1, 2))


@pytest.fixture(autouse=True)
def services_back(stack):
    """Whatever happened, PostgreSQL, Redis and the stack's processes answer afterwards."""
    yield
    postgres_ensure_running()
    redis_ensure_running()
    ensure_worker(stack)
    stack.wait_web_ready()
