"""POST /api/v1/submissions/ and GET /api/v1/submissions/<id>/."""

import random
import zipfile

import pytest
import time_machine
from django.test import Client
from rest_framework.test import APIClient

from challenge_site.submissions.models import Status, Submission
from tests.factories import AFTER, BEFORE_START, TEST_PHASE, VALIDATION, make_zip

from .helpers import predictions, upload_file

URL = "/api/v1/submissions/"


def post(client, data: bytes, *, when=VALIDATION, **fields):
    values = {"challenge": "demo", "method": "Curl GP", "file": upload_file(data)}
    values.update(fields)
    with time_machine.travel(when, tick=False):
        return client.post(URL, values, format="multipart")


@pytest.mark.django_db(transaction=True)
def test_upload_answers_201_with_id_status_and_url(api_client, gaze, participant):
    """Real commits, as in production: with tasks in-process, it is scored before the answer."""
    response = post(api_client, make_zip(predictions("gaze")), authors="A. L.", description="d")
    assert response.status_code == 201
    submission = Submission.objects.get(is_baseline=False)
    body = response.json()
    assert body == {
        "id": submission.pk,
        "status": "scored",  # tasks ran in-process on commit
        "url": f"http://testserver/submissions/{submission.pk}/",
        "api_url": f"http://testserver/api/v1/submissions/{submission.pk}/",
    }
    assert response["Location"] == body["api_url"]
    assert (submission.user, submission.method, submission.authors, submission.description) == (
        participant,
        "Curl GP",
        "A. L.",
        "d",
    )


def test_upload_with_a_named_dataset(api_client, gaze):
    assert post(api_client, make_zip(predictions("gaze")), dataset="gaze").status_code == 201


def test_upload_needs_authentication(db, gaze):
    response = post(APIClient(), make_zip(predictions("gaze")))
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    assert not Submission.objects.exists()


def test_session_authenticated_upload_needs_csrf(gaze, participant):
    client = Client(enforce_csrf_checks=True)
    with time_machine.travel(VALIDATION, tick=False):
        client.force_login(participant)
        response = client.post(URL, {"challenge": "demo", "method": "m", "file": upload_file(b"x")})
    assert response.status_code == 403
    assert "CSRF" in response.json()["detail"]


def test_missing_fields_answer_400_with_reasons(api_client, gaze):
    with time_machine.travel(VALIDATION, tick=False):
        response = api_client.post(URL, {}, format="multipart")
    assert response.status_code == 400
    assert response.json() == {
        "challenge": ["This field is required."],
        "method": ["This field is required."],
        "file": ["No file was submitted."],
    }


@pytest.mark.parametrize(
    ("fields", "data", "when", "expected"),
    [
        ({"challenge": "nope"}, None, VALIDATION, {"challenge": ["no challenge 'nope'"]}),
        (
            {"dataset": "wheat"},
            None,
            VALIDATION,
            {"dataset": ["no dataset 'wheat'; choose one of gaze"]},
        ),
        (
            {},
            None,
            BEFORE_START,
            {"non_field_errors": ["submissions open with the challenge, 10 Jan 2030 00:00 UTC"]},
        ),
        (
            {},
            b"PK\x03\x04 cut off",
            VALIDATION,
            {
                "file": [
                    "the zip is incomplete or damaged: its table of contents is missing or "
                    "unreadable (was the upload cut off?); create the zip again and upload it once more"
                ]
            },
        ),
        (
            {},
            None,
            TEST_PHASE,
            {
                "file": [
                    "the test phase needs gaze_test_predict.txt (the zip holds gaze_val_predict.txt)"
                ]
            },
        ),
    ],
)
def test_wrong_requests_answer_400_with_reasons(api_client, gaze, fields, data, when, expected):
    response = post(api_client, data or make_zip(predictions("gaze")), when=when, **fields)
    assert response.status_code == 400
    assert response.json() == expected
    assert not Submission.objects.exists()


