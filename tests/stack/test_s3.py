"""The stack with every file in S3 (a real SeaweedFS, tests/stack/s3.py) and none on disk.

A stack of its own (gunicorn, a Celery worker, beat) whose media and private folders stay
empty: the import writes the datasets to the two buckets, uploads land in the private
bucket, the worker reads them and the targets from S3, and files leave only through the
site's views after their checks. The buckets answer no unsigned request.
"""

import io
import os
import subprocess
import sys
import urllib.error
import urllib.request
import zipfile

import pytest
from django.db import connections
from django.utils.timezone import now

from challenge_site.challenges.models import Challenge, Participant
from challenge_site.submissions.models import SplitResult, Submission
from datasets.models import DatasetFile
from tests.factories import make_zip

from .client import Client
from .conftest import PASSWORD, make_user, orm, wait_final
from .data import (
    DatasetSpec,
    in_validation,
    prediction_lines,
    prediction_zip,
    write_challenge,
)
from .harness import REPO, Stack
from .s3 import PRIVATE_BUCKET, PUBLIC_BUCKET

SLUG = "s3"
DATASETS = {
    "waves": DatasetSpec("regression", (200, 100, 100), dim=2, seed=11),
    "flips": DatasetSpec("classification", (200, 100, 100), dim=2, seed=12),
}
PUBLIC_PARTS = {("train", "inputs"), ("train", "targets"), ("val", "inputs")}
LOCAL_FOLDERS = ("media/", "private/", "tmp/")


@pytest.fixture(scope="module")
def s3_stack(seaweed):
    stack = Stack(scoring_timeout=30, sweep_interval=5, extra_env=seaweed.storage_env())
    # While this module runs, this process's ORM (conftest's orm, make_user) and Celery's
    # pings go to this stack's database and broker instead of the session stack's (which
    # Stack.setup_django put in the settings and the environment: Celery prefers
    # CELERY_BROKER_URL from there to the broker it is given).
    database = connections["default"]
    session = database.settings_dict["NAME"], os.environ.get("CELERY_BROKER_URL")
    database.close()
    database.settings_dict["NAME"] = stack.db_name
    os.environ["CELERY_BROKER_URL"] = stack.broker_url
    try:
        stack.start()
        yield stack
    finally:
        database.close()
        stack.stop(keep_logs_in=REPO / "test-output" / "stack-logs" / "s3")
        database.settings_dict["NAME"] = session[0]
        if session[1] is None:
            os.environ.pop("CELERY_BROKER_URL", None)
        else:
            os.environ["CELERY_BROKER_URL"] = session[1]


def user(username: str, *, approved: bool = True) -> dict:
    """A user with a token; ``approved``: a participant the organisers approved."""
    account, token = make_user(username)
    if approved:
        orm(
            lambda: Participant.objects.create(
                challenge=Challenge.objects.get(slug=SLUG), user=account, approved_at=now()
            )
        )
    return {"username": username, "token": token}


@pytest.fixture(scope="module")
def challenge(s3_stack):
    spec = in_validation(SLUG, "S3 challenge", DATASETS)
    folder = s3_stack.root / "import" / SLUG
    files = write_challenge(spec, folder)
    s3_stack.manage("import_challenge", str(folder))
    # Downloads and uploads wait for an organiser's approval (the permission checked).
    orm(lambda: Challenge.objects.filter(slug=SLUG).update(require_approval=True))
    baselines = orm(
        lambda: list(
            Submission.objects.filter(is_baseline=True, dataset__challenge__slug=SLUG).values_list(
                "pk", flat=True
            )
        )
    )
    assert len(baselines) == len(DATASETS)
    # The baselines are scored by the worker, which reads every target file from S3.
    assert set(wait_final(s3_stack, baselines).values()) == {"scored"}
    return files


@pytest.fixture(scope="module")
def scored(s3_stack, challenge):
    """Ada's upload through the API, scored: (submission id, the zip's bytes)."""
    ada = user("ada")
    data = prediction_zip("waves", DATASETS["waves"], ("train", "val"))
    response = Client(s3_stack.base_url, token=ada["token"]).api_submit(SLUG, data)
    assert response.status == 201, response
    pk = response.json()["id"]
    assert wait_final(s3_stack, [pk]) == {pk: "scored"}
    return {"pk": pk, "data": data, "owner": ada}


def local_files(stack) -> set[str]:
    return {name for name in stack.files() if name.startswith(LOCAL_FOLDERS)}


def anonymous_status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def test_dataset_files_and_uploads_are_in_the_buckets_and_not_on_disk(
    s3_stack, seaweed, challenge, scored
):
    stored = {
        (f.dataset.name, f.split, f.kind): (f.storage_alias, f.path)
        for f in orm(lambda: list(DatasetFile.objects.select_related("dataset")))
    }
    assert len(stored) == 6 * len(DATASETS)
    public, private = set(seaweed.objects(PUBLIC_BUCKET)), set(seaweed.objects(PRIVATE_BUCKET))
    for (name, split, kind), (storage, path) in stored.items():
        # Released from the start: the default storage; everything else (validation and
        # test targets, unreleased test inputs) the private one.
        expected = "default" if (split, kind) in PUBLIC_PARTS else "private"
        assert storage == expected, (name, split, kind)
        assert path in (public if expected == "default" else private), path
    assert len(public) == len(PUBLIC_PARTS) * len(DATASETS)
    submission = orm(lambda: Submission.objects.get(pk=scored["pk"]))
    assert submission.file.name in private
    # The per-example terms the worker wrote went to the private bucket too.
    terms = orm(
        lambda: list(
            SplitResult.objects.filter(submission_id=scored["pk"]).values_list("terms", flat=True)
        )
    )
    names = [name for name in terms if name]
    assert names and set(names) <= private
    assert local_files(s3_stack) == set()


