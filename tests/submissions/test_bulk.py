"""submissions.bulk: the organiser exports: every submission's zip in one zip, every score
in one CSV, streamed (who may download them: test_bulk_views.py)."""

import csv
import hashlib
import io
import os
import tracemalloc
import zipfile
from datetime import timedelta

import pytest
import time_machine
from django.core.files.base import ContentFile

import scoring
from challenge_site.submissions import bulk
from challenge_site.submissions.models import PRIVATE_STORAGE, Status, Submission
from challenge_site.submissions.services import purge_invalid_zips
from tests.factories import AFTER, TEST_PHASE, VALIDATION, make_challenge, make_dataset, make_user
from tests.leaderboard.helpers import INF, add_entry, at, cls, reg

from .helpers import API_CSV_URL, API_ZIP_URL, CSV_URL, ZIP_URL, api, body, predictions, web


def manifest_of(archive: zipfile.ZipFile) -> list[dict]:
    return list(csv.DictReader(io.StringIO(archive.read("manifest.csv").decode())))


def stored_bytes(storage_roots, submission) -> bytes:
    return (storage_roots["private"] / submission.file.name).read_bytes()


def with_file(submission, data: bytes) -> Submission:
    """Give an entry made by add_entry a stored upload, as services.submit stores one."""
    submission.file.save("submission.zip", ContentFile(data), save=False)
    submission.original_filename, submission.file_size = "mine.zip", len(data)
    submission.save(update_fields=["file", "original_filename", "file_size"])
    return submission


# --- The zip of every submission ---------------------------------------------------------


@pytest.fixture
def uploads(
    challenge,
    gaze,
    catalysis,
    participant,
    other,
    submit_zip,
    storage_roots,
    django_capture_on_commit_callbacks,
    settings,
):
    """Real uploads: two scored, one invalid (kept), one invalid whose zip was purged,
    and gaze's baseline (no file). Invalid zips kept a week (the default keeps none)."""
    settings.SUBMISSION_INVALID_ZIP_RETENTION_DAYS = 7
    with time_machine.travel(VALIDATION, tick=False):  # the pipeline's times too
        ada_val = submit_zip(participant, challenge, predictions("gaze"), now=VALIDATION)
        invalid = submit_zip(other, challenge, {"gaze_val_predict.txt": b"x\n"}, now=VALIDATION)
        purged = submit_zip(other, challenge, {"gaze_val_predict.txt": b"y\n"}, now=VALIDATION)
    files = predictions("catalysis", ("val", "test"), task="classification")
    with time_machine.travel(TEST_PHASE, tick=False):
        grace_test = submit_zip(other, challenge, files, now=TEST_PHASE, method="Forest")
    baseline = add_entry(gaze, baseline=True, method="Baseline", val=reg(1.5, 1.0))
    Submission.objects.filter(pk=purged.pk).update(finished_at=VALIDATION - timedelta(days=8))
    purged_path = storage_roots["private"] / purged.file.name
    with django_capture_on_commit_callbacks(execute=True):  # deletes the file on commit
        assert purge_invalid_zips(now=VALIDATION) == 1
    assert not purged_path.exists()
    return {
        name: Submission.objects.get(pk=s.pk)
        for name, s in {
            "ada_val": ada_val,
            "grace_test": grace_test,
            "invalid": invalid,
            "purged": purged,
            "baseline": baseline,
        }.items()
    }


