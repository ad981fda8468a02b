"""statistics_snapshots: a challenge's statistics and their drawings are computed by a
worker, one computation at a time per challenge; the page and the drawings serve the
latest snapshot and never compute (the ``history`` fixture: conftest.py; the clock stands
at AFTER unless a test travels)."""

from datetime import timedelta

import pytest
import time_machine
from django.test import Client

from challenge_site.leaderboard import generation, statistics, statistics_snapshots, tasks
from challenge_site.leaderboard.models import StatisticsSnapshot
from challenge_site.leaderboard.statistics_snapshots import COMPUTE_TIMEOUT, PLOTS, STALE_AFTER
from challenge_site.submissions.models import Status
from tests.factories import AFTER
from tests.pages import page_text
from tests.test_headers import inline_code

from .helpers import client_for, entry, when

PAGE = "/challenges/demo/statistics/"
SVGS = [f"/challenges/demo/statistics/{kind}.svg" for kind in PLOTS]


@pytest.fixture
def sent(monkeypatch):
    """Tasks sent, as a broker would hold them: nothing is computed until a test does."""
    found = []
    monkeypatch.setattr(
        statistics_snapshots, "send", lambda challenge_id: found.append(challenge_id)
    )
    return found


def _row() -> StatisticsSnapshot:
    return StatisticsSnapshot.objects.get()


def test_the_snapshot_equals_the_direct_computation(history, published, challenge):
    assert statistics_snapshots.request(challenge.pk)  # computed in-process: no broker
    row = _row()
    direct = statistics.challenge_statistics(challenge=challenge, now=AFTER)
    assert statistics_snapshots.load(row.numbers) == direct
    assert direct.outcomes.total.uploads == 12 and direct.turnaround.total.median == timedelta(
        seconds=67.5
    )
    for kind, plot in PLOTS.items():
        drawn = plot.draw(plot.numbers(direct), title=f"Demo challenge: {plot.title}")
        assert getattr(row, f"{kind}_svg") == drawn, kind
    assert (row.requested, row.computed, row.queued, row.computing_since) == (1, 1, False, None)
    assert row.computed_at == AFTER and row.seconds > 0


def test_an_empty_challenge_round_trips_through_json(challenge, gaze):
    direct = statistics.challenge_statistics(challenge=challenge, now=AFTER)
    assert direct.turnaround.total.median is None and direct.outcomes.total.uploads == 0
    assert statistics_snapshots.load(statistics_snapshots.dump(direct)) == direct


def test_before_the_first_computation_the_page_waits_and_the_drawings_answer_503(
    history, published, challenge, sent
):
    response = Client().get(PAGE)
    assert response.status_code == 200
    assert "The statistics are being computed" in page_text(response)
    html = response.content.decode()
    assert '<meta http-equiv="refresh" content="5">' in html and "<img" not in html
    assert inline_code(html) == [] and "uploads" not in page_text(response)
    for url in SVGS:
        drawing = Client().get(url)
        assert drawing.status_code == 503 and drawing["Retry-After"] == "5"
        assert drawing.content.decode() == "The statistics are being computed.\n"
    # One task for every view: the others found it queued and wrote nothing.
    assert sent == [challenge.pk]
    row = _row()
    assert (row.requested, row.computed, row.queued, row.computed_at) == (1, 0, True, None)

    assert tasks.compute_statistics(challenge.pk) is True  # the worker
    text = page_text(Client().get(PAGE))
    assert "12 uploads by 3 people; 8 valid submissions by 3 participants." in text
    assert "As of 1 Mar 2030, 12:00 UTC" in text
    assert all(Client().get(url).status_code == 200 for url in SVGS)
    assert sent == [challenge.pk]


def test_who_may_see_is_checked_before_the_snapshot_is_read(history, challenge, ada, sent):
    """Before publication a participant gets the 403 with no number and asks for nothing."""
    client = client_for(ada)
    assert client.get(PAGE).status_code == 403
    assert all(client.get(url).status_code == 403 for url in SVGS)
    assert not StatisticsSnapshot.objects.exists() and sent == []


