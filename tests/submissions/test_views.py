"""The upload page, the submission page, its plots and file, and "My submissions"."""

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.conf import settings as site_settings
from django.test import Client
from django.urls import reverse

from challenge_site.submissions.models import Status, Submission
from challenge_site.submissions.services import score_submission
from tests.factories import AFTER, BEFORE_START, VALIDATION, make_zip
from tests.pages import page_text

from .helpers import form_data, gaussian_lines, predictions, queued_submission

SUBMIT = reverse("submit", args=["demo"])
TIMEOUT = timedelta(seconds=site_settings.SUBMISSION_SCORING_TIMEOUT)
VAL = gaussian_lines(4)


@pytest.fixture
def logged_in(client, participant):
    with time_machine.travel(VALIDATION, tick=False):
        client.force_login(participant)
        yield client


def test_upload_page_needs_a_login(client, gaze):
    response = client.get(SUBMIT)
    assert response.status_code == 302
    assert response["Location"] == f"/accounts/login/?next={SUBMIT}"
    response = client.post(SUBMIT, form_data(gaze.challenge, make_zip(predictions("gaze"))))
    assert response.status_code == 302 and not Submission.objects.exists()


def test_upload_page_shows_phase_limits_and_what_remains(logged_in, gaze, participant, submit_zip):
    challenge = gaze.challenge
    challenge.val_daily_limit = 3
    challenge.save()
    submit_zip(participant, challenge, predictions("gaze"), now=VALIDATION)
    response = logged_in.get(SUBMIT)
    assert response.status_code == 200
    text = page_text(response)
    assert "Validation phase — the zip must hold NAME_val_predict.txt" in text
    assert "gaze 1 3 2" in text  # dataset, used today, daily limit, remaining
    page = response.content.decode()
    assert 'enctype="multipart/form-data"' in page and "csrfmiddlewaretoken" in page
    assert f'data-max-bytes="{50 * 1024 * 1024}"' in page
    assert '<progress id="upload-progress"' in page and "js/upload.js" in page
    assert '<option value="" selected>— from the file names —</option>' in page


def test_upload_page_before_the_challenge_opens(client, gaze, participant):
    with time_machine.travel(BEFORE_START, tick=False):
        client.force_login(participant)
        response = client.get(SUBMIT)
    assert "Submissions open with the challenge, on 10 Jan 2030, 00:00 UTC" in page_text(response)
    assert '<form method="post" enctype' not in response.content.decode()


def test_upload_redirects_to_the_scored_submission(
    logged_in, gaze, participant, django_capture_on_commit_callbacks
):
    data = make_zip(predictions("gaze", ("train", "val")))
    with django_capture_on_commit_callbacks(execute=True):
        response = logged_in.post(SUBMIT, form_data(gaze.challenge, data, method="My GP"))
    submission = Submission.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/submissions/{submission.pk}/"
    assert (submission.user, submission.method, submission.status) == (
        participant,
        "My GP",
        Status.SCORED,
    )
    page = logged_in.get(response["Location"])
    text = page_text(page)
    assert f"Submission #{submission.pk} received." in text
    assert "< My GP" in text and "Scored" in text
    assert "Training split nlpd nmse crps" in text and "Validation split nlpd nmse crps" in text
    assert 'http-equiv="refresh"' not in page.content.decode()
    assert "PIT histogram of the validation split (flat when calibrated)." in text
    assert "The central 50 %, 80 % and 95 % predictive intervals hold the target" in text


def test_a_classification_entry_page_explains_its_reliability_diagram(
    client, challenge, participant, submit_zip
):
    from tests.factories import make_dataset

    make_dataset(challenge, "catalysis", task="classification")
    files = predictions("catalysis", ("val",), task="classification")
    submission = submit_zip(participant, challenge, files, now=VALIDATION)
    with time_machine.travel(AFTER, tick=False):
        page = client.get(f"/submissions/{submission.pk}/")
    html, text = page.content.decode(), page_text(page)
    assert 'alt="Reliability diagram of the validation split;' in html
    assert "Reliability diagram of the validation split: the observed frequency of +1" in text
    assert "PIT histogram" not in text