def test_buckets_answer_no_unsigned_request(seaweed, challenge, scored):
    keys = seaweed.objects()
    assert any(key.startswith(f"{PRIVATE_BUCKET}/submissions/") for key in keys)
    assert any(key.startswith(f"{PUBLIC_BUCKET}/datasets/") for key in keys)
    for key in keys:
        assert anonymous_status(f"{seaweed.endpoint_url}/{key}") == 403, key
    for bucket in (PUBLIC_BUCKET, PRIVATE_BUCKET):  # nor a listing
        assert anonymous_status(f"{seaweed.endpoint_url}/{bucket}/") == 403


def test_own_submission_downloads_through_the_site_only(s3_stack, scored):
    path = f"/submissions/{scored['pk']}/file.zip"
    owner = Client(s3_stack.base_url)
    owner.login(scored["owner"]["username"], PASSWORD)
    response = owner.get(path)
    assert response.status == 200 and response.body == scored["data"]
    assert response.headers["Content-Length"] == str(len(scored["data"]))
    user("eve", approved=False)
    other = Client(s3_stack.base_url)
    other.login("eve", PASSWORD)
    assert other.get(path).status == 404
    assert Client(s3_stack.base_url).get(path).status == 404


def test_a_large_upload_is_spooled_to_temporary_files_that_go(s3_stack, seaweed, challenge):
    """A zip above the 2.5 MB held in memory: the upload, the worker's read and the
    download each spool the rest to a temporary file, gone once they are done."""
    spec = DATASETS["flips"]
    rows = dict(zip(("train", "val", "test"), spec.sizes, strict=True))
    data = make_zip(
        {
            "flips_val_predict.txt": prediction_lines(spec.task, rows["val"]),
            ".padding": os.urandom(3_000_000),  # a dot-file: ignored by the checks
        },
        compression=zipfile.ZIP_STORED,
    )
    owner = user("lena")
    response = Client(s3_stack.base_url, token=owner["token"]).api_submit(SLUG, data)
    assert response.status == 201, response
    pk = response.json()["id"]
    assert wait_final(s3_stack, [pk]) == {pk: "scored"}
    name = orm(lambda: Submission.objects.get(pk=pk).file.name)
    stored = seaweed.client().head_object(Bucket=PRIVATE_BUCKET, Key=name)
    assert stored["ContentLength"] == len(data) > 2_621_440
    site = Client(s3_stack.base_url)
    site.login("lena", PASSWORD)
    download = site.get(f"/submissions/{pk}/file.zip")
    assert download.status == 200 and download.body == data
    assert local_files(s3_stack) == set()


def test_released_dataset_files_download_and_test_files_never(s3_stack, challenge):
    path = f"/api/v1/challenges/{SLUG}/datasets/waves.zip"
    reader = user("rita")
    response = Client(s3_stack.base_url, token=reader["token"]).get(path)
    assert response.status == 200, response
    with zipfile.ZipFile(io.BytesIO(response.body)) as archive:
        files = {
            name.removeprefix("waves/"): archive.read(name)
            for name in archive.namelist()
            if not name.endswith("README.txt")
        }
    released = {
        f"waves_{split}_{kind}.txt": challenge["waves"][f"waves_{split}_{kind}.txt"]
        for split, kind in PUBLIC_PARTS
    }
    assert files == released
    assert not any("_test_" in name for name in files)
    # Not approved, or anonymous: refused, and not a byte of the files.
    for token in (user("zed", approved=False)["token"], None):
        refused = Client(s3_stack.base_url, token=token).get(path)
        assert refused.status in (401, 403) and b"PK\x03\x04" not in refused.body, refused
    page = Client(s3_stack.base_url).get(f"/challenges/{SLUG}/datasets/waves.zip")
    assert page.status != 200 and b"PK\x03\x04" not in page.body


def test_ensure_buckets_creates_the_missing_buckets(seaweed, tmp_path):
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DJANGO_", "DATABASE_URL", "CELERY_", "STORAGE", "PRIVATE_"))
    }
    env |= seaweed.storage_env() | {
        "DJANGO_SETTINGS_MODULE": "challenge_site.settings",
        "VAR_DIR": str(tmp_path),
        "S3_BUCKET": "fresh-files",
    }

    def run():
        result = subprocess.run(
            [sys.executable, "manage.py", "ensure_buckets", "--wait", "10"],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        return result.stdout.splitlines()

    assert run() == [
        "default: bucket fresh-files created",
        f"private: bucket {PRIVATE_BUCKET} exists",
    ]
    buckets = {b["Name"] for b in seaweed.client().list_buckets()["Buckets"]}
    assert "fresh-files" in buckets
    assert run()[0] == "default: bucket fresh-files exists"