def test_the_zip_holds_each_stored_upload_byte_for_byte(uploads, organiser, storage_roots):
    ada_val, grace_test, invalid = uploads["ada_val"], uploads["grace_test"], uploads["invalid"]
    assert (ada_val.status, grace_test.status, invalid.status) == ("scored", "scored", "invalid")
    with time_machine.travel(AFTER, tick=False):
        response = web(organiser).get(ZIP_URL)
    assert response.status_code == 200
    assert response.streaming
    assert response["Content-Type"] == "application/zip"
    assert response["Content-Disposition"] == (
        'attachment; filename="demo-submissions-20300301T120000Z.zip"'
    )
    assert "no-store" in response["Cache-Control"] and "private" in response["Cache-Control"]
    archive = zipfile.ZipFile(io.BytesIO(body(response)))
    assert archive.testzip() is None
    # Datasets in order (position, then name: catalysis, gaze), submissions by id; the
    # baseline and the purged zip have no file; the manifest comes last.
    assert archive.namelist() == [
        f"catalysis/{grace_test.pk}-grace.zip",
        f"gaze/{ada_val.pk}-ada.zip",
        f"gaze/{invalid.pk}-grace.zip",
        "manifest.csv",
    ]
    for submission, member in (
        (grace_test, f"catalysis/{grace_test.pk}-grace.zip"),
        (ada_val, f"gaze/{ada_val.pk}-ada.zip"),
        (invalid, f"gaze/{invalid.pk}-grace.zip"),
    ):
        data = archive.read(member)
        assert data == stored_bytes(storage_roots, submission)
        assert zipfile.ZipFile(io.BytesIO(data)).namelist()  # a zip itself, intact
        info = archive.getinfo(member)
        assert info.compress_type == zipfile.ZIP_STORED  # compressed already
        assert info.date_time == submission.created.timetuple()[:6]
    assert archive.getinfo("manifest.csv").compress_type == zipfile.ZIP_DEFLATED


def test_the_manifest_lists_every_submission_with_its_file(uploads, organiser, storage_roots):
    archive = zipfile.ZipFile(io.BytesIO(body(web(organiser).get(ZIP_URL))))
    rows = manifest_of(archive)
    assert list(rows[0]) == bulk.MANIFEST_HEADER
    s = uploads

    def row(submission, **expected) -> dict:
        values = {
            "submission": str(submission.pk),
            "method": submission.method,
            "authors": submission.authors,
            "mark": submission.mark,
            "phase": submission.phase,
            "status": submission.status,
            "created": submission.created.isoformat(),
            "queued_at": submission.queued_at.isoformat(),
            "started_at": submission.started_at.isoformat() if submission.started_at else "",
            "finished_at": submission.finished_at.isoformat(),
            "original_filename": submission.original_filename,
            "file_deleted_at": "",
            "team": "",
            "withdrawn_at": "",
        }
        values.update(expected)
        return values

    def stored(submission, member) -> dict:
        data = stored_bytes(storage_roots, submission)
        return {
            "file_size": str(len(data)),
            "file": member,
            "file_status": "included",
            "sha256": hashlib.sha256(data).hexdigest(),
        }

    assert rows == [
        row(
            s["grace_test"],
            dataset="catalysis",
            username="grace",
            display_name="",
            baseline="no",
            **stored(s["grace_test"], f"catalysis/{s['grace_test'].pk}-grace.zip"),
        ),
        row(
            s["ada_val"],
            dataset="gaze",
            username="ada",
            display_name="Ada L.",
            baseline="no",
            **stored(s["ada_val"], f"gaze/{s['ada_val'].pk}-ada.zip"),
        ),
        row(
            s["invalid"],
            dataset="gaze",
            username="grace",
            display_name="",
            baseline="no",
            **stored(s["invalid"], f"gaze/{s['invalid'].pk}-grace.zip"),
        ),
        row(
            s["purged"],
            dataset="gaze",
            username="grace",
            display_name="",
            baseline="no",
            file_size=str(s["purged"].file_size),  # the upload's size, as recorded
            file="",
            file_status="deleted",
            sha256="",
            file_deleted_at=VALIDATION.isoformat(),
        ),
        row(
            s["baseline"],
            dataset="gaze",
            username="",
            display_name="",
            baseline="yes",
            original_filename="",
            file_size="0",
            file="",
            file_status="none",
            sha256="",
        ),
    ]
    # What the manifest says, the values themselves: literal spot checks.
    by_id = {int(r["submission"]): r for r in rows}
    grace = by_id[s["grace_test"].pk]
    assert (grace["method"], grace["authors"], grace["phase"], grace["mark"]) == (
        "Forest",
        "A. Lovelace",
        "test",
        "",
    )
    assert grace["created"] == "2030-02-03T12:00:00+00:00"
    assert by_id[s["ada_val"].pk]["original_filename"] == "predictions.zip"