def test_a_multiclass_entry_page_shows_its_reported_values_of_visible_splits_only(
    client, challenge, participant, submit_zip
):
    """tu, du and mi beside the validation scores at once; nothing of the test split's
    (scores, reported values, pictures) until the results are published."""
    from tests.factories import TEST_PHASE

    from .helpers import make_shapes, shapes_files

    make_shapes(challenge)
    submission = submit_zip(
        participant, challenge, shapes_files(("val", "test"), members=2), now=TEST_PHASE
    )
    reported = {
        result.split: dict(result.plot_data["reported"])
        for result in submission.split_results.all()
    }
    with time_machine.travel(TEST_PHASE, tick=False):
        page = client.get(f"/submissions/{submission.pk}/")
    assert page.status_code == 200
    html, text = page.content.decode(), page_text(page)
    assert "Reported beside the losses, not ranked: tu = " in text
    assert text.count("Reported beside the losses") == 1
    assert f'title="{reported["val"]["mi"]!r}"' in html
    assert f'title="{reported["test"]["mi"]!r}"' not in html
    assert "scores hidden until the results are published" in text
    assert f"/submissions/{submission.pk}/plots/val/" in html  # the val pictures
    assert f"/submissions/{submission.pk}/plots/test" not in html
    with time_machine.travel(TEST_PHASE, tick=False):
        hidden = client.get(f"/submissions/{submission.pk}/plots/test/confusion.svg")
    assert hidden.status_code in (403, 404)
    challenge.results_published = True
    with time_machine.travel(AFTER, tick=False):
        challenge.save()
        page = client.get(f"/submissions/{submission.pk}/")
    html, text = page.content.decode(), page_text(page)
    assert text.count("Reported beside the losses") == 2
    assert f'title="{reported["test"]["mi"]!r}"' in html


def test_form_errors_come_back_with_status_400(logged_in, gaze):
    response = logged_in.post(SUBMIT, form_data(gaze.challenge, b"", method=""))
    assert response.status_code == 400
    text = page_text(response)
    assert "This field is required." in text
    response = logged_in.post(
        SUBMIT, form_data(gaze.challenge, make_zip({"gaze_val_targets.txt": b"1\n"}))
    )
    assert response.status_code == 400
    assert "rename it to gaze_val_predict.txt" in page_text(response)
    assert not Submission.objects.exists()


def test_upload_needs_the_csrf_token(gaze, participant):
    client = Client(enforce_csrf_checks=True)
    with time_machine.travel(VALIDATION, tick=False):
        client.force_login(participant)
        response = client.post(SUBMIT, form_data(gaze.challenge, make_zip(predictions("gaze"))))
    assert response.status_code == 403
    assert not Submission.objects.exists()


def test_infinity_and_na_on_the_submission_page(client, gaze, participant, submit_zip):
    files = {"gaze_val_predict.txt": b"1 0.5 0\n1 0.1 1\n1 -0.2 1\n1 0.3 1\n"}
    submission = submit_zip(participant, gaze.challenge, files, now=VALIDATION)
    with time_machine.travel(AFTER, tick=False):
        text = page_text(client.get(f"/submissions/{submission.pk}/"))
    assert "Validation split nlpd nmse crps rauc ∞ 1.383 0.6857 0.6385" in text
    point = submit_zip(
        participant, gaze.challenge, {"gaze_val_predict.txt": b"1 0 0\n" * 4}, now=VALIDATION
    )
    with time_machine.travel(AFTER, tick=False):
        text = page_text(client.get(f"/submissions/{point.pk}/"))
    assert "non-probabilistic predictions: only point losses apply nlpd nmse crps rauc n/a" in text
    assert text.count("n/a") >= 2


def test_invalid_submission_page_lists_every_error(logged_in, gaze, participant, submit_zip):
    files = {
        "gaze_val_predict.txt": b"1 0 1\nbad\n1 0 -1\n",
        "gaze_train_predict.txt": b"x\n",
    }
    submission = submit_zip(participant, gaze.challenge, files, now=VALIDATION)
    response = logged_in.get(f"/submissions/{submission.pk}/")
    page = response.content.decode()
    assert len(submission.errors) >= 4
    for line in submission.errors:
        assert line.replace("'", "&#x27;").replace('"', "&quot;") in page
    assert "Invalid" in page_text(response) and "Scores" not in page_text(response)


def test_failed_submission_page_explains(logged_in, gaze, participant, submit_zip):
    submission = submit_zip(participant, gaze.challenge, predictions("gaze"), now=VALIDATION)
    Submission.objects.filter(pk=submission.pk).update(
        status=Status.FAILED, failure="RuntimeError: disk on fire"
    )
    text = page_text(logged_in.get(f"/submissions/{submission.pk}/"))
    assert "scoring failed because of a problem on our side" in text
    assert "RuntimeError: disk on fire" in text


