"""Registration options enforced: dataset downloads, the upload page and the API refuse
users who may not take part yet, and say what is missing; organisers always pass."""

import io
import zipfile

import pytest
import time_machine
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from challenge_site.challenges.models import Participant
from challenge_site.submissions.models import Submission
from tests.factories import VALIDATION, make_challenge, make_dataset, make_user, make_zip
from tests.pages import page_text
from tests.submissions.helpers import form_data, predictions, upload_file

ZIP = reverse("dataset_zip", args=["demo", "gaze"])
DATASET = reverse("dataset_detail", args=["demo", "gaze"])
SUBMIT = reverse("submit", args=["demo"])
JOIN = reverse("challenge_join", args=["demo"])
API = reverse("api_submission_create")

OPTIONS = {
    "none": {},
    "rules": {"require_rules_acceptance": True},
    "approval": {"require_approval": True},
    "both": {"require_rules_acceptance": True, "require_approval": True},
}


@pytest.fixture
def gaze(challenge):
    return make_dataset(challenge, "gaze")


@pytest.fixture
def ada(db):
    return make_user("ada")


def _options(challenge, name):
    for field, value in OPTIONS[name].items():
        setattr(challenge, field, value)
    challenge.save()


def _participant(challenge, user, *, accepted=False, approved=False):
    return Participant.objects.create(
        challenge=challenge,
        user=user,
        joined=VALIDATION,
        rules_accepted_at=VALIDATION if accepted else None,
        approved_at=VALIDATION if approved else None,
    )


def _client(user=None) -> Client:
    """Logged in at VALIDATION (a session opened today would have expired by then)."""
    client = Client()
    if user is not None:
        with time_machine.travel(VALIDATION, tick=False):
            client.force_login(user)
    return client


def _get(client, url):
    with time_machine.travel(VALIDATION, tick=False):
        return client.get(url)


def _is_zip(response) -> bool:
    if response.status_code != 200:
        return False
    data = b"".join(response.streaming_content)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return "gaze/gaze_train_inputs.txt" in archive.namelist()


# --- Downloads ------------------------------------------------------------------------


def test_without_options_downloads_stay_public(gaze, ada):
    assert _is_zip(_get(_client(), ZIP))  # anonymous, as before
    assert _is_zip(_get(_client(ada), ZIP))  # logged in, not joined


@pytest.mark.parametrize("options", ["rules", "approval", "both"])
def test_with_an_option_anonymous_downloads_go_to_the_login_page(gaze, options):
    _options(gaze.challenge, options)
    response = _get(_client(), ZIP)
    assert response.status_code == 302
    assert response["Location"] == f"/accounts/login/?next={ZIP}"


@pytest.mark.parametrize(
    ("options", "standing", "allowed", "reason"),
    [
        ("rules", None, False, "Accept the rules of Demo challenge first."),
        ("rules", {}, False, "Accept the rules of Demo challenge first."),
        ("rules", {"accepted": True}, True, None),
        (
            "approval",
            None,
            False,
            "Ask to join Demo challenge first: the organisers approve each participant.",
        ),
        (
            "approval",
            {"accepted": True},
            False,
            "Your participation in Demo challenge is waiting for the organisers' approval.",
        ),
        ("approval", {"approved": True}, True, None),
        (
            "both",
            {"approved": True},
            False,
            "Accept the rules of Demo challenge first.",
        ),
        (
            "both",
            {"accepted": True},
            False,
            "Your participation in Demo challenge is waiting for the organisers' approval.",
        ),
        ("both", {"accepted": True, "approved": True}, True, None),
    ],
)
def test_downloads_need_what_the_options_ask(gaze, ada, options, standing, allowed, reason):
    _options(gaze.challenge, options)
    if standing is not None:
        _participant(gaze.challenge, ada, **standing)
    response = _get(_client(ada), ZIP)
    if allowed:
        assert _is_zip(response)
        return
    assert response.status_code == 403
    assert response["Content-Type"].startswith("text/html")
    assert reason in page_text(response)
    assert f'href="{JOIN}?next=%2Fchallenges%2Fdemo%2Fdatasets%2Fgaze%2F"' in (
        response.content.decode()
    )


@pytest.mark.parametrize("options", ["rules", "approval", "both"])
def test_organisers_download_without_joining(gaze, organiser, staff, options):
    _options(gaze.challenge, options)
    assert _is_zip(_get(_client(organiser), ZIP))
    assert _is_zip(_get(_client(staff), ZIP))


def test_hidden_datasets_stay_404_whatever_the_options(db, ada):
    draft = make_challenge(opened_at=None, require_rules_acceptance=True)
    make_dataset(draft, "gaze")
    assert _get(_client(ada), ZIP).status_code == 404
    assert _get(_client(), ZIP).status_code == 404


def test_joining_from_the_refusal_brings_the_user_back_to_the_dataset(gaze, ada):
    _options(gaze.challenge, "rules")
    client = _client(ada)
    refused = _get(client, ZIP)
    assert refused.status_code == 403
    with time_machine.travel(VALIDATION, tick=False):
        response = client.post(f"{JOIN}?next={DATASET}", {"accept_rules": "on", "next": DATASET})
    assert response.status_code == 302 and response["Location"] == DATASET
    assert _is_zip(_get(client, ZIP))


# --- The upload page ------------------------------------------------------------------