def test_a_zip_lost_from_the_storage_is_listed_as_missing(
    challenge, gaze, participant, organiser, storage_roots
):
    kept = with_file(add_entry(gaze, user=participant, created=at(1)), b"PK kept bytes")
    lost = with_file(add_entry(gaze, user=participant, created=at(2)), b"PK lost bytes")
    (storage_roots["private"] / lost.file.name).unlink()
    archive = zipfile.ZipFile(io.BytesIO(body(web(organiser).get(ZIP_URL))))
    assert archive.namelist() == [f"gaze/{kept.pk}-ada.zip", "manifest.csv"]
    assert archive.read(f"gaze/{kept.pk}-ada.zip") == b"PK kept bytes"
    rows = {int(r["submission"]): r for r in manifest_of(archive)}
    assert (rows[lost.pk]["file_status"], rows[lost.pk]["file"], rows[lost.pk]["sha256"]) == (
        "missing",
        "",
        "",
    )
    assert rows[lost.pk]["file_size"] == "13"
    assert rows[kept.pk]["sha256"] == hashlib.sha256(b"PK kept bytes").hexdigest()


def test_only_this_challenges_submissions_are_exported(challenge, gaze, participant, staff):
    other_challenge = make_challenge(slug="other")
    elsewhere = make_dataset(other_challenge, "gaze")
    mine = with_file(add_entry(gaze, user=participant, created=at(1)), b"mine")
    with_file(add_entry(elsewhere, user=participant, created=at(1)), b"theirs")
    archive = zipfile.ZipFile(io.BytesIO(body(web(staff).get(ZIP_URL))))
    assert archive.namelist() == [f"gaze/{mine.pk}-ada.zip", "manifest.csv"]
    assert [r["submission"] for r in manifest_of(archive)] == [str(mine.pk)]


def test_an_empty_challenge_exports_a_manifest_alone(challenge, organiser):
    archive = zipfile.ZipFile(io.BytesIO(body(web(organiser).get(ZIP_URL))))
    assert archive.namelist() == ["manifest.csv"]
    assert archive.read("manifest.csv").decode() == ",".join(bulk.MANIFEST_HEADER) + "\r\n"


def test_names_in_the_archive_are_safe_and_text_cannot_run_as_a_formula(challenge, gaze, organiser):
    odd = make_user("x+y@z", display_name="=SUM(A1)")
    entry = add_entry(gaze, user=odd, created=at(1), method="-1 trick", authors="@me")
    with_file(entry, b"odd")
    archive = zipfile.ZipFile(io.BytesIO(body(web(organiser).get(ZIP_URL))))
    assert archive.namelist() == [f"gaze/{entry.pk}-x+y@z.zip", "manifest.csv"]
    row = manifest_of(archive)[0]
    assert (row["display_name"], row["method"], row["authors"]) == (
        "'=SUM(A1)",
        "'-1 trick",
        "'@me",
    )
    assert bulk.member_name(submission_id=7, dataset="gaze", username="a/../b c") == (
        "gaze/7-a_.._b_c.zip"
    )


# --- Streaming, memory bounded -----------------------------------------------------------


@pytest.fixture
def many_uploads(gaze, participant):
    """Twenty uploads of 200 KB each (random: incompressible), 4 MB in all."""
    return [
        with_file(add_entry(gaze, user=participant, created=at(i)), os.urandom(200 * 1024))
        for i in range(20)
    ]


