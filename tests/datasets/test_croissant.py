"""The Croissant description of a dataset (datasets/croissant.py): validated by mlcroissant,
the training records loaded through it from a live server, and nothing unreleased in it."""

import hashlib
import json
import re
from datetime import UTC, datetime, timedelta

import mlcroissant as mlc
import numpy as np
import pytest
import requests
import time_machine
from django.urls import reverse
from django.utils import timezone
from mlcroissant._src.core import constants as mlc_constants

from datasets import croissant
from datasets.models import DatasetFile
from tests.factories import make_challenge, make_dataset, make_user

VALIDATION = datetime(2030, 1, 20, tzinfo=UTC)
TEST_PHASE = datetime(2030, 2, 3, tzinfo=UTC)
AFTER = datetime(2030, 3, 1, tzinfo=UTC)

SCRIPT = re.compile(r'<script type="application/ld\+json">(.*?)</script>', re.DOTALL)


def _json_url(name="gaze"):
    return reverse("dataset_croissant", args=["demo", name])


def _page_url(name="gaze"):
    return reverse("dataset_detail", args=["demo", name])


def _validated(document: dict) -> mlc.Dataset:
    """mlcroissant's reading of ``document``: its ValidationError fails the test, and so
    does any warning it records."""
    dataset = mlc.Dataset(jsonld=document)
    issues = dataset.metadata.ctx.issues
    assert not issues.errors and not issues.warnings, issues.report()
    return dataset


def _stored(storage_roots, datafile) -> bytes:
    return (storage_roots[datafile.storage_alias] / datafile.path).read_bytes()


@pytest.fixture
def croissant_cache(tmp_path, monkeypatch):
    """mlcroissant keeps downloads under a name made of the URL: each test downloads
    into its own folder, so that a live server's port reused by the next test cannot
    hand it the previous test's file."""
    monkeypatch.setattr(mlc_constants, "DOWNLOAD_PATH", tmp_path / "croissant" / "download")
    monkeypatch.setattr(mlc_constants, "EXTRACT_PATH", tmp_path / "croissant" / "extract")


@pytest.mark.parametrize(
    ("task", "options", "target_type"),
    [
        ("regression", {}, "sc:Float"),
        ("classification", {}, "sc:Integer"),
        ("multiclass", {"classes": 3}, "sc:Integer"),
    ],
)
def test_mlcroissant_validates_the_document_and_loads_the_training_records(
    live_server, transactional_db, storage_roots, croissant_cache, task, options, target_type
):
    now = timezone.now()
    challenge = make_challenge(
        start=now - timedelta(days=5),
        test_start=now + timedelta(days=5),
        deadline=now + timedelta(days=10),
        opened_at=now - timedelta(days=6),
    )
    dataset = make_dataset(challenge, "gaze", task=task, sizes=(7, 4, 5), dim=3, **options)
    answer = requests.get(live_server.url + _json_url(), timeout=10)
    assert answer.status_code == 200
    assert answer.headers["Content-Type"] == "application/ld+json"
    document = answer.json()
    ds = _validated(document)
    record_sets = {r["@id"]: r for r in document["recordSet"]}
    assert record_sets["train_targets"]["field"][0]["dataType"] == target_type

    for kind in ("inputs", "targets"):
        datafile = dataset.files.get(split="train", kind=kind)
        expected = np.loadtxt(_stored(storage_roots, datafile).decode().splitlines(), ndmin=2)
        records = list(ds.records(record_set=f"train_{kind}"))
        fields = [f["@id"] for f in record_sets[f"train_{kind}"]["field"]]
        loaded = np.array([[record[field] for field in fields] for record in records])
        assert loaded.shape == expected.shape == (7, 3 if kind == "inputs" else 1)
        np.testing.assert_array_equal(loaded, expected)


def test_whitespace_runs_tabs_and_wide_files_load_too(
    live_server, transactional_db, storage_roots, croissant_cache, monkeypatch
):
    """Numbers separated by runs of blanks and tabs, leading blanks and CRLF (spec §1)
    load column by column; a file wider than MAX_COLUMN_FIELDS is one text field a line."""
    now = timezone.now()
    challenge = make_challenge(
        start=now - timedelta(days=5),
        test_start=now + timedelta(days=5),
        deadline=now + timedelta(days=10),
        opened_at=now - timedelta(days=6),
    )
    dataset = make_dataset(challenge, "gaze", sizes=(5, 4, 5), dim=3)
    inputs = dataset.files.get(split="train", kind="inputs")
    odd = b"  1.5\t -2 3e-1\r\n4  5\t\t6\r\n+7 8.25 9\n0 0 0\n-1 -1 -1\n\n"
    (storage_roots[inputs.storage_alias] / inputs.path).write_bytes(odd)
    DatasetFile.objects.filter(pk=inputs.pk).update(
        sha256=hashlib.sha256(odd).hexdigest(), size=len(odd)
    )
    document = requests.get(live_server.url + _json_url(), timeout=10).json()
    records = list(_validated(document).records(record_set="train_inputs"))
    loaded = [[r[f"train_inputs/x{i}"] for i in (1, 2, 3)] for r in records]
    assert loaded == [[1.5, -2, 0.3], [4, 5, 6], [7, 8.25, 9], [0, 0, 0], [-1, -1, -1]]

    monkeypatch.setattr(croissant, "MAX_COLUMN_FIELDS", 2)
    document = requests.get(live_server.url + _json_url(), timeout=10).json()
    inputs_set = next(r for r in document["recordSet"] if r["@id"] == "train_inputs")
    assert [f["@id"] for f in inputs_set["field"]] == ["train_inputs/x"]
    records = list(_validated(document).records(record_set="train_inputs"))
    assert records[1]["train_inputs/x"].decode() == "4  5\t\t6"


