"""submissions.uploads: an oversized upload is refused while it arrives (drained, never
stored), and files sent in any other field are dropped."""

import random
import zipfile

import pytest
import time_machine
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from challenge_site.submissions.models import Submission
from challenge_site.submissions.uploads import limit_upload_size, oversized, too_large_message
from tests.factories import VALIDATION, make_zip
from tests.pages import page_text

from .helpers import form_data

SUBMIT = reverse("submit", args=["demo"])


@pytest.fixture
def logged_in(client, participant):
    with time_machine.travel(VALIDATION, tick=False):
        client.force_login(participant)
        yield client


def upload_request(rf, files: dict[str, bytes]):
    request = rf.post(
        "/x/", {name: SimpleUploadedFile(f"{name}.zip", data) for name, data in files.items()}
    )
    limit_upload_size(request)
    limit_upload_size(request)  # once is enough: a second call adds no second handler
    return request


def test_the_file_field_is_kept_within_the_limit_and_other_files_are_dropped(rf, settings):
    settings.SUBMISSION_MAX_UPLOAD_BYTES = 1000
    request = upload_request(rf, {"file": b"PK" * 100, "junk": b"x" * 5000})
    assert len(request.upload_handlers) == 3  # the size limit first, then Django's two
    assert request.FILES["file"].read() == b"PK" * 100
    assert request.FILES["junk"].read() == b""  # read and dropped, whatever its size
    assert not oversized(request, "file")


def test_a_file_over_the_limit_is_skipped_and_named(rf, settings):
    settings.SUBMISSION_MAX_UPLOAD_BYTES = 1000
    request = upload_request(rf, {"file": b"x" * 5000})
    assert "file" not in request.FILES and oversized(request, "file")
    assert too_large_message() == ("the file is larger than 0.0 MB, the limit for a submission zip")


def test_oversized_upload_is_refused_while_it_arrives(logged_in, gaze, settings, storage_roots):
    settings.SUBMISSION_MAX_UPLOAD_BYTES = 200_000
    noise = random.Random(1).randbytes(300_000)
    data = make_zip({"gaze_val_predict.txt": noise}, compression=zipfile.ZIP_STORED)
    response = logged_in.post(SUBMIT, form_data(gaze.challenge, data))
    assert response.status_code == 400
    assert "the file is larger than 0.2 MB, the limit for a submission zip" in page_text(response)
    assert not Submission.objects.exists()
    assert not (storage_roots["private"] / "submissions").exists()