def test_oversized_file_answers_400(api_client, gaze, settings):
    settings.SUBMISSION_MAX_UPLOAD_BYTES = 100_000
    noise = random.Random(2).randbytes(150_000)
    data = make_zip({"gaze_val_predict.txt": noise}, compression=zipfile.ZIP_STORED)
    response = post(api_client, data)
    assert response.status_code == 400
    assert response.json() == {
        "file": ["the file is larger than 0.1 MB, the limit for a submission zip"]
    }


def test_daily_limit_answers_429_and_total_limit_400(api_client, gaze):
    challenge = gaze.challenge
    challenge.test_daily_limit, challenge.test_total_limit = 1, 2
    challenge.save()
    data = make_zip(predictions("gaze", ("test",)))
    assert post(api_client, data, when=TEST_PHASE).status_code == 201
    response = post(api_client, data, when=TEST_PHASE)
    assert response.status_code == 429
    assert response.json()["detail"].startswith("you have made 1 submission to gaze today")
    assert response["Retry-After"] == str(12 * 3600 + 1)  # until 00:00 UTC
    next_day = TEST_PHASE.replace(day=4)
    assert post(api_client, data, when=next_day).status_code == 201
    response = post(api_client, data, when=next_day.replace(day=5))
    assert response.status_code == 400
    assert response.json() == {
        "detail": "you have made 2 submissions to gaze in the test phase, its overall limit"
    }


def test_detail_gives_status_errors_and_scores_with_infinity_as_a_string(
    api_client, gaze, submit_zip, participant
):
    files = {"gaze_val_predict.txt": b"1 0.5 0\n1 0.1 1\n1 -0.2 1\n1 0.3 1\n"}
    submission = submit_zip(participant, gaze.challenge, files, now=VALIDATION)
    with time_machine.travel(AFTER, tick=False):
        body = api_client.get(f"{URL}{submission.pk}/").json()
    assert body["id"] == submission.pk and body["status"] == "scored" and body["errors"] == []
    assert body["scores"]["val"]["nlpd"] == "inf"
    assert isinstance(body["scores"]["val"]["nmse"], float)
    assert (body["mark"], body["dataset"], body["challenge"]) == ("<", "gaze", "demo")

    point = submit_zip(
        participant, gaze.challenge, {"gaze_val_predict.txt": b"1 0 0\n" * 4}, now=VALIDATION
    )
    with time_machine.travel(AFTER, tick=False):
        body = api_client.get(f"{URL}{point.pk}/").json()
    assert body["scores"]["val"]["nlpd"] is None and body["scores"]["val"]["crps"] is None


def test_detail_of_an_invalid_submission_lists_its_errors(
    api_client, gaze, submit_zip, participant
):
    bad = submit_zip(
        participant, gaze.challenge, {"gaze_val_predict.txt": b"1 2\n"}, now=VALIDATION
    )
    with time_machine.travel(AFTER, tick=False):
        body = api_client.get(f"{URL}{bad.pk}/").json()
    assert body["status"] == Status.INVALID and body["scores"] == {}
    assert body["errors"] == bad.errors and body["errors"][0].startswith("gaze_val_predict.txt:1: ")


def test_detail_404_for_unknown_and_hidden_submissions(api_client, gaze, other, submit_zip):
    assert api_client.get(f"{URL}12345/").status_code == 404
    theirs = submit_zip(other, gaze.challenge, {"gaze_val_predict.txt": b"?\n"}, now=VALIDATION)
    with time_machine.travel(AFTER, tick=False):
        assert api_client.get(f"{URL}{theirs.pk}/").status_code == 404


def test_methods_not_allowed(api_client, db):
    response = api_client.delete(URL)
    assert response.status_code == 405
    assert set(response["Allow"].split(", ")) == {"GET", "POST", "OPTIONS"}
    assert api_client.delete(f"{URL}1/").status_code == 405