def _upload(client, challenge):
    data = form_data(challenge, make_zip(predictions("gaze")))
    with time_machine.travel(VALIDATION, tick=False):
        return client.post(SUBMIT, data)


@pytest.mark.parametrize("options", ["rules", "approval", "both"])
def test_upload_page_refuses_who_may_not_take_part(gaze, ada, options):
    _options(gaze.challenge, options)
    client = _client(ada)
    page = _get(client, SUBMIT)
    assert page.status_code == 403
    assert "Join Demo challenge first" in page_text(page)
    assert f'href="{JOIN}?next=%2Fchallenges%2Fdemo%2Fsubmit%2F"' in page.content.decode()
    assert 'enctype="multipart/form-data"' not in page.content.decode()
    response = _upload(client, gaze.challenge)
    assert response.status_code == 403
    assert not Submission.objects.exists()


@pytest.mark.parametrize(
    ("options", "standing"),
    [
        ("none", None),
        ("rules", {"accepted": True}),
        ("approval", {"approved": True}),
        ("both", {"accepted": True, "approved": True}),
    ],
)
def test_upload_page_accepts_who_may(gaze, ada, options, standing):
    _options(gaze.challenge, options)
    if standing is not None:
        _participant(gaze.challenge, ada, **standing)
    client = _client(ada)
    assert _get(client, SUBMIT).status_code == 200
    response = _upload(client, gaze.challenge)
    submission = Submission.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("submission_detail", args=[submission.pk])


def test_organisers_upload_without_joining(gaze, organiser):
    _options(gaze.challenge, "both")
    assert _upload(_client(organiser), gaze.challenge).status_code == 302
    assert Submission.objects.get().user == organiser


def test_upload_page_still_needs_a_login_first(gaze):
    _options(gaze.challenge, "both")
    response = _get(_client(), SUBMIT)
    assert response.status_code == 302
    assert response["Location"] == f"/accounts/login/?next={SUBMIT}"


# --- The API --------------------------------------------------------------------------


def _api(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def _api_post(client, **fields):
    values = {
        "challenge": "demo",
        "method": "Curl GP",
        "file": upload_file(make_zip(predictions("gaze"))),
    }
    values.update(fields)
    with time_machine.travel(VALIDATION, tick=False):
        return client.post(API, values, format="multipart")


@pytest.mark.parametrize(
    ("options", "standing", "missing", "detail"),
    [
        ("rules", None, ["rules_acceptance"], "Accept the rules of Demo challenge first."),
        (
            "approval",
            {"accepted": True},
            ["approval"],
            "Your participation in Demo challenge is waiting for the organisers' approval.",
        ),
        (
            "both",
            None,
            ["rules_acceptance", "approval"],
            "Accept the rules of Demo challenge first; the organisers then approve "
            "your participation.",
        ),
    ],
)
def test_api_refuses_with_403_naming_what_is_missing(gaze, ada, options, standing, missing, detail):
    _options(gaze.challenge, options)
    if standing is not None:
        _participant(gaze.challenge, ada, **standing)
    response = _api_post(_api(ada))
    assert response.status_code == 403
    assert response.json() == {
        "detail": detail,
        "missing": missing,
        "join_url": f"http://testserver{JOIN}",
    }
    assert not Submission.objects.exists()


@pytest.mark.parametrize(
    ("options", "standing"),
    [
        ("none", None),
        ("rules", {"accepted": True}),
        ("approval", {"approved": True}),
        ("both", {"accepted": True, "approved": True}),
    ],
)
def test_api_accepts_who_may(gaze, ada, options, standing):
    _options(gaze.challenge, options)
    if standing is not None:
        _participant(gaze.challenge, ada, **standing)
    assert _api_post(_api(ada)).status_code == 201


def test_api_organisers_submit_without_joining(gaze, organiser):
    _options(gaze.challenge, "both")
    assert _api_post(_api(organiser)).status_code == 201


def test_api_unknown_challenge_is_still_400(gaze, ada):
    _options(gaze.challenge, "both")
    response = _api_post(_api(ada), challenge="nope")
    assert response.status_code == 400
    assert response.json() == {"challenge": ["no challenge 'nope'"]}


@pytest.mark.django_db
def test_pages_show_what_is_missing_instead_of_buttons_that_would_be_refused():
    """With rules to accept, a participant who has not accepted them sees why, and the
    way to the join page, where the Submit and Download buttons would be; once accepted,
    the buttons."""
    from challenge_site.challenges.participation import join

    challenge = make_challenge(require_rules_acceptance=True)
    make_dataset(challenge, "gaze")
    ann = make_user("ann")
    with time_machine.travel(VALIDATION, tick=False):
        client = Client()
        client.force_login(ann)
        for url in (
            reverse("challenge_detail", args=["demo"]),
            reverse("dataset_detail", args=["demo", "gaze"]),
        ):
            page = client.get(url).content.decode()
            assert "Accept the rules of Demo challenge first." in page, url
            assert "/challenges/demo/join/?next=" in page
            assert "Submit predictions" not in page and "Download gaze.zip" not in page
        join(challenge=challenge, user=ann, accept_rules=True, now=VALIDATION)
        assert (
            "Submit predictions"
            in client.get(reverse("challenge_detail", args=["demo"])).content.decode()
        )
        page = client.get(reverse("dataset_detail", args=["demo", "gaze"])).content.decode()
        assert "Download gaze.zip" in page and "participation-needed" not in page
