"""Scoring runs in batches (submissions.batches): small uploads of one dataset queued
behind the one a worker was sent are scored with it, each exactly as alone, and the
protocol of a single run (claims, take-over, superseded runs) holds for each."""

import threading
from unittest import mock

import pytest
from django.db import connection

from challenge_site.leaderboard import best
from challenge_site.leaderboard.models import BestEntry
from challenge_site.submissions import batches, evaluation, ladder, probing_stats, services
from challenge_site.submissions.models import Score, Status, Submission
from challenge_site.submissions.services import score_submission
from tests.concurrency import run_at_once
from tests.factories import VALIDATION, make_challenge, make_dataset, make_user, make_zip

from .helpers import predictions, upload_file

LADDER = ("ladder_value", "ladder_precision", "ladder_accepted", "ladder_current")


def _queued(user, dataset, *, seed: int) -> Submission:
    """An accepted upload of ``dataset`` never sent to a worker (on-commit hooks not run)."""
    return services.submit(
        user=user,
        challenge=dataset.challenge,
        dataset_name=dataset.name,
        method=f"m{seed}",
        description="",
        authors="",
        upload=upload_file(make_zip(predictions(dataset.name, seed=seed))),
        now=VALIDATION,
    )


def _scores(ids) -> dict:
    return {
        (pk, split, loss): value
        for pk, split, loss, value in Score.objects.filter(submission__in=ids).values_list(
            "submission_id", "split", "loss", "value"
        )
    }


@pytest.fixture
def backlog(gaze, participant):
    """Five queued uploads of gaze: three of ``participant`` (seeds 1, 2, 3), two of
    another participant (4, 5); and one of another dataset of the challenge."""
    other = make_user("other")
    entries = [
        _queued(user, gaze, seed=seed)  # in this order: the queue's
        for user, seed in (
            (participant, 1),
            (other, 4),
            (participant, 2),
            (other, 5),
            (participant, 3),
        )
    ]
    elsewhere = make_dataset(gaze.challenge, "wind", task="regression")
    away = _queued(participant, elsewhere, seed=6)
    return entries, away


def test_a_backlog_is_scored_in_one_batch_each_entry_as_alone(backlog, settings):
    entries, away = backlog
    ids = [entry.pk for entry in entries]
    first = score_submission(submission_id=ids[0], task_id="t1")
    assert first is not None and first.status == Status.SCORED
    rows = {
        pk: (status, attempts, task)
        for pk, status, attempts, task in Submission.objects.values_list(
            "pk", "status", "attempts", "task_id"
        )
    }
    # Every queued upload of the dataset, under the task that claimed them; not the other
    # dataset's.
    assert {pk: rows[pk] for pk in ids} == {pk: (Status.SCORED, 1, "t1") for pk in ids}
    assert rows[away.pk] == (Status.QUEUED, 0, "")
    batched = _scores(ids)
    assert len(batched) == 5 * 4  # nlpd nmse crps rauc on val
    # Their own messages, when they come, find them scored and change nothing.
    assert all(score_submission(submission_id=pk, task_id="late") is None for pk in ids[1:])
    assert _scores(ids) == batched
    # Each scored again alone (force: never a batch) gives the same values.
    for pk in ids:
        assert score_submission(submission_id=pk, force=True).status == Status.SCORED
    assert _scores(ids) == batched


PROBED = ("chance_z", "max_corr", "change_share", "near_previous", "random_count")


def _probed(ids) -> dict:
    return {
        row[0]: row[1:] for row in Submission.objects.filter(pk__in=ids).values_list("pk", *PROBED)
    }


def test_a_batch_reads_its_baseline_once_and_probes_each_entry_as_alone(
    backlog, gaze, monkeypatch, django_capture_on_commit_callbacks
):
    entries, _ = backlog
    ids = [entry.pk for entry in entries]
    with django_capture_on_commit_callbacks(execute=True):  # scored alone: it claims none
        services.refresh_baseline(dataset=gaze, now=VALIDATION)
    looked_up = mock.Mock(wraps=probing_stats._baseline_terms)
    monkeypatch.setattr(probing_stats, "_baseline_terms", looked_up)
    score_submission(submission_id=ids[0])
    assert looked_up.call_count == 1  # five entries of one dataset and split
    batched = _probed(ids)
    assert all(values[0] is not None for values in batched.values())  # chance_z: a baseline
    assert sum(values[1] is not None for values in batched.values()) == 3  # an earlier entry
    for pk in ids:
        assert score_submission(submission_id=pk, force=True).status == Status.SCORED
    assert looked_up.call_count == 1 + len(ids)
    assert _probed(ids) == batched


def test_the_participants_standings_follow_as_if_scored_one_by_one(backlog, gaze):
    entries, _ = backlog
    score_submission(submission_id=entries[0].pk)
    assert set(Submission.objects.filter(dataset=gaze).values_list("status", flat=True)) == {
        Status.SCORED
    }
    # Each participant's Ladder (two participants, three and two new entries in one
    # batch) equals the one recomputed from nothing.
    rows = Score.objects.filter(dataset=gaze, split="val", submission__is_baseline=False)
    stepped = {row[0]: row[1:] for row in rows.values_list("pk", *LADDER)}
    assert sum(1 for values in stepped.values() if values[0] is not None) >= 2
    rows.update(
        ladder_value=None, ladder_precision=None, ladder_accepted=None, ladder_current=False
    )
    ladder.refresh_dataset(dataset=gaze)
    assert {row[0]: row[1:] for row in rows.values_list("pk", *LADDER)} == stepped
    # The kept best-per-participant rows equal the window query's.
    kept = set(
        BestEntry.objects.filter(dataset=gaze).values_list(
            "split", "loss", "final", "participant", "submission_id"
        )
    )
    assert kept == {
        (row.split, row.loss, row.final, row.participant, row.submission_id)
        for row in best.recompute(gaze)
    }