def test_owner_downloads_the_zip_they_uploaded(logged_in, gaze, participant, submit_zip):
    files = predictions("gaze")
    submission = submit_zip(participant, gaze.challenge, files, now=VALIDATION)
    response = logged_in.get(f"/submissions/{submission.pk}/file.zip")
    assert response.status_code == 200
    assert response["Content-Disposition"] == (
        f'attachment; filename="submission-{submission.pk}.zip"'
    )
    assert b"".join(response.streaming_content) == make_zip(files)


def test_my_submissions_lists_mine_in_a_constant_number_of_queries(
    logged_in, gaze, participant, other, submit_zip, django_assert_num_queries
):
    submit_zip(other, gaze.challenge, predictions("gaze"), now=VALIDATION)
    url = reverse("my_submissions")

    def render():
        # session, user, the filter's challenges, count, submissions, their scores, their
        # split results
        with django_assert_num_queries(7):
            return logged_in.get(url)

    for _ in range(2):
        submit_zip(participant, gaze.challenge, predictions("gaze"), now=VALIDATION)
    few = render()
    for _ in range(8):
        submit_zip(participant, gaze.challenge, predictions("gaze"), now=VALIDATION)
    submit_zip(participant, gaze.challenge, {"gaze_val_predict.txt": b"no\n"}, now=VALIDATION)
    many = render()
    assert few.status_code == many.status_code == 200
    text = page_text(many)
    assert text.count("Gaussian process") == 11
    assert "Invalid" in text and "val: nlpd" in text
    mine = Submission.objects.filter(user=participant).order_by("-created", "-id")
    assert [f"/submissions/{s.pk}/" in many.content.decode() for s in mine] == [True] * 11
    theirs = Submission.objects.get(user=other)
    assert f'href="/submissions/{theirs.pk}/"' not in many.content.decode()


def test_my_submissions_needs_a_login(client):
    assert client.get(reverse("my_submissions")).status_code == 302


def test_navigation_and_challenge_page_link_to_submitting(logged_in, gaze):
    home = logged_in.get("/").content.decode()
    assert '<a href="/accounts/submissions/">My submissions</a>' in home
    challenge_page = logged_in.get("/challenges/demo/").content.decode()
    assert f'href="{SUBMIT}">Submit predictions</a>' in challenge_page


def test_hostile_uploads_through_the_page_give_400_with_the_message(client, gaze, participant):
    url = reverse("submit", args=["demo"])
    corpus = {
        b"not a zip at all": "the file is a text file, not a zip archive",
        make_zip({"../gaze_val_predict.txt": VAL}): "refused: a path that climbs out",
        make_zip({"gaze_val_predict.txt": b"1 0 1\n" * 2_000_000}): "this looks like a zip bomb",
    }
    with time_machine.travel(VALIDATION, tick=False):
        client.force_login(participant)
        for data, expected in corpus.items():
            response = client.post(url, form_data(gaze.challenge, data))
            assert response.status_code == 400
            assert expected in response.content.decode()
    assert not Submission.objects.exists()


def test_limits_use_the_clock_of_the_request(
    client, gaze, participant, django_capture_on_commit_callbacks
):
    """Through the page with time-machine: the day rolls over at 00:00 UTC."""
    from django.urls import reverse

    from tests.factories import make_zip

    from .helpers import form_data

    challenge = gaze.challenge
    challenge.val_daily_limit = 1
    challenge.save()
    url = reverse("submit", args=["demo"])
    data = make_zip(predictions("gaze"))
    with time_machine.travel(datetime(2030, 1, 20, 23, 59, tzinfo=UTC), tick=False):
        client.force_login(participant)
        with django_capture_on_commit_callbacks(execute=True):
            assert client.post(url, form_data(challenge, data)).status_code == 302
        response = client.post(url, form_data(challenge, data))
        assert response.status_code == 400
        assert "the daily limit in the validation phase" in response.content.decode()
    with (
        time_machine.travel(datetime(2030, 1, 21, 0, 0, 1, tzinfo=UTC), tick=False),
        django_capture_on_commit_callbacks(execute=True),
    ):
        assert client.post(url, form_data(challenge, data)).status_code == 302
    assert Submission.objects.filter(status=Status.SCORED).count() == 2
    assert [s.created.day for s in Submission.objects.order_by("created")] == [20, 21]
    assert score_submission(submission_id=Submission.objects.first().pk) is None  # already final


