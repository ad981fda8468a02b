"""The hostile corpus (hostile.py) through the API and the submission page, in-process:
every case gets its message, none a 500, and nothing is stored for a refused upload.
tests/stack/test_hostile.py sends the same corpus to gunicorn and real workers."""

import html
import json
import re
from functools import cache

import pytest
import time_machine
from django.core.files.storage import storages
from django.urls import reverse

import scoring
from challenge_site.submissions.limits import allowances
from challenge_site.submissions.models import Status, Submission
from datasets.models import Kind
from tests.factories import TEST_PHASE, VALIDATION

from .helpers import ROWS, upload_file
from .hostile import CASES, ORACLE_PROBES, Case, Target, case_ids, oracle_zips

# The most an error report may take in the database (JSON), with some room for quoting.
REPORT_BYTES = 21 * 1024

TARGET = Target(dataset="gaze", val_rows=ROWS["val"], other_dataset="catalysis")


@cache
def corpus_bytes(case_id: str) -> bytes:
    case = next(case for case in CASES if case.id == case_id)
    return case.build(TARGET)


def stored_files(storage_roots) -> list[str]:
    return sorted(
        str(path.relative_to(root))
        for root in storage_roots.values()
        if root.exists()
        for path in root.rglob("*")
        if path.is_file()
    )


def dataset_field(case: Case) -> str:
    return case.dataset_field(TARGET) if case.dataset_field else TARGET.dataset


@pytest.fixture
def both_datasets(gaze, catalysis):
    return gaze, catalysis


@pytest.mark.parametrize("case", CASES, ids=case_ids())
def test_corpus_through_the_api(
    case, api_client, both_datasets, storage_roots, django_capture_on_commit_callbacks
):
    before = stored_files(storage_roots)
    values = {
        "challenge": "demo",
        "dataset": dataset_field(case),
        "method": case.id,
        "file": upload_file(corpus_bytes(case.id)),
    }
    with (
        time_machine.travel(VALIDATION, tick=False),
        django_capture_on_commit_callbacks(execute=True),
    ):
        response = api_client.post("/api/v1/submissions/", values, format="multipart")
    expected = case.expected(TARGET)
    if case.outcome == "refused":
        assert response.status_code == 400, response.content
        assert any(expected in message for message in response.json()[case.field]), response.json()
        assert not Submission.objects.filter(is_baseline=False).exists()
        assert stored_files(storage_roots) == before
    else:
        assert response.status_code == 201, response.content
        submission = Submission.objects.get(pk=response.json()["id"])
        assert submission.status == Status.INVALID
        assert any(expected in line for line in submission.errors), submission.errors[:5]
        assert not submission.scores.exists()
        assert len(json.dumps(submission.errors)) <= REPORT_BYTES


@pytest.mark.parametrize("case", CASES, ids=case_ids())
def test_corpus_through_the_page(
    case, client, participant, both_datasets, storage_roots, django_capture_on_commit_callbacks
):
    before = stored_files(storage_roots)
    values = {
        "dataset": dataset_field(case),
        "method": case.id,
        "authors": "",
        "description": "",
        "file": upload_file(corpus_bytes(case.id)),
    }
    with (
        time_machine.travel(VALIDATION, tick=False),
        django_capture_on_commit_callbacks(execute=True),
    ):
        client.force_login(participant)
        response = client.post(reverse("submit", args=["demo"]), values)
    expected = (case.form_expected or case.expected)(TARGET)
    if case.outcome == "refused":
        assert response.status_code == 400
        assert expected in html.unescape(response.content.decode())
        assert not Submission.objects.filter(is_baseline=False).exists()
        assert stored_files(storage_roots) == before
    else:
        assert response.status_code == 302
        submission = Submission.objects.get(is_baseline=False)
        assert response["Location"] == submission.get_absolute_url()
        assert submission.status == Status.INVALID
        with time_machine.travel(VALIDATION, tick=False):
            page = client.get(submission.get_absolute_url())
        assert expected in html.unescape(page.content.decode())


# --- The oracle: outcomes never depend on a hidden target --------------------------------


def first_test_target(dataset) -> float:
    datafile = dataset.files.get(split="test", kind=Kind.TARGETS)
    with storages[datafile.storage_alias].open(datafile.path, "rb") as handle:
        return float(scoring.read_targets(handle.read(), path="targets")[0])


def observed(client, api_client, participant, challenge, submission_id: int) -> dict:
    """Everything the participant can see of their submission, ids and times masked."""
    submission = Submission.objects.get(pk=submission_id)
    with time_machine.travel(TEST_PHASE, tick=False):
        api = api_client.get(f"/api/v1/submissions/{submission_id}/").json()
        page = client.get(submission.get_absolute_url()).content.decode()
    for key in ("id", "url", "created"):
        api.pop(key)

    def masked(text: str) -> str:
        text = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "CSRF", text)
        text = re.sub(r"/submissions/\d+/", "/submissions/ID/", text)
        return re.sub(r"#\d+", "#ID", text)

    main = re.search(r"<main.*</main>", page, re.DOTALL)
    return {
        "status": submission.status,
        "errors": submission.errors,
        "failure": submission.failure,
        "api": api,
        "page": masked(main.group(0) if main else page),
    }


def used_today(participant, challenge) -> int:
    (allowance,) = allowances(user=participant, challenge=challenge, now=TEST_PHASE)
    return allowance.used_today


@pytest.mark.parametrize("probe", ORACLE_PROBES, ids=[probe.id for probe in ORACLE_PROBES])
def test_oracle_uploads_on_either_side_of_a_hidden_target_look_alike(
    probe, client, api_client, participant, gaze, django_capture_on_commit_callbacks
):
    """Two test-phase uploads that differ only in which side of the first hidden test
    target one value lies give the same status, messages, count against the limits, API
    answer and pages (scoring.md: the outcome never depends on hidden targets)."""
    challenge = gaze.challenge
    assert not challenge.results_published
    above, below = oracle_zips("gaze", ROWS["test"], first_test_target(gaze), probe)
    client.force_login(participant)
    seen = []
    for data in (above, below):
        before = used_today(participant, challenge)
        with (
            time_machine.travel(TEST_PHASE, tick=False),
            django_capture_on_commit_callbacks(execute=True),
        ):
            response = api_client.post(
                "/api/v1/submissions/",
                {
                    "challenge": "demo",
                    "dataset": "gaze",
                    "method": probe.id,
                    "file": upload_file(data),
                },
                format="multipart",
            )
        assert response.status_code == 201, response.content
        pk = response.json()["id"]
        counted = used_today(participant, challenge) - before
        seen.append(
            {"counted": counted, **observed(client, api_client, participant, challenge, pk)}
        )
    for key in seen[0]:
        assert seen[0][key] == seen[1][key], key
    assert seen[0]["status"] in (Status.SCORED, Status.INVALID), seen[0]