@time_machine.travel(VALIDATION, tick=False)
def test_the_document_says_what_the_brief_asks(client, challenge, storage_roots):
    dataset = make_dataset(challenge, "gaze", task="regression", description="Eye *gaze*.")
    document = client.get(_json_url()).json()
    assert document["@type"] == "sc:Dataset"
    assert document["conformsTo"] == "http://mlcommons.org/croissant/1.0"
    assert document["@context"]["cr"] == "http://mlcommons.org/croissant/"
    assert document["name"] == "gaze (Demo challenge)"
    assert document["description"].startswith("Eye *gaze*.\n\nRegression dataset")
    assert document["license"] == "http://testserver/challenges/demo/rules/"
    assert "Evaluating Predictive Uncertainty Challenge" in document["citeAs"]
    assert document["url"] == "http://testserver/challenges/demo/datasets/gaze/"
    assert document["datePublished"] == "2030-01-10T00:00:00+00:00"
    assert document["creator"]["url"] == "http://testserver/"
    released = [
        dataset.files.get(split=s, kind=k)
        for s, k in [("train", "inputs"), ("train", "targets"), ("val", "inputs")]
    ]
    assert document["distribution"] == [
        {
            "@type": "cr:FileObject",
            "@id": f.filename,
            "name": f.filename,
            "description": croissant._file_words(f),
            "contentUrl": f"http://testserver/challenges/demo/datasets/gaze/files/{f.filename}",
            "contentSize": f"{f.size} B",
            "encodingFormat": "text/plain",
            "sha256": f.sha256,
        }
        for f in released
    ]
    assert [r["@id"] for r in document["recordSet"]] == [
        "train_inputs",
        "train_targets",
        "val_inputs",
        "predictions",
    ]
    predictions = document["recordSet"][-1]
    assert "Flag 1, a Gaussian: 1 m v" in predictions["description"]
    assert "distribution" not in predictions and "source" not in predictions["field"][0]
    _validated(document)


@pytest.mark.parametrize(
    ("when", "settings_", "released", "withheld"),
    [
        (VALIDATION, {}, [], ["val_targets", "test_inputs", "test_targets"]),
        (VALIDATION, {"test_inputs_release": "start"}, ["test_inputs"], ["val_targets"]),
        (TEST_PHASE, {}, ["val_targets", "test_inputs"], ["test_targets"]),
        (AFTER, {"results_published": True}, ["val_targets", "test_inputs"], ["test_targets"]),
        (
            AFTER,
            {"results_published": True, "test_targets_release": "after_publication"},
            ["val_targets", "test_inputs", "test_targets"],
            [],
        ),
    ],
)
def test_only_released_files_appear_for_anyone(
    client, challenge, storage_roots, when, settings_, released, withheld
):
    for field, value in settings_.items():
        setattr(challenge, field, value)
    with time_machine.travel(when, tick=False):
        challenge.save()
    dataset = make_dataset(challenge, "gaze")
    organiser = make_user("organiser", organiser_of=challenge)
    superuser = make_user("root", is_superuser=True)
    with time_machine.travel(when, tick=False):
        anonymous_json = client.get(_json_url()).content
        anonymous_page = client.get(_page_url()).content.decode()
        seen = [(anonymous_json, anonymous_page)]
        for user in (organiser, superuser):
            client.force_login(user)
            seen.append((client.get(_json_url()).content, client.get(_page_url()).content.decode()))
    document = json.loads(anonymous_json)
    listed = [f["@id"] for f in document["distribution"]]
    expected = ["train_inputs", "train_targets", "val_inputs", *released]
    assert sorted(listed) == sorted(f"gaze_{part}.txt" for part in expected)
    for body, page in seen:
        # The same document whoever asks, embedded in the page as it is served.
        assert body == anonymous_json
        embedded = SCRIPT.search(page).group(1)
        assert json.loads(embedded) == document
        for part in withheld:
            datafile = dataset.files.get(split=part.split("_")[0], kind=part.split("_")[1])
            assert datafile.sha256 not in body.decode()
            assert f"gaze_{part}" not in body.decode() and part not in body.decode()
            assert datafile.sha256 not in embedded and f"gaze_{part}" not in embedded
    _validated(document)


