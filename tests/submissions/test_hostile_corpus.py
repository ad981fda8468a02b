"""The hostile corpus (hostile.py) through the API and the submission page, in-process:
every case gets its message, none a 500, and nothing is stored for a refused upload.
tests/stack/test_hostile.py sends the same corpus to gunicorn and real workers."""

import html
from functools import cache

import pytest
import time_machine
from django.urls import reverse

from challenge_site.submissions.models import Status, Submission

from .helpers import ROWS, VALIDATION, upload_file
from .hostile import CASES, Case, Target, case_ids

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