def test_a_batch_stops_at_its_size_and_bytes(backlog, settings):
    entries, _ = backlog
    settings.SUBMISSION_BATCH_SIZE = 3
    score_submission(submission_id=entries[0].pk)
    statuses = [Submission.objects.get(pk=entry.pk).status for entry in entries]
    assert statuses == [Status.SCORED] * 3 + [Status.QUEUED] * 2  # the oldest first
    settings.SUBMISSION_BATCH_SIZE = 8
    settings.SUBMISSION_BATCH_BYTES = entries[3].file_size  # room for its zip alone
    score_submission(submission_id=entries[3].pk)
    statuses = [Submission.objects.get(pk=entry.pk).status for entry in entries]
    assert statuses == [Status.SCORED] * 4 + [Status.QUEUED]


def test_a_run_taken_over_meanwhile_is_left_out_and_the_others_written(backlog, monkeypatch):
    entries, _ = backlog
    overtaken = entries[2]
    real = evaluation.evaluate

    def overtake(sub, **kwargs):
        outcome = real(sub, **kwargs)
        if sub.pk == overtaken.pk:  # another worker claimed it meanwhile (attempt 7)
            Submission.objects.filter(pk=sub.pk).update(attempts=7)
        return outcome

    monkeypatch.setattr(evaluation, "evaluate", overtake)
    score_submission(submission_id=entries[0].pk)
    rows = dict(Submission.objects.values_list("pk", "status"))
    assert rows[overtaken.pk] == Status.RUNNING
    assert not Score.objects.filter(submission=overtaken).exists()
    assert all(rows[entry.pk] == Status.SCORED for entry in entries if entry != overtaken)


def test_the_task_delivered_again_takes_its_whole_batch_over(backlog, monkeypatch):
    """The worker died mid-batch: its runs are left running under its task's id, and
    the same task delivered again claims them all at once (attempt 2)."""
    entries, _ = backlog
    ids = [entry.pk for entry in entries]

    def die(sub, **kwargs):
        raise SystemExit("the worker process died")

    monkeypatch.setattr(evaluation, "evaluate", die)
    with pytest.raises(SystemExit):
        score_submission(submission_id=ids[0], task_id="t1")
    assert set(
        Submission.objects.filter(pk__in=ids).values_list("status", "attempts", "task_id")
    ) == {(Status.RUNNING, 1, "t1")}
    # Another task's message finds a live run and leaves it.
    assert score_submission(submission_id=ids[1], task_id="t2") is None
    monkeypatch.undo()
    assert score_submission(submission_id=ids[0], task_id="t1").status == Status.SCORED
    assert set(Submission.objects.filter(pk__in=ids).values_list("status", "attempts")) == {
        (Status.SCORED, 2)
    }


def test_one_entry_that_cannot_be_stored_fails_alone(backlog, monkeypatch):
    """The batch's write failed: each run is written alone, and only the faulty one
    ends failed."""
    entries, _ = backlog
    faulty = entries[1]
    from challenge_site.submissions import outcomes

    real = outcomes._set_status

    def refuse(submission, outcome, stored, **kwargs):
        if submission.pk == faulty.pk and outcome.status == Status.SCORED:
            raise RuntimeError("a row the database refused")
        return real(submission, outcome, stored, **kwargs)

    monkeypatch.setattr(outcomes, "_set_status", refuse)
    score_submission(submission_id=entries[0].pk)
    rows = {
        pk: (status, failure)
        for pk, status, failure in Submission.objects.values_list("pk", "status", "failure")
    }
    assert rows[faulty.pk] == (Status.FAILED, "storing the scores failed: RuntimeError")
    assert not Score.objects.filter(submission=faulty).exists()
    assert all(rows[entry.pk] == (Status.SCORED, "") for entry in entries if entry != faulty)


@pytest.mark.skipif(
    connection.vendor == "sqlite",
    reason="SQLite's in-memory test database cannot be written from several threads at once",
)
@pytest.mark.django_db(transaction=True)
def test_two_workers_claiming_at_once_never_take_the_same_run(monkeypatch, settings):
    """Worker A holds its batch's rows while worker B claims: B skips them (SKIP
    LOCKED) instead of waiting, and takes the rest; every run is scored once."""
    settings.SUBMISSION_BATCH_SIZE = 3
    dataset = make_dataset(make_challenge(), "gaze", task="regression")
    with mock.patch.object(services, "enqueue"):  # queued (commits run their hooks here)
        ids = [_queued(make_user(f"p{seed}"), dataset, seed=seed).pk for seed in range(6)]
    claimed, a_holds, b_claimed = {}, threading.Event(), threading.Event()
    real = batches.claim_more

    def claim_more(*, first, task_id, now):
        runs = real(first=first, task_id=task_id, now=now)
        claimed[task_id] = [first.pk, *(run.pk for run in runs)]
        if task_id == "a":
            a_holds.set()
            assert b_claimed.wait(timeout=30)  # A's rows stay locked while B claims
        else:
            b_claimed.set()
        return runs

    monkeypatch.setattr(batches, "claim_more", claim_more)

    def worker_a():
        score_submission(submission_id=ids[0], task_id="a")

    def worker_b():
        assert a_holds.wait(timeout=30)
        score_submission(submission_id=ids[3], task_id="b")

    assert run_at_once([worker_a, worker_b], join_timeout=120) == []
    assert claimed == {"a": ids[:3], "b": ids[3:]}
    assert set(Submission.objects.values_list("status", "attempts")) == {(Status.SCORED, 1)}
