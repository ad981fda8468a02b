"""leaderboard.interval_runs: when a split's bootstrap intervals are computed: debounced
(a burst of requests costs two runs, not one per entry), one run at a time per split,
and the sweep sends the runs left behind (the numbers: test_intervals.py)."""

from datetime import timedelta

import time_machine

from challenge_site.leaderboard import interval_runs, intervals
from challenge_site.leaderboard.models import IntervalRun
from challenge_site.submissions.models import Status, Submission
from tests.factories import AFTER, make_challenge, make_dataset

from .helpers import entry


def test_requests_while_one_run_is_on_its_way_send_no_second_one(
    waves, monkeypatch, django_capture_on_commit_callbacks
):
    sent = []
    monkeypatch.setattr(interval_runs, "send", lambda *args, **kwargs: sent.append(args))
    with django_capture_on_commit_callbacks(execute=True):
        for _ in range(5):
            interval_runs.request(dataset_id=waves.pk, split="val")
        interval_runs.request(dataset_id=waves.pk, split="train")  # no leaderboard
    assert sent == [(waves.pk, "val")]
    run = IntervalRun.objects.get(dataset=waves, split="val")
    assert run.requested == 5 and run.queued
    assert not IntervalRun.objects.filter(split="train").exists()
    # The run starts (no longer queued), more requests arrive: the run's end sends one more.
    monkeypatch.setattr(intervals, "compute_and_store", lambda **kwargs: _grow_requests(waves))
    with django_capture_on_commit_callbacks(execute=True):
        assert interval_runs.run(dataset_id=waves.pk, split="val")
    assert sent == [(waves.pk, "val"), (waves.pk, "val")]
    run.refresh_from_db()
    assert (run.requested, run.computed, run.queued) == (6, 5, True)


def _grow_requests(dataset):
    IntervalRun.objects.filter(dataset=dataset, split="val").update(requested=6)
    return intervals.Summary(entries=0, resampled="", updated=0)


def test_a_run_under_way_is_not_started_twice_and_the_sweep_sends_the_left_behind(
    waves, monkeypatch
):
    sent = []
    monkeypatch.setattr(interval_runs, "send", lambda *args, **kwargs: sent.append(args))
    IntervalRun.objects.create(
        dataset=waves, split="val", requested=3, computed=1, running_since=AFTER, requested_at=AFTER
    )
    assert not interval_runs.run(dataset_id=waves.pk, split="val")
    assert interval_runs.sweep(now=AFTER) == []
    later = AFTER + interval_runs.RUN_TIMEOUT * 2
    assert interval_runs.sweep(now=later) == [(waves.pk, "val")]
    assert sent == [(waves.pk, "val")]


def test_a_request_during_a_run_is_computed_after_it_even_if_its_task_came_first(
    waves, monkeypatch, django_capture_on_commit_callbacks
):
    """The race of two workers: a run under way, a request sends a task, another worker
    takes that task at once and finds the run busy; the run's end must send again, or
    the request waits for the sweep (15 minutes) with its entry's intervals blank."""
    sent = []
    monkeypatch.setattr(interval_runs, "send", lambda *args, **kwargs: sent.append(args))
    with django_capture_on_commit_callbacks(execute=True):
        interval_runs.request(dataset_id=waves.pk, split="val")

    def during_the_run(**kwargs):
        # A newly scored entry's request, as its transaction's commit runs it.
        interval_runs._request_now(waves.pk, "val")
        assert len(sent) == 2
        assert not interval_runs.run(dataset_id=waves.pk, split="val")  # the busy task
        return intervals.Summary(entries=0, resampled="", updated=0)

    monkeypatch.setattr(intervals, "compute_and_store", during_the_run)
    with django_capture_on_commit_callbacks(execute=True):
        assert interval_runs.run(dataset_id=waves.pk, split="val")
    assert sent == [(waves.pk, "val")] * 3
    run = IntervalRun.objects.get(dataset=waves, split="val")
    assert (run.requested, run.computed, run.queued, run.running_since) == (2, 1, True, None)


