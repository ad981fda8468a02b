"""leaderboard.tasks: the Celery tasks that compute a split's intervals and sweep up the
runs left behind: a failure is logged, never raised into the request that scored."""

from django.db.models import F

from challenge_site.leaderboard import intervals, tasks
from challenge_site.leaderboard.models import IntervalRun
from challenge_site.submissions.models import Score
from tests.factories import AFTER

from .helpers import gaussian_file


def test_the_task_computes_the_split_and_the_sweep_finds_nothing_left(entries, waves):
    IntervalRun.objects.filter(dataset=waves, split="val").update(requested=F("requested") + 1)
    assert tasks.compute_intervals(waves.pk, "val") is True
    run = IntervalRun.objects.get(dataset=waves, split="val")
    assert (run.computed, run.entries, run.running_since) == (run.requested, 4, None)
    assert tasks.sweep_intervals() == []


def test_a_failing_run_neither_breaks_the_upload_nor_counts_as_computed(
    entries, waves, ada, submit_zip, monkeypatch, caplog
):
    def broken(**kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(intervals, "compute_and_store", broken)
    files = {"waves_val_predict.txt": gaussian_file(60, seed=12)}
    submission = submit_zip(ada, waves.challenge, files, now=AFTER)
    assert submission.status == "scored"
    run = IntervalRun.objects.get(dataset=waves, split="val")
    assert run.requested > run.computed and run.running_since is None
    assert "disk full" in caplog.text
    assert Score.objects.get(submission=submission, split="val", loss="crps").lower is None
