"""datasets.capacity: a dataset with classes is refused when its honest prediction file
would not fit the submission limits, with the setting to raise; the sizes per number it
assumes hold for the files the formats page recommends, and scoring stays within the
memory it assumes."""

import io
import tracemalloc
import zipfile

import numpy as np
import pytest

import scoring
from datasets.capacity import (
    MEMORY_BASE,
    MEMORY_PER_EXAMPLE,
    MEMORY_PER_NUMBER,
    TEXT_BYTES_PER_NUMBER,
    ZIPPED_BYTES_PER_NUMBER,
    capacity_problems,
)
from datasets.importing import ImportProblems, import_challenge
from tests.factories import dataset_files, write_challenge_folder


def test_cifar_fits_the_default_limits_and_imagenet_is_refused_saying_what_to_raise(settings):
    assert capacity_problems(name="c100", classes=100, rows={"val": 10_000, "test": 10_000}) == []
    assert capacity_problems(name="gaze", classes=None, rows={"test": 10**9}) == []
    problems = capacity_problems(
        name="imagenet", classes=1000, rows={"train": 10**6, "val": 50_000, "test": 20_000}
    )
    what = 'imagenet: a val prediction file of 50,000 rows of 1000 probabilities (np.savetxt with fmt="%.6g")'
    assert problems == [
        f"{what} is about 250.0 MB zipped, over the 52.4 MB an upload may have: use fewer "
        "classes or rows, or raise SUBMISSION_MAX_UPLOAD_BYTES",
        f"{what} is about 600.0 MB unzipped, over the 268.4 MB a submission's files may have: "
        "use fewer classes or rows, or raise SUBMISSION_MAX_UNCOMPRESSED_BYTES",
        f"{what} needs about 1,272.0 MB of memory to score, over the 1,073.7 MB a scoring run "
        "may use: use fewer classes or rows, or raise SUBMISSION_MAX_MEMORY_BYTES",
    ]
    settings.SUBMISSION_MAX_UPLOAD_BYTES = 250 * 10**6
    settings.SUBMISSION_MAX_UNCOMPRESSED_BYTES = 600 * 10**6
    settings.SUBMISSION_MAX_MEMORY_BYTES = 2 * 1024**3
    assert capacity_problems(name="imagenet", classes=1000, rows={"val": 50_000}) == []


@pytest.mark.parametrize("rows, classes", [(2000, 10), (400, 100), (40, 1000)])
@pytest.mark.parametrize("sharpness", [0.5, 3, 10])
def test_a_savetxt_file_of_softmax_outputs_is_within_the_sizes_assumed(rows, classes, sharpness):
    rng = np.random.default_rng(classes)
    logits = sharpness * rng.normal(size=(rows, classes))
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    text = io.BytesIO()
    np.savetxt(text, probs, fmt="%.6g")
    zipped = io.BytesIO()
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("x_val_predict.txt", text.getvalue())
    numbers = rows * classes
    assert text.getbuffer().nbytes <= TEXT_BYTES_PER_NUMBER * numbers
    assert zipped.getbuffer().nbytes <= ZIPPED_BYTES_PER_NUMBER * numbers


@pytest.mark.parametrize("rows, classes", [(100_000, 2), (20_000, 50), (1_000, 1000)])
def test_scoring_a_multiclass_file_stays_within_the_memory_assumed(rows, classes):
    """Every allocation of one evaluation (reading from a zip member as the workers do,
    the losses, the terms and the plot data kept by the site), at its peak, against the
    bytes the limits are checked with (whether or not this process scored a file before)."""
    rng = np.random.default_rng(3)
    probs = rng.dirichlet(np.full(classes, 0.3), size=rows)
    targets = rng.integers(0, classes, size=rows).astype(np.float64)
    text = io.BytesIO()
    np.savetxt(text, probs, fmt="%.6g")
    zipped = io.BytesIO()
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("x_val_predict.txt", text.getvalue())
    options = scoring.ScoringOptions(classes=classes)

    tracemalloc.start()
    try:
        with zipfile.ZipFile(zipped) as archive, archive.open("x_val_predict.txt") as member:
            evaluation = scoring.evaluate(member, targets, task="multiclass", options=options)
            evaluation.terms()
            evaluation.plot_data()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert evaluation.n == rows
    assert peak <= MEMORY_BASE + rows * MEMORY_PER_EXAMPLE + rows * classes * MEMORY_PER_NUMBER


@pytest.mark.django_db
def test_an_import_over_the_limits_is_refused(tmp_path, settings):
    settings.SUBMISSION_MAX_UPLOAD_BYTES = 500  # 30 test rows × 4 classes × 5 bytes = 600
    toml = """
slug = "shapes"
title = "Shapes"
start = 2030-01-10T00:00:00Z
test_start = 2030-02-01T00:00:00Z
deadline = 2030-02-08T23:59:59Z

[datasets.shapes]
task = "multiclass"
classes = 4
"""
    files = dataset_files("shapes", task="multiclass", classes=4, sizes=(8, 20, 30))
    folder = write_challenge_folder(tmp_path / "shapes", toml, {"shapes": files})
    with pytest.raises(ImportProblems) as raised:
        import_challenge(folder)
    assert raised.value.problems == [
        'shapes: a test prediction file of 30 rows of 4 probabilities (np.savetxt with fmt="%.6g") '
        "is about 600 bytes zipped, over the 500 bytes an upload may have: use fewer classes or "
        "rows, or raise SUBMISSION_MAX_UPLOAD_BYTES"
    ]