def _with_workers(monkeypatch):
    """Tasks sent to workers, not run in-process (where nothing waits)."""
    monkeypatch.setattr(interval_runs, "_in_process", lambda: False)


def _runs_on_workers(monkeypatch) -> list:
    """Interval runs as on workers that share a host with scoring (so they may wait), each
    computing nothing; returns the list of the tasks sent, (dataset_id, split) each."""
    _with_workers(monkeypatch)
    sent = []
    monkeypatch.setattr(interval_runs, "send", lambda *args, **kwargs: sent.append(args))
    monkeypatch.setattr(
        intervals, "compute_and_store",
        lambda **kw: intervals.Summary(entries=0, resampled="", updated=0),
    )  # fmt: skip
    return sent


def _waiting_upload(dataset, user, *, queued_at):
    submission = entry(dataset, user=user, created=queued_at, status=Status.QUEUED)
    Submission.objects.filter(pk=submission.pk).update(queued_at=queued_at)
    return submission


def test_a_run_waits_while_uploads_are_scored_and_the_sweep_sends_it_once_they_are(
    waves, ada, monkeypatch
):
    _with_workers(monkeypatch)  # (the interval runs share a host with scoring)
    sent, computed = [], []
    monkeypatch.setattr(interval_runs, "send", lambda *args, **kwargs: sent.append(args))
    monkeypatch.setattr(
        intervals, "compute_and_store",
        lambda **kw: computed.append(kw) or intervals.Summary(entries=0, resampled="", updated=0),
    )  # fmt: skip
    now = AFTER
    upload = _waiting_upload(waves, ada, queued_at=now - timedelta(seconds=3))
    IntervalRun.objects.create(
        dataset=waves, split="val", requested=3, computed=2, queued=True,
        requested_at=now, computed_at=now - timedelta(seconds=30),
    )  # fmt: skip
    with time_machine.travel(now, tick=False):
        assert interval_runs.scoring_busy(dataset_id=waves.pk, now=now)
        assert not interval_runs.run(dataset_id=waves.pk, split="val")
        assert computed == []
        row = IntervalRun.objects.get(dataset=waves, split="val")
        assert (row.queued, row.running_since, row.computed) == (False, None, 2)
        assert interval_runs.sweep(now=now) == []  # (still scoring)
        Submission.objects.filter(pk=upload.pk).update(status=Status.SCORED)
        assert not interval_runs.scoring_busy(dataset_id=waves.pk, now=now)
        assert interval_runs.sweep(now=now) == [(waves.pk, "val")]
        assert sent == [(waves.pk, "val")]
        assert interval_runs.run(dataset_id=waves.pk, split="val")
    assert len(computed) == 1
    assert IntervalRun.objects.get(dataset=waves, split="val").computed == 3


def test_a_run_does_not_wait_for_scoring_beyond_its_bounds(waves, ada, monkeypatch):
    _runs_on_workers(monkeypatch)
    now = AFTER
    _waiting_upload(waves, ada, queued_at=now - timedelta(seconds=3))
    # Never computed: the first intervals of a split do not wait.
    IntervalRun.objects.create(dataset=waves, split="val", requested=1, queued=True)
    # Computed longer than MAX_WAIT ago: a busy site's intervals lag by MAX_WAIT at most.
    IntervalRun.objects.create(
        dataset=waves, split="test", requested=2, computed=1, queued=True,
        computed_at=now - interval_runs.MAX_WAIT - timedelta(seconds=1),
    )  # fmt: skip
    with time_machine.travel(now, tick=False):
        assert interval_runs.run(dataset_id=waves.pk, split="val")
        assert interval_runs.run(dataset_id=waves.pk, split="test")
        # An upload stuck in the queue for longer than SCORING_WAIT holds nothing back.
        later = now + interval_runs.SCORING_WAIT + timedelta(seconds=1)
        assert not interval_runs.scoring_busy(dataset_id=waves.pk, now=later)
    # Tasks run in-process (no worker to share a host with; the suite's database tests
    # run them so, whatever the broker): nothing ever waits.
    monkeypatch.undo()
    assert interval_runs.celery_app.conf.task_always_eager
    assert interval_runs._in_process()
    assert not interval_runs.scoring_busy(dataset_id=waves.pk, now=now)


