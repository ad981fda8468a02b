"""Over a submission limit, a file that breaks the format gets its line errors (400), and
only a valid file the limit's refusal (429): the check costs the limit nothing, stores
nothing and reads no target. Its lines are the scoring worker's, and a participant's
machine gets the same ones from scoring.upload_check with the challenge API's facts."""

from datetime import datetime

import pytest
import time_machine
from django.urls import reverse
from rest_framework.test import APIClient

import scoring
from challenge_site.submissions import evaluation
from challenge_site.submissions.models import Status, Submission
from scoring.upload_check import DatasetFacts, check_upload
from tests.factories import TEST_PHASE, VALIDATION, make_zip

from .helpers import form_data, gaussian_lines, upload_file

URL = "/api/v1/submissions/"
COMMAS = b"1,0.5,1\n" * 12  # 12 lines with commas where the dataset has 4 rows
COMMAS_REPORT_START = [
    "gaze_val_predict.txt: 12 lines use commas: separate numbers with spaces or tabs",
    "gaze_val_predict.txt:1: expected numbers separated by spaces or tabs, found '1,0.5,1'",
]


def post(client, data: bytes, *, when=VALIDATION, **fields):
    values = {"challenge": "demo", "method": "m", "file": upload_file(data)}
    values.update(fields)
    with time_machine.travel(when, tick=False):
        return client.post(URL, values, format="multipart")


@pytest.fixture
def at_the_daily_limit(api_client, gaze, django_capture_on_commit_callbacks):
    """One valid validation entry made: the daily limit of one is reached."""
    gaze.challenge.val_daily_limit = 1
    gaze.challenge.save()
    with django_capture_on_commit_callbacks(execute=True):
        made = post(api_client, make_zip({"gaze_val_predict.txt": gaussian_lines(4)}))
    assert made.status_code == 201
    return Submission.objects.get(pk=made.json()["id"])


@pytest.fixture
def no_target_read(monkeypatch):
    """Fails the test if anything reads a target file."""

    def refuse(*args, **kwargs):
        raise AssertionError("a target was read")

    monkeypatch.setattr(evaluation, "read_dataset_targets", refuse)
    monkeypatch.setattr(scoring, "read_targets", refuse)


def stored_zips(storage_roots) -> list:
    return sorted(p for p in storage_roots["private"].rglob("*.zip"))


def test_an_invalid_file_at_the_limit_gets_its_line_errors_and_nothing_is_stored(
    api_client, at_the_daily_limit, storage_roots, no_target_read
):
    zips = stored_zips(storage_roots)
    response = post(api_client, make_zip({"gaze_val_predict.txt": COMMAS}))
    assert response.status_code == 400
    lines = response.json()["file"]
    assert lines[:2] == COMMAS_REPORT_START
    assert (
        lines[-1]
        == "gaze_val_predict.txt:12: expected numbers separated by spaces or tabs, found '1,0.5,1'"
    )
    assert "gaze_val_predict.txt:5: expected 4 rows, one per target, found 12" in lines
    assert list(Submission.objects.filter(is_baseline=False)) == [at_the_daily_limit]
    assert stored_zips(storage_roots) == zips


def test_a_valid_file_at_the_limit_is_refused_with_429(api_client, at_the_daily_limit):
    response = post(api_client, make_zip({"gaze_val_predict.txt": gaussian_lines(4, seed=2)}))
    assert response.status_code == 429
    assert response.json()["detail"].startswith("you have made 1 submission to gaze today")
    assert response["Retry-After"]
    assert Submission.objects.filter(is_baseline=False).count() == 1


def test_a_misnamed_file_at_the_limit_is_still_refused_as_misnamed(api_client, at_the_daily_limit):
    """The zip's structure is checked before the limit, as always."""
    response = post(api_client, make_zip({"Gaze_Validation_Predictions.csv": COMMAS}))
    assert response.status_code == 400
    assert response.json() == {
        "file": [
            "Gaze_Validation_Predictions.csv: unexpected file name; did you mean "
            "gaze_val_predict.txt?"
        ]
    }