@time_machine.travel(VALIDATION, tick=False)
def test_a_description_cannot_close_the_data_block(client, challenge, storage_roots):
    hostile = 'Ends here </script><script>alert("x")</script> & <!-- too'
    make_dataset(challenge, "gaze", description=hostile)
    page = client.get(_page_url()).content.decode()
    blocks = SCRIPT.findall(page)
    assert len(blocks) == 1
    assert "<" not in blocks[0] and ">" not in blocks[0] and "&" not in blocks[0]
    assert json.loads(blocks[0])["description"].startswith(hostile)
    # A data block: its type is not JavaScript, so the CSP's script-src never applies.
    assert '<script type="application/ld+json">' in page
    assert "<script>" not in page.split("</head>", 1)[1]


@time_machine.travel(VALIDATION, tick=False)
def test_the_json_answers_repeat_requests_with_304_and_changes_with_the_clock(client, challenge):
    make_dataset(challenge, "gaze")
    first = client.get(_json_url())
    assert first["Content-Type"] == "application/ld+json"
    assert first["Cache-Control"] == "private, no-cache"
    again = client.get(_json_url(), headers={"if-none-match": first["ETag"]})
    assert again.status_code == 304
    with time_machine.travel(TEST_PHASE, tick=False):
        later = client.get(_json_url(), headers={"if-none-match": first["ETag"]})
    assert later.status_code == 200 and later["ETag"] != first["ETag"]
    assert json.loads(later.content)["version"].startswith("1.5.0+")
    assert json.loads(first.content)["version"].startswith("1.3.0+")


@time_machine.travel(datetime(2030, 1, 5, tzinfo=UTC), tick=False)
def test_before_the_start_the_document_is_404_to_the_public_and_empty_for_organisers(
    client, challenge
):
    make_dataset(challenge, "gaze")
    assert client.get(_json_url()).status_code == 404
    client.force_login(make_user("organiser", organiser_of=challenge))
    document = client.get(_json_url()).json()
    assert document["distribution"] == []
    assert [r["@id"] for r in document["recordSet"]] == ["predictions"]
    _validated(document)


def test_a_wide_input_file_is_one_text_field(challenge, monkeypatch):
    dataset = make_dataset(challenge, "gaze", dim=4)
    inputs = dataset.files.get(split="train", kind="inputs")
    monkeypatch.setattr(croissant, "MAX_COLUMN_FIELDS", 3)
    record_set = croissant._record_set(dataset, inputs)
    assert [f["name"] for f in record_set["field"]] == ["x"]
    monkeypatch.setattr(croissant, "MAX_COLUMN_FIELDS", 4)
    record_set = croissant._record_set(dataset, inputs)
    assert [f["name"] for f in record_set["field"]] == ["x1", "x2", "x3", "x4"]
    assert record_set["field"][2]["source"]["transform"] == {"regex": r"^\s*(?:\S+\s+){2}(\S+)"}


@pytest.mark.parametrize(
    ("options", "numbers_per_line"),
    [
        ({"task": "multiclass", "classes": 3}, {3, 6}),  # one row, or an ensemble of two
        ({"task": "regression", "allow_samples": False}, {3, 9}),  # no sample row ("2 …")
        ({"task": "classification"}, {1}),
    ],
)
def test_prediction_examples_are_valid_lines_for_the_dataset(challenge, options, numbers_per_line):
    dataset = make_dataset(challenge, "gaze", **options)
    document = croissant.croissant_document(dataset=dataset, now=AFTER, absolute=str)
    predictions = next(r for r in document["recordSet"] if r["@id"] == "predictions")
    lines = [row["predictions/line"] for row in predictions["data"]]
    assert lines and len(lines) == len(set(lines))
    assert {len(line.split()) for line in lines} == numbers_per_line
    assert not any(line.startswith("2 ") for line in lines if options["task"] == "regression")
    _validated(document)


def test_with_no_valid_example_the_format_goes_in_the_description(challenge):
    """The help's examples have 3 classes: a 10-class dataset gets none, and Croissant
    wants a record set's fields read from somewhere, so the words move to the dataset."""
    dataset = make_dataset(challenge, "gaze", task="multiclass", classes=10, sizes=(12, 4, 5))
    document = croissant.croissant_document(dataset=dataset, now=AFTER, absolute=str)
    assert "predictions" not in [r["@id"] for r in document["recordSet"]]
    assert "your probabilities of classes 0 to 9" in " ".join(document["description"].split())
    _validated(document)