def test_uploads_to_another_challenge_hold_no_run_back(waves, ada, monkeypatch):
    _with_workers(monkeypatch)
    other = make_dataset(make_challenge(slug="other", title="Other"), "ripples")
    _waiting_upload(other, ada, queued_at=AFTER - timedelta(seconds=3))
    assert interval_runs.scoring_busy(dataset_id=other.pk, now=AFTER)
    assert not interval_runs.scoring_busy(dataset_id=waves.pk, now=AFTER)


def test_a_burst_of_requests_waits_until_it_is_quiet_and_a_lone_request_never_waits(
    waves, monkeypatch
):
    sent = _runs_on_workers(monkeypatch)
    now = AFTER
    computed = now - timedelta(seconds=20)
    # A lone entry scored since the last run: its run goes at once.
    IntervalRun.objects.create(
        dataset=waves, split="val", requested=5, computed=4, queued=True,
        requested_at=now, computed_at=computed,
    )  # fmt: skip
    # Three entries since the last run, the latest just now: a rush; its run waits.
    IntervalRun.objects.create(
        dataset=waves, split="test", requested=7, computed=4, queued=True,
        requested_at=now - timedelta(seconds=1), computed_at=computed,
    )  # fmt: skip
    with time_machine.travel(now, tick=False):
        assert interval_runs.run(dataset_id=waves.pk, split="val")
        assert not interval_runs.run(dataset_id=waves.pk, split="test")
        assert interval_runs.sweep(now=now) == []  # (not yet quiet)
    _sent_once_quiet(waves, "test", now=now, sent=sent, computed=7)


def test_a_request_soon_after_a_run_waits_for_quiet_and_one_long_after_does_not(waves, monkeypatch):
    # A deadline rush: the first request after each run is a single one, not a burst of
    # BURST; it is held back all the same while the run is recent and requests go on.
    sent = _runs_on_workers(monkeypatch)
    now = AFTER
    just_after = now - interval_runs.AFTER_RUN + timedelta(seconds=2)
    IntervalRun.objects.create(
        dataset=waves, split="val", requested=5, computed=4, queued=True,
        requested_at=now, computed_at=just_after,
    )  # fmt: skip
    long_after = now - interval_runs.AFTER_RUN - timedelta(seconds=1)
    IntervalRun.objects.create(
        dataset=waves, split="test", requested=5, computed=4, queued=True,
        requested_at=now, computed_at=long_after,
    )  # fmt: skip
    with time_machine.travel(now, tick=False):
        assert not interval_runs.run(dataset_id=waves.pk, split="val")
        assert interval_runs.run(dataset_id=waves.pk, split="test")
        assert interval_runs.sweep(now=now) == []  # (requests still coming)
    row = IntervalRun.objects.get(dataset=waves, split="val")
    assert (row.queued, row.computed) == (False, 4)
    _sent_once_quiet(waves, "val", now=now, sent=sent, computed=5)


def _sent_once_quiet(dataset, split: str, *, now, sent: list, computed: int) -> None:
    """Once QUIET has passed with no request, the sweep sends the held-back run (its only
    task), which computes up to ``computed``."""
    quiet = now + interval_runs.QUIET
    assert interval_runs.sweep(now=quiet) == [(dataset.pk, split)]
    assert sent == [(dataset.pk, split)]
    with time_machine.travel(quiet, tick=False):
        assert interval_runs.run(dataset_id=dataset.pk, split=split)
    assert IntervalRun.objects.get(dataset=dataset, split=split).computed == computed