def test_over_the_total_limit_an_invalid_test_file_gets_its_line_errors(
    api_client, gaze, django_capture_on_commit_callbacks, no_target_read
):
    """The test split's targets are hidden: the check uses the public row count only."""
    challenge = gaze.challenge
    challenge.test_daily_limit, challenge.test_total_limit = None, 1
    challenge.save()
    with django_capture_on_commit_callbacks(execute=False):  # (scoring would read targets)
        assert (
            post(
                api_client, make_zip({"gaze_test_predict.txt": gaussian_lines(5)}), when=TEST_PHASE
            ).status_code
            == 201
        )
    short = make_zip({"gaze_test_predict.txt": gaussian_lines(4)})
    response = post(api_client, short, when=TEST_PHASE)
    assert response.status_code == 400
    assert response.json() == {
        "file": ["gaze_test_predict.txt:5: expected 5 rows, one per target, found 4"]
    }
    valid = make_zip({"gaze_test_predict.txt": gaussian_lines(5, seed=3)})
    response = post(api_client, valid, when=TEST_PHASE)
    assert response.status_code == 400  # the total limit: no retry helps
    assert response.json() == {
        "detail": "you have made 1 submission to gaze in the test phase, its overall limit"
    }


def test_the_form_at_the_limit_shows_the_line_errors(client, participant, at_the_daily_limit):
    challenge = at_the_daily_limit.dataset.challenge
    url = reverse("submit", args=[challenge.slug])
    with time_machine.travel(VALIDATION, tick=False):
        client.force_login(participant)
        response = client.post(
            url, form_data(challenge, make_zip({"gaze_val_predict.txt": b"55\n" * 4}))
        )
        assert response.status_code == 400
        page = response.content.decode()
        # In the report's list, whose long lines wrap (site.css .errorlist.report).
        assert '<ul class="errorlist report"' in page
        assert (
            "gaze_val_predict.txt:1: expected a row type flag of 0 (quantiles), 1 (Gaussian) or 2 (sample) first, found 55"
            in page
        )
        assert "the daily limit" not in page
        response = client.post(
            url, form_data(challenge, make_zip({"gaze_val_predict.txt": gaussian_lines(4)}))
        )
        assert response.status_code == 400
        assert "the daily limit in the validation phase" in response.content.decode()
    assert Submission.objects.filter(is_baseline=False).count() == 1


def test_the_limit_check_gives_the_workers_report_and_the_local_check_too(
    api_client, gaze, participant, submit_zip, at_the_daily_limit
):
    """The same zip: stored as invalid by the worker (below the limit, another user),
    refused at the limit, and checked on a participant's machine with the facts of
    GET /api/v1/challenges/<slug>/ — three times the same lines."""
    from tests.factories import make_user

    files = {"gaze_val_predict.txt": COMMAS + b"1 0 -1\n" * 3}
    other = make_user("hedy")
    stored = submit_zip(other, gaze.challenge, files, now=VALIDATION)
    assert stored.status == Status.INVALID
    refused = post(api_client, make_zip(files)).json()["file"]
    assert refused == stored.errors
    with time_machine.travel(VALIDATION, tick=False):
        challenge = api_client.get("/api/v1/challenges/demo/").json()
    facts = [DatasetFacts.from_json(d) for d in challenge["datasets"]]
    test_start = datetime.fromisoformat(challenge["test_start"].replace("Z", "+00:00"))
    import io

    local = check_upload(
        io.BytesIO(make_zip(files)),
        datasets=facts,
        dataset="gaze",
        phase=challenge["phase"],
        test_start=test_start,
    )
    assert local == stored.errors
    assert local[:2] == COMMAS_REPORT_START


def test_bearer_and_token_reach_the_same_limit(gaze, participant, at_the_daily_limit):
    from rest_framework.authtoken.models import Token

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {Token.objects.get(user=participant).key}")
    assert post(client, make_zip({"gaze_val_predict.txt": COMMAS})).status_code == 400
    assert post(client, make_zip({"gaze_val_predict.txt": gaussian_lines(4)})).status_code == 429


def test_the_checks_over_a_limit_have_a_daily_share(api_client, at_the_daily_limit, settings):
    """Each costs the web process up to SUBMISSION_LIMIT_CHECK_SECONDS and is not stored:
    past SUBMISSION_MAX_REJECTED_PER_DAY of them, the limit answers unchecked."""
    settings.SUBMISSION_MAX_REJECTED_PER_DAY = 2
    bad = make_zip({"gaze_val_predict.txt": COMMAS})
    assert [post(api_client, bad).status_code for _ in range(3)] == [400, 400, 429]
    # The next UTC day the share is whole again (and the daily limit too: a new entry).
    next_day = datetime(2030, 1, 21, 12, 0, tzinfo=VALIDATION.tzinfo)
    assert post(api_client, bad, when=next_day).status_code == 201
