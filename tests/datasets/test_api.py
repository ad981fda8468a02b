"""GET /api/v1/challenges/, /api/v1/challenges/<slug>/ and the dataset zip by token."""

import io
import zipfile

import time_machine
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from scoring.upload_check import DatasetFacts
from tests.factories import (
    AFTER,
    BEFORE_START,
    TEST_PHASE,
    VALIDATION,
    dataset_files,
    make_challenge,
    make_dataset,
    make_user,
)


def token_client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def get(client, path, *, when=VALIDATION):
    with time_machine.travel(when, tick=False):
        return client.get(path)


def test_list_shows_open_challenges_not_drafts(gaze):
    make_challenge(slug="secret", title="Draft", opened_at=None)
    response = get(APIClient(), "/api/v1/challenges/")
    assert response.status_code == 200
    [row] = response.json()["results"]
    assert row["slug"] == "demo" and row["title"] == "Demo challenge"
    assert row["phase"] == "validation"
    assert row["deadline"] == "2030-02-08T23:59:59Z"
    assert row["api_url"] == "http://testserver/api/v1/challenges/demo/"


def test_detail_lists_datasets_with_rows_as_far_as_released(gaze):
    body = get(APIClient(), "/api/v1/challenges/demo/").json()
    assert body["accepts"] == {"splits": ["train", "val"], "required": "val"}
    assert body["participation"]["missing"] == [] and body["participation"]["detail"] is None
    [dataset] = body["datasets"]
    # Validation phase: test inputs not yet released, so their count is not shown.
    assert dataset["rows"] == {"train": 6, "val": 4, "test": None}
    assert dataset["task"] == "regression" and dataset["allow_samples"] is True
    assert [f["filename"] for f in dataset["files"]] == [
        "gaze_train_inputs.txt",
        "gaze_train_targets.txt",
        "gaze_val_inputs.txt",
    ]
    assert dataset["zip_url"] == "http://testserver/api/v1/challenges/demo/datasets/gaze.zip"

    in_test = get(APIClient(), "/api/v1/challenges/demo/", when=TEST_PHASE).json()
    assert in_test["datasets"][0]["rows"]["test"] == 5
    assert in_test["accepts"] == {"splits": ["train", "val", "test"], "required": "test"}
    assert get(APIClient(), "/api/v1/challenges/demo/", when=AFTER).json()["accepts"] == {
        "splits": ["train", "val", "test"],
        "required": None,
    }


def test_detail_before_start_names_datasets_only(gaze):
    body = get(APIClient(), "/api/v1/challenges/demo/", when=BEFORE_START).json()
    assert body["phase"] == "upcoming"
    assert body["accepts"] == {"splits": [], "required": None}
    assert body["datasets"] == [{"name": "gaze", "task": "regression"}]
    zipped = get(APIClient(), "/api/v1/challenges/demo/datasets/gaze.zip", when=BEFORE_START)
    assert zipped.status_code == 404


def test_draft_is_404(db):
    make_challenge(slug="secret", opened_at=None)
    assert get(APIClient(), "/api/v1/challenges/secret/").status_code == 404


def test_zip_by_token_holds_the_released_files(gaze):
    client = token_client(make_user("ada"))
    response = get(client, "/api/v1/challenges/demo/datasets/gaze.zip")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    assert sorted(archive.namelist()) == [
        "gaze/README.txt",
        "gaze/gaze_train_inputs.txt",
        "gaze/gaze_train_targets.txt",
        "gaze/gaze_val_inputs.txt",
    ]
    files = dataset_files("gaze", task="regression")
    assert archive.read("gaze/gaze_val_inputs.txt") == files["gaze_val_inputs.txt"]


def test_zip_refused_with_the_reason_until_the_rules_are_accepted(db):
    challenge = make_challenge(require_rules_acceptance=True)
    make_dataset(challenge, "gaze")
    client = token_client(make_user("ada"))
    response = get(client, "/api/v1/challenges/demo/datasets/gaze.zip")
    assert response.status_code == 403
    body = response.json()
    assert body["missing"] == ["rules_acceptance"]
    assert body["detail"] == "Accept the rules of Demo challenge first."
    assert body["join_url"] == "http://testserver/challenges/demo/join/"
    detail = get(client, "/api/v1/challenges/demo/").json()
    assert detail["participation"]["missing"] == ["rules_acceptance"]


def test_a_multiclass_dataset_s_facts_carry_its_classes_and_ensembles(challenge):
    """What a local check of a multiclass prediction file needs (the puc client feeds
    them to scoring.upload_check.DatasetFacts)."""
    make_dataset(challenge, "shapes", task="multiclass", classes=4, allow_ensembles=False)
    make_dataset(challenge, "gaze", task="regression")
    body = get(APIClient(), "/api/v1/challenges/demo/").json()
    shapes, gaze = sorted(body["datasets"], key=lambda d: d["name"] != "shapes")
    assert (shapes["task"], shapes["classes"], shapes["allow_ensembles"]) == (
        "multiclass",
        4,
        False,
    )
    assert (gaze["classes"], gaze["allow_ensembles"]) == (None, True)
    facts = DatasetFacts.from_json(shapes)
    assert facts.options.classes == 4 and facts.options.allow_ensembles is False


def test_a_regression_dataset_s_facts_carry_its_quantile_levels(challenge):
    """The levels a local `python -m scoring evaluate --levels` needs (spec §8)."""
    make_dataset(challenge, "udon", task="regression", quantile_levels=[0.05, 0.5, 0.95])
    make_dataset(challenge, "gaze", task="regression")
    body = get(APIClient(), "/api/v1/challenges/demo/").json()
    levels = {d["name"]: d["quantile_levels"] for d in body["datasets"]}
    assert levels == {"udon": [0.05, 0.5, 0.95], "gaze": None}
