"""leaderboard.interval_runs: when a split's bootstrap intervals are computed: debounced
(a burst of requests costs two runs, not one per entry), one run at a time per split,
and the sweep sends the runs left behind (the numbers: test_intervals.py)."""

from challenge_site.leaderboard import interval_runs, intervals
from challenge_site.leaderboard.models import IntervalRun
from tests.factories import AFTER


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
