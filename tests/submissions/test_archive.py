"""The site's reading of submission zips (submissions.archive, services.read_upload): its
limits come from the settings, and every problem is a Rejected error of the "file" field,
never an exception or a 500. The zip checks themselves are scoring.archive's
(tests/scoring/test_archive.py, tests/scoring/test_zipdirectory.py)."""

import random

import pytest

from challenge_site.submissions.archive import Limits
from challenge_site.submissions.services import Rejected, read_upload
from tests.factories import make_zip

from .helpers import gaussian_lines, upload_file

VAL = gaussian_lines(4)


def problems(data: bytes, *, dataset_name="gaze") -> list[str]:
    with pytest.raises(Rejected) as caught:
        read_upload(upload_file(data), dataset_name=dataset_name, limits=Limits.from_settings())
    assert set(caught.value.errors) == {"file"}
    return caught.value.errors["file"]


def accepted(data: bytes, *, dataset_name="gaze"):
    return read_upload(upload_file(data), dataset_name=dataset_name, limits=Limits.from_settings())


def test_total_uncompressed_size_limit(settings):
    settings.SUBMISSION_MAX_UNCOMPRESSED_BYTES = 50
    data = make_zip({"gaze_val_predict.txt": VAL, "gaze_train_predict.txt": VAL})
    assert problems(data) == [
        f"the files add up to {2 * len(VAL) / 1e6:.1f} MB uncompressed; at most 0.0 MB are allowed"
    ]


def test_entry_limit_is_a_setting(settings):
    settings.SUBMISSION_MAX_ZIP_ENTRIES = 2
    data = make_zip({"gaze_val_predict.txt": VAL, "a/": b"", "b/": b""})
    assert problems(data) == ["the zip holds 3 entries; at most 2 are allowed"]


def test_random_damage_never_escapes_as_an_exception():
    """Truncations and flipped bytes anywhere: accepted or Rejected, nothing else."""
    original = make_zip(
        {"res/gaze_val_predict.txt": gaussian_lines(50), "res/gaze_train_predict.txt": VAL}
    )
    rng = random.Random(20040)
    outcomes = set()
    for _ in range(400):
        data = bytearray(original)
        if rng.random() < 0.3:
            data = data[: rng.randrange(len(data))]
        for _ in range(rng.randint(1, 8)):
            if data:
                data[rng.randrange(len(data))] = rng.randrange(256)
        try:
            accepted(bytes(data))
            outcomes.add("accepted")
        except Rejected as rejected:
            assert rejected.errors["file"] and all(rejected.errors["file"])
            outcomes.add("rejected")
    assert outcomes == {"accepted", "rejected"}


def test_near_miss_names_say_which_name_they_meant():
    """The challenge's datasets are the names a misnamed file may have meant."""

    def refused(files, *, dataset_name):
        with pytest.raises(Rejected) as caught:
            read_upload(
                upload_file(make_zip(files)),
                dataset_name=dataset_name,
                limits=Limits.from_settings(),
                dataset_names=["gaze", "catalysis"],
            )
        return caught.value.errors["file"]

    assert refused({"Catalysis_Validation_Predictions.csv": VAL}, dataset_name=None) == [
        "Catalysis_Validation_Predictions.csv: unexpected file name; did you mean "
        "catalysis_val_predict.txt?"
    ]
    assert refused({"results/GAZE_TEST.txt": VAL}, dataset_name="gaze") == [
        "results/GAZE_TEST.txt: unexpected file name; did you mean gaze_test_predict.txt?"
    ]
    assert refused({"catalysis_val_predict.txt": VAL}, dataset_name="gaze") == [
        "catalysis_val_predict.txt: named for dataset 'catalysis', but this submission is "
        "for 'gaze'; did you mean gaze_val_predict.txt? (or submit it to catalysis)"
    ]
