"""Who sees what, on the submission page and in the API, before and after publication."""

import pytest
import time_machine
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from challenge_site.submissions.models import Status
from tests.factories import AFTER, BEFORE_START, TEST_PHASE, make_challenge, make_dataset
from tests.pages import page_text

from .helpers import predictions

VIEWERS = ["anonymous", "other", "owner", "staff"]


@pytest.fixture
def scored(gaze, participant, submit_zip):
    files = predictions("gaze", ("train", "val", "test"))
    submission = submit_zip(participant, gaze.challenge, files, now=TEST_PHASE)
    assert submission.status == Status.SCORED
    return submission


@pytest.fixture
def invalid(gaze, participant, submit_zip):
    files = {"gaze_test_predict.txt": b"1 0 1\n1 0 -1\n"}
    submission = submit_zip(participant, gaze.challenge, files, now=TEST_PHASE)
    assert submission.status == Status.INVALID
    return submission


@pytest.fixture
def viewers(participant, other, staff):
    return {"anonymous": None, "other": other, "owner": participant, "staff": staff}


def page_as(viewer, users, url, *, when=AFTER):
    client = Client()
    with time_machine.travel(when, tick=False):
        if users[viewer] is not None:
            client.force_login(users[viewer])
        return client.get(url)


def api_as(viewer, users, url, *, when=AFTER):
    client = APIClient()
    if users[viewer] is not None:
        token, _ = Token.objects.get_or_create(user=users[viewer])
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    with time_machine.travel(when, tick=False):
        return client.get(url)


@pytest.mark.parametrize("published", [False, True])
@pytest.mark.parametrize("viewer", VIEWERS)
def test_scores_of_the_test_split_wait_for_publication(scored, viewers, viewer, published, gaze):
    gaze.challenge.results_published = published
    with time_machine.travel(AFTER, tick=False):  # results are published after the deadline
        gaze.challenge.save()
    sees_test = published or viewer == "staff"

    response = page_as(viewer, viewers, f"/submissions/{scored.pk}/")
    assert response.status_code == 200
    text = page_text(response)
    assert "Training split" in text and "Validation split" in text
    assert ("Test split: scores hidden until the results are published." in text) is not sees_test
    assert ("Test split nlpd nmse crps" in text) is sees_test
    assert (f"/submissions/{scored.pk}/plots/test.svg" in response.content.decode()) is sees_test
    assert f"/submissions/{scored.pk}/plots/val.svg" in response.content.decode()
    assert ("only you and the organisers can download it" in text) is (viewer in ("owner", "staff"))

    plot = page_as(viewer, viewers, f"/submissions/{scored.pk}/plots/test.svg")
    assert plot.status_code == (200 if sees_test else 404)
    assert page_as(viewer, viewers, f"/submissions/{scored.pk}/plots/val.svg").status_code == 200

    api = api_as(viewer, viewers, f"/api/v1/submissions/{scored.pk}/")
    assert api.status_code == 200
    body = api.json()
    assert set(body["scores"]) == ({"train", "val", "test"} if sees_test else {"train", "val"})
    assert set(body["scores"]["val"]) == {"nlpd", "nmse", "crps", "rauc"}
    assert body["errors"] == [] and body["status"] == "scored"

    download = page_as(viewer, viewers, f"/submissions/{scored.pk}/file.zip")
    assert download.status_code == (200 if viewer in ("owner", "staff") else 404)


@pytest.mark.parametrize("viewer", VIEWERS)
def test_invalid_submissions_and_their_errors_are_private(invalid, viewers, viewer):
    allowed = viewer in ("owner", "staff")
    response = page_as(viewer, viewers, f"/submissions/{invalid.pk}/")
    assert response.status_code == (200 if allowed else 404)
    api = api_as(viewer, viewers, f"/api/v1/submissions/{invalid.pk}/")
    assert api.status_code == (200 if allowed else 404)
    if allowed:
        text = page_text(response)
        for line in invalid.errors:
            assert line in text
        assert api.json()["errors"] == invalid.errors and api.json()["scores"] == {}


def test_queued_submission_is_private_too(gaze, participant, other, staff):
    from challenge_site.submissions import services
    from tests.factories import make_zip

    from .helpers import form_data

    values = form_data(gaze.challenge, make_zip(predictions("gaze", ("test",))))
    submission = services.submit(
        user=participant,
        challenge=gaze.challenge,
        dataset_name=None,
        method="m",
        description="",
        authors="",
        upload=values["file"],
        now=TEST_PHASE,
    )
    users = {"anonymous": None, "other": other, "owner": participant, "staff": staff}
    for viewer, status in (("anonymous", 404), ("other", 404), ("owner", 200), ("staff", 200)):
        assert page_as(viewer, users, f"/submissions/{submission.pk}/").status_code == status


def test_baseline_of_an_upcoming_challenge_is_hidden_until_it_opens(
    db, other, staff, django_capture_on_commit_callbacks
):
    challenge = make_challenge()
    with django_capture_on_commit_callbacks(execute=True):
        make_dataset(challenge, "gaze")
    from challenge_site.submissions.models import Submission

    baseline = Submission.objects.get(is_baseline=True)
    assert baseline.status == Status.SCORED
    users = {"anonymous": None, "other": other, "staff": staff}
    url = f"/submissions/{baseline.pk}/"
    assert page_as("anonymous", users, url, when=BEFORE_START).status_code == 404
    assert page_as("other", users, url, when=BEFORE_START).status_code == 404
    assert page_as("staff", users, url, when=BEFORE_START).status_code == 200
    opened = page_as("anonymous", users, url, when=AFTER)
    assert opened.status_code == 200
    assert "Entry baseline" in page_text(opened)


def test_others_cannot_find_what_does_not_exist(client, db):
    assert client.get("/submissions/999/").status_code == 404
    assert client.get("/submissions/999/plots/val.svg").status_code == 404
    assert client.get("/submissions/999/file.zip").status_code == 404