def test_the_zip_is_streamed_a_chunk_at_a_time(challenge, many_uploads, monkeypatch):
    monkeypatch.setattr(bulk, "CHUNK", 16 * 1024)
    opened = []
    real_open = PRIVATE_STORAGE.open
    monkeypatch.setattr(
        PRIVATE_STORAGE, "open", lambda name, mode="rb": opened.append(name) or real_open(name)
    )
    chunks = bulk.iter_submissions_archive(challenge, now=AFTER)
    first = next(chunks)
    # The first bytes leave before the second upload is even opened.
    assert len(opened) == 1 and first.startswith(b"PK\x03\x04")
    sizes = [len(first)] + [len(chunk) for chunk in chunks]
    assert len(opened) == 20
    assert sum(sizes) > 20 * 200 * 1024
    # No chunk holds more than one copied chunk and a member's header (or the manifest
    # and central directory, a few KB here).
    assert max(sizes[:-1]) <= 16 * 1024 + 200
    assert len(sizes) > 20 * (200 // 16)


@pytest.mark.parametrize("count", [3, 10])
def test_the_zip_uses_one_query_and_bounded_memory_whatever_the_count(
    challenge, gaze, participant, count, monkeypatch, django_assert_num_queries
):
    """Uploads of 1 MB each: 3 MB or 10 MB in all, the same peak below one upload's size."""
    for i in range(count):
        with_file(add_entry(gaze, user=participant, created=at(i)), os.urandom(1024 * 1024))
    monkeypatch.setattr(bulk, "CHUNK", 16 * 1024)
    monkeypatch.setattr(bulk, "ROWS_PER_FETCH", 3)
    total = 0
    tracemalloc.start()
    try:
        with django_assert_num_queries(1):  # rows come from one cursor, not one per row
            for chunk in bulk.iter_submissions_archive(challenge, now=AFTER):
                total += len(chunk)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert total > count * 1024 * 1024
    assert peak < 1024 * 1024


def test_the_scores_csv_uses_one_query_whatever_the_count(
    challenge, gaze, participant, django_assert_num_queries
):
    for i in range(12):
        add_entry(gaze, user=participant, created=at(i), val=reg(0.5, 0.25), test=reg(1, 2))
    with django_assert_num_queries(1):
        lines = list(bulk.iter_scores_csv(challenge))
    assert len(lines) == 1 + 12 * 2 * len(reg(0.5, 0.25))  # the header, one line per score


def test_the_exports_answer_head_without_building_anything(
    challenge, many_uploads, organiser, monkeypatch
):
    def refuse(*args, **kwargs):
        raise AssertionError("a HEAD request opened an upload")

    monkeypatch.setattr(PRIVATE_STORAGE, "open", refuse)
    client = web(organiser)
    for url in (ZIP_URL, CSV_URL):  # (the API answers GET alone, as its other views)
        response = client.head(url)
        assert response.status_code == 200
        assert body(response) == b""
        assert response["Content-Disposition"].startswith("attachment;")


# --- The CSV of every score --------------------------------------------------------------


def test_the_scores_csv_has_every_score_in_a_long_layout(
    challenge, gaze, catalysis, participant, other, organiser
):
    baseline = add_entry(gaze, baseline=True, method="Baseline", created=at(-10), val=reg(1.5, 1))
    ada = add_entry(
        gaze,
        user=participant,
        created=at(5),
        method="GP",
        authors="A. L.",
        val=reg(INF, 0.25, crps=None),
        test=reg(0.75, 0.5, crps=0.125),
    )
    grace = add_entry(
        catalysis,
        user=other,
        created=TEST_PHASE,
        method="=HYPERLINK()",
        test=cls(0.5, 0.25),
        status=Status.QUEUED,  # being rescored: its previous scores stay
    )
    add_entry(make_dataset(make_challenge(slug="other"), "gaze"), user=participant, val=reg(9, 9))
    with time_machine.travel(AFTER, tick=False):
        response = web(organiser).get(CSV_URL)
    assert response.status_code == 200 and response.streaming
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == (
        'attachment; filename="demo-scores-20300301T120000Z.csv"'
    )
    assert "no-store" in response["Cache-Control"]
    text = body(response).decode()
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == bulk.SCORES_HEADER
    g = ["catalysis", "test", str(grace.pk), "grace", "", "no", "'=HYPERLINK()", "", "", "test"]
    g += ["queued", "2030-02-03T12:00:00+00:00"]
    b = ["gaze", "val", str(baseline.pk), "", "", "yes", "Baseline", "", "", "validation"]
    b += ["scored", "2030-01-20T11:50:00+00:00"]
    a = [str(ada.pk), "ada", "Ada L.", "no", "GP", "A. L.", "<", "validation", "scored"]
    a += ["2030-01-20T12:05:00+00:00"]
    assert rows[1:] == [
        # catalysis first (datasets by position, then name); losses by name
        [*g, "01l", "0.25", "", ""],
        [*g, "aurc", "0.1", "", ""],
        [*g, "brier", "0.2", "", ""],
        [*g, "ece", "0.1", "", ""],
        [*g, "lift", "0.5", "", ""],
        [*g, "nlp", "0.5", "", ""],
        [*g, "rauc", "0.05", "", ""],
        # then gaze: its validation split, then its test split (hidden from the public
        # until publication; organisers export it)
        [*b, "crps", "0.3", "", ""],
        [*b, "nlpd", "1.5", "", ""],
        [*b, "nmse", "1.0", "", ""],
        [*b, "rauc", "0.2", "", ""],
        ["gaze", "val", *a, "crps", "n/a", "", ""],
        ["gaze", "val", *a, "nlpd", "inf", "", ""],
        ["gaze", "val", *a, "nmse", "0.25", "", ""],
        ["gaze", "val", *a, "rauc", "0.2", "", ""],
        ["gaze", "test", *a, "crps", "0.125", "", ""],
        ["gaze", "test", *a, "nlpd", "0.75", "", ""],
        ["gaze", "test", *a, "nmse", "0.5", "", ""],
        ["gaze", "test", *a, "rauc", "0.2", "", ""],
    ]
    assert not challenge.results_published


def test_the_scores_csv_puts_a_slice_in_its_own_column(challenge, gaze, participant, organiser):
    """A slice's score (stored as "LOSS@SLICE", scoring.md §8) reads as its loss and its
    slice; the whole split's have an empty slice."""
    entry = add_entry(
        gaze, user=participant, val={"nlpd": 0.5, "nlpd@in": 0.25, "nlpd@shifted": 1.5}
    )
    with time_machine.travel(AFTER, tick=False):
        rows = list(csv.DictReader(io.StringIO(body(web(organiser).get(CSV_URL)).decode())))
    mine = [(r["loss"], r["slice"], r["value"]) for r in rows if r["submission"] == str(entry.pk)]
    assert mine == [("nlpd", "", "0.5"), ("nlpd", "in", "0.25"), ("nlpd", "shifted", "1.5")]


def test_the_scores_csv_of_real_submissions_matches_their_scores(
    gaze, participant, organiser, submit_zip
):
    submission = submit_zip(participant, gaze.challenge, predictions("gaze"), now=VALIDATION)
    text = body(web(organiser).get(CSV_URL)).decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    exported = {(r["submission"], r["split"], r["loss"]): r["value"] for r in rows}
    stored = {
        (str(submission.pk), score.split, score.loss): repr(score.value)
        for score in submission.scores.all()
    }
    assert stored and exported == stored


def test_the_scores_csv_holds_every_multiclass_loss(challenge, participant, organiser, submit_zip):
    from .helpers import make_shapes, shapes_files

    make_shapes(challenge)
    submission = submit_zip(participant, challenge, shapes_files(("val",)), now=VALIDATION)
    rows = list(csv.DictReader(io.StringIO(body(web(organiser).get(CSV_URL)).decode())))
    exported = {r["loss"]: r["value"] for r in rows if r["submission"] == str(submission.pk)}
    # Every loss of the task (plug-ins' too, e.g. plugins/floorlog), by name.
    assert list(exported) == sorted(loss.name for loss in scoring.losses_for("multiclass"))
    assert exported == {
        score.loss: repr(score.value) for score in submission.scores.filter(split="val")
    }


# --- The API's exports and the links to them ----------------------------------------------


def test_the_api_serves_the_same_exports_whatever_the_client_accepts(
    uploads, organiser, storage_roots
):
    client = api(organiser)
    archive = zipfile.ZipFile(
        io.BytesIO(body(client.get(API_ZIP_URL, HTTP_ACCEPT="application/zip")))
    )
    ada_val = uploads["ada_val"]
    member = f"gaze/{ada_val.pk}-ada.zip"
    assert archive.read(member) == stored_bytes(storage_roots, ada_val)
    response = client.get(API_CSV_URL, HTTP_ACCEPT="text/csv")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    web_csv = body(web(organiser).get(CSV_URL))
    assert body(response) == web_csv


def test_export_links_name_both_exports(challenge):
    assert bulk.export_links(challenge) == [
        ("All submissions (zip)", ZIP_URL),
        ("All scores (CSV)", CSV_URL),
    ]