def test_the_daily_cap_on_rejected_uploads_answers_429(
    api_client, gaze, settings, django_capture_on_commit_callbacks
):
    settings.SUBMISSION_MAX_REJECTED_PER_DAY = 1
    bad = make_zip({"gaze_val_predict.txt": b"oops\n"})
    with django_capture_on_commit_callbacks(execute=True):
        assert post(api_client, bad).status_code == 201
    response = post(api_client, make_zip(predictions("gaze")))
    assert response.status_code == 429
    assert response.json()["detail"].startswith(
        "you have made 1 upload today that was invalid or could not be scored"
    )
    assert response["Retry-After"] == str(12 * 3600 + 1)
    assert Submission.objects.count() == 1


def test_files_in_other_fields_are_not_stored(api_client, gaze, settings, monkeypatch):
    """A review of issue 10 sent 19 extra file fields of 45 MB with a valid upload, and all
    were spooled to disk. Only the first "file" field is stored now."""
    from django.core.files.uploadedfile import TemporaryUploadedFile

    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 0  # every stored upload goes to a temporary file
    spooled = []
    original = TemporaryUploadedFile.__init__

    def record(self, name, *args, **kwargs):
        spooled.append(name)
        original(self, name, *args, **kwargs)

    monkeypatch.setattr(TemporaryUploadedFile, "__init__", record)
    values = {
        "challenge": "demo",
        "method": "m",
        "file": upload_file(make_zip(predictions("gaze"))),
        "junk1": upload_file(b"x" * 100_000, "junk1.bin"),
        "junk2": upload_file(b"x" * 100_000, "junk2.bin"),
    }
    with time_machine.travel(VALIDATION, tick=False):
        response = api_client.post("/api/v1/submissions/", values, format="multipart")
    assert response.status_code == 201, response.content
    assert spooled == ["predictions.zip"]


def test_several_file_fields_share_one_size_limit(api_client, gaze, settings):
    """Twenty "file" fields of 45 MB each were each under the 50 MB limit."""
    settings.SUBMISSION_MAX_UPLOAD_BYTES = 150_000
    values = {
        "challenge": "demo",
        "method": "m",
        "file": [upload_file(b"x" * 100_000, f"part{i}.zip") for i in range(3)],
    }
    with time_machine.travel(VALIDATION, tick=False):
        response = api_client.post("/api/v1/submissions/", values, format="multipart")
    assert response.status_code == 400
    assert "the file is larger than 0.1 MB" in response.json()["file"][0]


def test_a_multiclass_entry_s_scores_and_reported_values_follow_the_split_rules(
    api_client, challenge, submit_zip, participant
):
    """Validation scores and tu/du/mi at once; the test split's only once the results
    are published (before that, nothing of it: not a score, not a reported value)."""
    import scoring
    from challenge_site.submissions.evaluation import read_dataset_targets

    from .helpers import make_shapes, shapes_files

    shapes = make_shapes(challenge)
    files = shapes_files(("val", "test"), members=2)
    submission = submit_zip(participant, challenge, files, now=TEST_PHASE)
    assert submission.status == Status.SCORED
    targets = read_dataset_targets(shapes)
    expected = {
        split: scoring.evaluate(
            files[f"shapes_{split}_predict.txt"],
            targets[split],
            task="multiclass",
            options=shapes.scoring_options,
            train_targets=targets["train"],
        )
        for split in ("val", "test")
    }
    with time_machine.travel(TEST_PHASE, tick=False):
        body = api_client.get(f"{URL}{submission.pk}/").json()
    assert set(body["scores"]) == {"val"} and set(body["reported"]) == {"val"}
    assert body["scores"]["val"] == expected["val"].scores
    assert body["reported"]["val"] == expected["val"].reported
    assert body["decomposition"] == {}
    challenge.results_published = True
    with time_machine.travel(AFTER, tick=False):
        challenge.save()
        body = api_client.get(f"{URL}{submission.pk}/").json()
    assert body["scores"]["test"] == expected["test"].scores
    assert body["reported"]["test"] == expected["test"].reported