def test_changes_during_a_computation_start_one_more_after_it(
    history, published, challenge, catalysis, ada, sent, django_capture_on_commit_callbacks
):
    Client().get(PAGE)
    assert sent == [challenge.pk]
    claimed = statistics_snapshots._claim(challenge.pk, now=AFTER)
    assert claimed == (1, AFTER)
    # A second task finds the computation under way and does nothing.
    assert statistics_snapshots.compute(challenge_id=challenge.pk) is False
    # Changes of the listed scores meanwhile: one request, however many changes.
    entry(catalysis, user=ada, created=when(1, 10, 20))
    for _ in range(3):
        with django_capture_on_commit_callbacks(execute=True):
            generation.bump(dataset_id=catalysis.pk)
    assert sent == [challenge.pk, challenge.pk]
    row = _row()
    assert (row.requested, row.queued) == (2, True)

    with django_capture_on_commit_callbacks(execute=True):
        statistics_snapshots._release(
            challenge.pk,
            1,
            AFTER,
            computed=statistics_snapshots.make(challenge, now=AFTER),
        )
    row = _row()
    assert (row.requested, row.computed, row.queued, row.computing_since) == (2, 1, True, None)
    assert sent == [challenge.pk] * 3  # the next one, for the changes it did not see
    assert statistics_snapshots.compute(challenge_id=challenge.pk) is True
    row = _row()
    assert (row.requested, row.computed, row.queued) == (2, 2, False)
    assert statistics_snapshots.load(row.numbers).daily.validation == 5
    assert statistics_snapshots.compute(challenge_id=challenge.pk) is False  # current


def test_a_computation_whose_worker_died_is_taken_over(history, published, challenge, sent):
    Client().get(PAGE)
    assert statistics_snapshots._claim(challenge.pk, now=AFTER) is not None
    assert statistics_snapshots._claim(challenge.pk, now=AFTER + COMPUTE_TIMEOUT) is None
    assert statistics_snapshots.sweep(now=AFTER + COMPUTE_TIMEOUT) == []
    later = AFTER + COMPUTE_TIMEOUT + timedelta(seconds=1)
    assert statistics_snapshots.sweep(now=later) == [challenge.pk]
    with time_machine.travel(later, tick=False):
        assert statistics_snapshots.compute(challenge_id=challenge.pk) is True
    # The dead worker's end, if it ever comes, keeps nothing older.
    statistics_snapshots._release(challenge.pk, 0, AFTER, computed=None)
    row = _row()
    assert (row.computed, row.computed_at, row.computing_since) == (1, later, None)


def test_the_sweep_sends_a_lost_task_once_and_nothing_current(history, published, challenge, sent):
    Client().get(PAGE)
    assert statistics_snapshots.sweep(now=AFTER + timedelta(minutes=1)) == []
    lost = AFTER + statistics_snapshots.QUEUE_TIMEOUT + timedelta(seconds=1)
    assert statistics_snapshots.sweep(now=lost) == [challenge.pk]
    assert sent == [challenge.pk, challenge.pk]
    assert statistics_snapshots.compute(challenge_id=challenge.pk) is True
    assert statistics_snapshots.compute(challenge_id=challenge.pk) is False
    assert statistics_snapshots.sweep(now=lost + timedelta(hours=1)) == []
    assert tasks.sweep_statistics() == []


def test_a_stale_snapshot_is_served_while_the_next_is_computed(
    history, published, challenge, gaze, alan, sent
):
    Client().get(PAGE)
    statistics_snapshots.compute(challenge_id=challenge.pk)
    entry(gaze, user=alan, created=when(2, 1, 10), status=Status.INVALID)  # no score changed
    with time_machine.travel(AFTER + STALE_AFTER, tick=False):
        assert "12 uploads by 3 people" in page_text(Client().get(PAGE))
    assert sent == [challenge.pk]
    later = AFTER + STALE_AFTER + timedelta(seconds=1)
    with time_machine.travel(later, tick=False):
        text = page_text(Client().get(PAGE))
        assert "12 uploads by 3 people" in text and "being recomputed" in text
        Client().get(SVGS[2])
        assert sent == [challenge.pk] * 2  # one request for both
        statistics_snapshots.compute(challenge_id=challenge.pk)
        text = page_text(Client().get(PAGE))
    assert "13 uploads by 3 people" in text and "being recomputed" not in text


def test_a_change_asks_only_for_statistics_someone_viewed(
    history, challenge, catalysis, sent, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        generation.bump(dataset_id=catalysis.pk)
    assert sent == [] and not StatisticsSnapshot.objects.exists()


def test_a_failed_computation_is_logged_and_left_to_the_sweep(
    history, published, challenge, sent, monkeypatch
):
    Client().get(PAGE)

    def broken(challenge, *, now):
        raise RuntimeError("no numbers")

    monkeypatch.setattr(statistics_snapshots, "make", broken)
    assert tasks.compute_statistics(challenge.pk) is False
    row = _row()
    assert (row.requested, row.computed, row.queued, row.computing_since) == (1, 0, False, None)
    lost = AFTER + statistics_snapshots.QUEUE_TIMEOUT + timedelta(seconds=1)
    assert statistics_snapshots.sweep(now=lost) == [challenge.pk]
