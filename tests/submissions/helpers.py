"""Zips and prediction files for submission tests."""

import numpy as np
from django.core.files.uploadedfile import SimpleUploadedFile
from django.http import StreamingHttpResponse
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from challenge_site.submissions import services
from challenge_site.submissions.models import Status, Submission
from tests.factories import VALIDATION, make_zip

# Rows per split of tests.factories.make_dataset's default sizes.
ROWS = {"train": 6, "val": 4, "test": 5}


def gaussian_lines(rows: int, *, seed: int = 1) -> bytes:
    rng = np.random.default_rng(seed)
    return "".join(
        f"1 {m:.6g} {v:.6g}\n"
        for m, v in zip(rng.normal(size=rows), 0.5 + rng.random(rows), strict=True)
    ).encode()


def probability_lines(rows: int, *, seed: int = 1) -> bytes:
    rng = np.random.default_rng(seed)
    return "".join(f"{p:.6g}\n" for p in 0.05 + 0.9 * rng.random(rows)).encode()


def class_probability_lines(
    rows: int,
    *,
    classes: int,
    members: int = 1,
    seed: int = 1,
    fmt: str = "%.6g",
    mixed: bool = False,
) -> bytes:
    """Multiclass prediction lines: each example's ``members`` softmax vectors of
    ``classes`` probabilities, one member after the other (members > 1: ensemble lines;
    ``mixed``: every other line a single member's)."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(scale=1.5, size=(rows, members, classes))
    probs = np.exp(logits) / np.exp(logits).sum(axis=2, keepdims=True)
    lines = []
    for i, row in enumerate(probs):
        values = row[0] if mixed and i % 2 == 0 else row.reshape(-1)
        lines.append(" ".join(fmt % value for value in values) + "\n")
    return "".join(lines).encode()


# A multiclass dataset of a few dozen rows (make_shapes): 4 classes, ensembles allowed.
SHAPES_ROWS = {"train": 40, "val": 24, "test": 30}


def make_shapes(challenge, **options):
    """The multiclass dataset "shapes": 4 classes, 40 training, 24 validation and 30 test
    rows of 5 inputs, every class among the training targets."""
    from tests.factories import make_dataset

    options.setdefault("classes", 4)
    sizes = tuple(SHAPES_ROWS.values())
    return make_dataset(challenge, "shapes", task="multiclass", sizes=sizes, dim=5, **options)


def shapes_files(splits=("val",), *, seed: int = 1, members: int = 3) -> dict[str, bytes]:
    """Prediction files for make_shapes: single and ensemble lines of ``members`` mixed."""
    return {
        f"shapes_{split}_predict.txt": class_probability_lines(
            SHAPES_ROWS[split], classes=4, members=members, seed=seed + i, mixed=True
        )
        for i, split in enumerate(splits)
    }


def predictions(
    name: str, splits=("val",), *, task="regression", seed=1, classes=None, members=1
) -> dict[str, bytes]:
    """Prediction files of a dataset of ``task`` (a multiclass one needs ``classes``)."""
    if task == "multiclass":
        return {
            f"{name}_{split}_predict.txt": class_probability_lines(
                ROWS[split], classes=classes, members=members, seed=seed
            )
            for split in splits
        }
    lines = gaussian_lines if task == "regression" else probability_lines
    return {f"{name}_{split}_predict.txt": lines(ROWS[split], seed=seed) for split in splits}


def upload_file(data: bytes, name: str = "predictions.zip") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type="application/zip")


def form_data(challenge, data: bytes, **fields) -> dict:
    values = {
        "dataset": "",
        "method": "Gaussian process",
        "authors": "A. Lovelace",
        "description": "A test submission.",
        "file": upload_file(data),
    }
    values.update(fields)
    return values


def scores_of(submission: Submission) -> dict[str, dict[str, float | None]]:
    table: dict[str, dict[str, float | None]] = {}
    for score in submission.scores.all():
        table.setdefault(score.split, {})[score.loss] = score.value
    return table


def queued_submission(user, challenge, *, now=VALIDATION) -> Submission:
    """Accepted but never sent to a worker: the on-commit callbacks are not run."""
    values = form_data(challenge, make_zip(predictions("gaze")))
    submission = services.submit(
        user=user,
        challenge=challenge,
        dataset_name=None,
        method="queued",
        description="",
        authors="",
        upload=values["file"],
        now=now,
    )
    assert submission.status == Status.QUEUED
    return submission


def get_at(url: str, *, when, user=None):
    """GET ``url`` at the moment ``when`` (the clock travels), logged in as ``user``."""
    import time_machine
    from django.test import Client

    client = Client()
    with time_machine.travel(when, tick=False):
        if user is not None:
            client.force_login(user)
        return client.get(url)


def stored_file(dataset, split: str, kind: str) -> bytes:
    """The bytes of one of the dataset's stored files."""
    from django.core.files.storage import storages

    datafile = dataset.files.get(split=split, kind=kind)
    with storages[datafile.storage_alias].open(datafile.path, "rb") as handle:
        return handle.read()


# --- The challenge's exports (bulk.py, bulk_views.py) -------------------------------------

ZIP_URL = "/challenges/demo/export/submissions.zip"
CSV_URL = "/challenges/demo/export/scores.csv"
API_ZIP_URL = "/api/v1/challenges/demo/export/submissions.zip"
API_CSV_URL = "/api/v1/challenges/demo/export/scores.csv"


def web(user) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def api(user) -> APIClient:
    client = APIClient()
    if user is not None:
        token = Token.objects.create(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def body(response) -> bytes:
    assert isinstance(response, StreamingHttpResponse)
    return b"".join(response.streaming_content)


# --- Probing files (probing.py, admin_probing.py): the conftest's ``iris`` ------------------

PROBE_ROWS = 40  # validation rows: enough for "a few" (at most 10) to be few


def probe_lines(values) -> bytes:
    return "".join(f"{value:.6g}\n" for value in values).encode()


def honest_lines(seed=1) -> bytes:
    return probability_lines(PROBE_ROWS, seed=seed)


def constant_but(few: int) -> bytes:
    return probe_lines([0.5] * (PROBE_ROWS - few) + [0.9, 0.1, 0.7, 0.2, 0.8][:few])
