"""leaderboard.export_files: whole-board files built by a worker, single flight per file,
complete or failed, keyed by who may read them."""

import csv
import hashlib
import io
import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

import scoring
from challenge_site.leaderboard import export_files
from challenge_site.leaderboard.generation import bump
from challenge_site.leaderboard.models import BoardExport, IntervalRun
from challenge_site.leaderboard.queries import Board
from challenge_site.submissions.storage import private_storage
from tests.factories import AFTER, TEST_PHASE

from .helpers import add_entry, at, cls

Status = BoardExport.Status


@pytest.fixture
def entries(catalysis, ada, grace, alan):
    add_entry(catalysis, created=at(-5), val=cls(0.3, 0.4), test=cls(0.3, 0.4), baseline=True)
    for i, user in enumerate([ada, grace, alan] * 4):
        add_entry(catalysis, user=user, created=at(i), val=cls(0.2 + i / 50, 0.3), method=f"M{i}")
    catalysis.refresh_from_db()
    return catalysis


def board_of(dataset, split="val", sort="nlp", best=False) -> Board:
    return Board(dataset, split, scoring.get_loss(dataset.task, sort), best)


def stored(row: BoardExport) -> bytes:
    with private_storage().open(row.file, "rb") as handle:
        return handle.read()


@pytest.fixture
def sent(monkeypatch):
    """The builds sent, not run (as with a broker and no worker yet)."""
    calls = []
    monkeypatch.setattr(export_files, "send", calls.append)
    return calls


def ask(dataset, *, fmt="csv", board=None, retry=False) -> BoardExport:
    board = board or board_of(dataset)
    current = export_files.version(dataset, board.split)
    return export_files.request(
        board=board, fmt=fmt, audience="public", current=current, retry=retry
    )


def test_a_build_writes_every_row_with_its_count_size_and_sha256(entries):
    row = ask(entries)  # tasks run in-process here: built by the time it returns
    assert row.status == Status.READY and row.built == export_files.version(entries, "val")
    data = stored(row)
    lines = list(csv.DictReader(io.StringIO(data.decode())))
    assert row.rows == len(lines) == 13  # twelve entries and the baseline
    assert row.bytes == len(data) and row.sha256 == hashlib.sha256(data).hexdigest()
    assert [line["rank"] for line in lines[:3]] == ["1", "2", "3"]
    assert row.file.startswith(f"leaderboard-exports/{entries.pk}/") and row.file.endswith(".csv")
    assert row.built_at is not None and row.seconds >= 0 and row.error == ""


def test_the_json_file_is_the_apis_rows_with_the_board_and_the_count(entries):
    row = ask(entries, fmt="json", board=board_of(entries, sort="01l", best=True))
    document = json.loads(stored(row))
    assert document["count"] == row.rows == len(document["results"]) == 4  # 3 people, baseline
    assert (document["sort"], document["view"], document["split"]) == ("01l", "best", "val")
    assert "version" not in document  # it would count changes of hidden splits
    first = document["results"][0]
    assert first["rank"] == 1 and set(first["scores"]) >= {"nlp", "01l"}


def test_a_version_moves_with_the_generation_and_the_interval_runs(entries):
    before = export_files.version(entries, "val")
    bump(dataset_id=entries.pk)
    entries.refresh_from_db()
    assert export_files.version(entries, "val") == before + 1
    IntervalRun.objects.create(dataset=entries, split="val", requested=3, computed=3)
    assert export_files.version(entries, "val") == before + 4
    assert export_files.version(entries, "test") == before + 1


def test_one_build_at_a_time_and_requests_meanwhile_make_one_more(entries, sent):
    first = ask(entries)
    assert first.status == Status.QUEUED and sent == [first.pk]
    again = ask(entries)  # queued: nothing more is sent
    assert sent == [first.pk] and again.pk == first.pk
    claimed = export_files._claim(first.pk, now=timezone.now())
    assert claimed.status == Status.BUILDING
    assert export_files._claim(first.pk, now=timezone.now()) is None  # single flight
    bump(dataset_id=entries.pk)
    entries.refresh_from_db()
    ask(entries)  # a change during the build: asked for, not sent
    assert sent == [first.pk]
    assert BoardExport.objects.get(pk=first.pk).requested == export_files.version(entries, "val")


def test_a_build_that_ends_behind_the_requests_sends_the_next(
    entries, sent, monkeypatch, django_capture_on_commit_callbacks
):
    row = ask(entries)
    real = export_files.write

    def write_while_a_change_comes(board, *, fmt, out):
        bump(dataset_id=entries.pk)
        entries.refresh_from_db()
        ask(entries)  # a change during the build: asked for, not sent
        return real(board, fmt=fmt, out=out)

    monkeypatch.setattr(export_files, "write", write_while_a_change_comes)
    with django_capture_on_commit_callbacks(execute=True):
        assert export_files.build(export_id=row.pk)
    row.refresh_from_db()
    assert row.status == Status.QUEUED and row.file  # the file of the older version
    assert row.built == export_files.version(entries, "val") - 1
    assert sent == [row.pk, row.pk]  # the first, and the one after the build
    monkeypatch.setattr(export_files, "write", real)
    assert export_files.build(export_id=row.pk)
    row.refresh_from_db()
    assert row.status == Status.READY and row.built == export_files.version(entries, "val")