@pytest.mark.parametrize("status", [Status.QUEUED, Status.RUNNING])
def test_status_page_refreshes_until_final(client, gaze, participant, status):
    submission = queued_submission(participant, gaze.challenge)
    Submission.objects.filter(pk=submission.pk).update(status=status)
    with time_machine.travel(VALIDATION, tick=False):
        client.force_login(participant)
        page = client.get(f"/submissions/{submission.pk}/").content.decode()
        assert '<meta http-equiv="refresh" content="2">' in page
        score_submission(submission_id=submission.pk, now=VALIDATION + TIMEOUT)
        page = client.get(f"/submissions/{submission.pk}/").content.decode()
    assert 'http-equiv="refresh"' not in page
    assert "Scored" in page


def test_the_daily_cap_on_rejected_uploads_is_a_form_error(
    logged_in, gaze, participant, submit_zip, settings
):
    settings.SUBMISSION_MAX_REJECTED_PER_DAY = 1
    bad = submit_zip(participant, gaze.challenge, {"gaze_val_predict.txt": b"x\n"}, now=VALIDATION)
    assert bad.status == Status.INVALID
    response = logged_in.post(SUBMIT, form_data(gaze.challenge, make_zip(predictions("gaze"))))
    assert response.status_code == 400
    assert (
        "you have made 1 upload today that was invalid or could not be scored, the most a "
        "participant may make in a day; uploads are accepted again at 00:00 UTC"
    ) in page_text(response)
    assert Submission.objects.count() == 1


def test_failed_submission_page_says_it_counts(logged_in, gaze, participant, submit_zip):
    submission = submit_zip(participant, gaze.challenge, predictions("gaze"), now=VALIDATION)
    Submission.objects.filter(pk=submission.pk).update(status=Status.FAILED, failure="boom")
    text = page_text(logged_in.get(f"/submissions/{submission.pk}/"))
    assert "It counts against the limits" in text
    assert "does not count" not in text


def test_the_page_says_when_an_invalid_zip_was_deleted(
    logged_in, gaze, participant, submit_zip, settings, storage_roots,
    django_capture_on_commit_callbacks,
):  # fmt: skip
    from challenge_site.submissions.services import purge_invalid_zips

    settings.SUBMISSION_INVALID_ZIP_RETENTION_DAYS = 3
    bad = submit_zip(participant, gaze.challenge, {"gaze_val_predict.txt": b"x\n"}, now=VALIDATION)
    link = f"/submissions/{bad.pk}/file.zip"
    assert link in logged_in.get(f"/submissions/{bad.pk}/").content.decode()
    stored = storage_roots["private"] / bad.file.name
    Submission.objects.filter(pk=bad.pk).update(finished_at=VALIDATION - timedelta(days=4))
    with django_capture_on_commit_callbacks(execute=True):
        assert purge_invalid_zips(now=VALIDATION) == 1
    assert not stored.exists()
    page = logged_in.get(f"/submissions/{bad.pk}/")
    assert link not in page.content.decode()
    assert "deleted 3 days after it was found invalid" in page_text(page)
    assert logged_in.get(link).status_code == 404


def test_an_invalid_upload_keeps_only_its_report(
    logged_in, gaze, participant, submit_zip, storage_roots, django_capture_on_commit_callbacks
):
    """At the default (SUBMISSION_INVALID_ZIP_RETENTION_DAYS = 0) the zip of an invalid
    upload is deleted as soon as it is found invalid: nothing of it is stored but its report."""
    with django_capture_on_commit_callbacks(execute=True):
        bad = submit_zip(
            participant, gaze.challenge, {"gaze_val_predict.txt": b"x\n" * 1000}, now=VALIDATION
        )
    bad.refresh_from_db()
    assert bad.status == "invalid" and not bad.file and bad.file_deleted_at == bad.finished_at
    assert not any(path.is_file() for path in storage_roots["private"].rglob("*.zip"))
    page = logged_in.get(f"/submissions/{bad.pk}/")
    assert "deleted when it was found invalid: an invalid upload keeps only its report" in (
        page_text(page)
    )
    assert "expected a number, found 'x'" in page_text(page)
    assert logged_in.get(f"/submissions/{bad.pk}/file.zip").status_code == 404