def test_a_duplicate_message_builds_nothing(entries):
    row = ask(entries)
    assert row.status == Status.READY
    assert export_files.build(export_id=row.pk) is False
    assert export_files.build(export_id=12345) is False


def test_a_failed_build_records_why_keeps_the_last_file_and_saves_nothing(
    entries, monkeypatch, settings
):
    good = ask(entries)
    bump(dataset_id=entries.pk)
    entries.refresh_from_db()

    def broken(board, *, fmt, out):
        out.write(b"rank,submission\n1,")  # half a file, then the database goes away
        raise RuntimeError("connection lost")

    monkeypatch.setattr(export_files, "write", broken)
    row = ask(entries)
    assert row.status == Status.FAILED
    assert row.error == "An unexpected error stopped the build; it has been logged."
    assert (row.file, row.sha256) == (good.file, good.sha256)  # untouched, and stale
    assert not export_files.servable(row, current=export_files.version(entries, "val"))
    assert export_files.failed(row, current=export_files.version(entries, "val"))
    folder = Path(settings.STORAGES["private"]["OPTIONS"]["location"]) / "leaderboard-exports"
    files = [path.name for path in folder.rglob("*") if path.is_file()]
    assert files == [good.file.rsplit("/", 1)[1]]  # no partial file was saved


def test_a_failed_build_is_tried_again_on_retry_or_after_a_change_not_on_each_get(
    entries, monkeypatch, sent
):
    row = ask(entries)
    export_files.build(export_id=row.pk)  # pretend the worker ran it
    BoardExport.objects.filter(pk=row.pk).update(status=Status.FAILED, error="x")
    assert ask(entries).status == Status.FAILED and sent == [row.pk]
    assert ask(entries, retry=True).status == Status.QUEUED and sent == [row.pk, row.pk]
    BoardExport.objects.filter(pk=row.pk).update(status=Status.FAILED)
    bump(dataset_id=entries.pk)
    entries.refresh_from_db()
    assert ask(entries).status == Status.QUEUED and len(sent) == 3


def test_a_build_taken_over_meanwhile_throws_its_file_away(entries, sent):
    row = ask(entries)
    real = export_files._claim

    def claim_then_lose_it(export_id, *, now):
        claimed = real(export_id, now=now)
        BoardExport.objects.filter(pk=export_id).update(building_since=now + timedelta(hours=2))
        return claimed

    export_files._claim = claim_then_lose_it
    try:
        assert export_files.build(export_id=row.pk) is False
    finally:
        export_files._claim = real
    row.refresh_from_db()
    assert row.file == "" and row.status == Status.BUILDING


def test_an_unchanged_board_keeps_its_file_and_time(entries, django_capture_on_commit_callbacks):
    row = ask(entries)
    bump(dataset_id=entries.pk)  # e.g. a test score: the validation board is the same
    entries.refresh_from_db()
    with django_capture_on_commit_callbacks(execute=True):
        again = ask(entries)
    assert again.built == row.built + 1 and again.status == Status.READY
    assert (again.file, again.built_at, again.sha256) == (row.file, row.built_at, row.sha256)
    assert private_storage().exists(row.file)


def test_the_sweep_sends_builds_lost_or_left_by_a_dead_worker(entries, sent):
    queued = ask(entries)
    building = ask(entries, board=board_of(entries, sort="01l"))
    export_files._claim(building.pk, now=timezone.now() - timedelta(minutes=10))
    assert export_files.sweep(now=timezone.now()) == []  # too recent
    later = timezone.now() + export_files.QUEUED_TIMEOUT + timedelta(seconds=1)
    assert export_files.sweep(now=later) == [queued.pk]
    late = timezone.now() + export_files.BUILD_TIMEOUT
    assert set(export_files.sweep(now=late)) == {queued.pk, building.pk}
    assert export_files.build(export_id=building.pk) is False  # still running
    dead = timezone.now() - export_files.BUILD_TIMEOUT - timedelta(seconds=1)
    BoardExport.objects.filter(pk=building.pk).update(building_since=dead)
    assert export_files.build(export_id=building.pk)  # the dead worker's build is taken over


@pytest.mark.parametrize(
    ("split", "published", "when", "expected"),
    [
        ("val", False, TEST_PHASE, "public"),
        ("test", False, AFTER, "organisers"),
        ("test", True, AFTER, "public"),
    ],
)
def test_the_audience_is_who_may_read_the_board(catalysis, split, published, when, expected):
    catalysis.challenge.results_published = published
    catalysis.challenge.save()
    assert export_files.audience(board_of(catalysis, split=split), now=when) == expected


def test_the_exact_board_behind_the_ladder_is_for_organisers(catalysis):
    catalysis.challenge.feedback = "ladder"
    catalysis.challenge.save()
    board = board_of(catalysis)
    assert export_files.audience(board, now=at(0)) == "organisers"
    assert export_files.audience(board, now=AFTER) == "public"  # validation targets out


def test_deleting_the_dataset_deletes_its_export_files(entries, django_capture_on_commit_callbacks):
    row = ask(entries)
    assert private_storage().exists(row.file)
    with django_capture_on_commit_callbacks(execute=True):
        entries.delete()  # cascades to the BoardExport rows
    assert not BoardExport.objects.exists()
    assert not private_storage().exists(row.file)
