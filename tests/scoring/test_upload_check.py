"""scoring.upload_check: a submission zip checked as the site checks it, with no target.

The site runs the same functions (tests/submissions/test_formatcheck.py shows that its
stored reports equal what check_upload returns); here the function on its own.
"""

import io
import time
import zipfile
from datetime import UTC, datetime

import pytest

from scoring.archive import Limits
from scoring.upload_check import DatasetFacts, check_file, check_upload

GAZE = DatasetFacts("gaze", "regression", {"train": 6, "val": 4, "test": 5})
CATALYSIS = DatasetFacts("catalysis", "classification", {"train": 6, "val": 4, "test": 5})
DATASETS = [GAZE, CATALYSIS]
TEST_START = datetime(2030, 2, 1, tzinfo=UTC)
GOOD = b"1 0.5 1\n" * 4


def zipped(files: dict[str, bytes]) -> io.BytesIO:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    buffer.seek(0)
    return buffer


def check(files, **kwargs):
    kwargs.setdefault("datasets", DATASETS)
    return check_upload(zipped(files), **kwargs)


def test_a_valid_zip_has_no_problems(tmp_path):
    assert check({"gaze_val_predict.txt": GOOD}) == []
    path = tmp_path / "p.zip"
    path.write_bytes(zipped({"gaze_val_predict.txt": GOOD}).getvalue())
    assert check_upload(path, datasets=DATASETS, dataset="gaze") == []
    assert check_upload(str(path), datasets=DATASETS, phase="validation") == []


def test_near_miss_names_get_a_suggestion():
    assert check({"Gaze_Validation_Predictions.csv": GOOD}) == [
        "Gaze_Validation_Predictions.csv: unexpected file name; did you mean gaze_val_predict.txt?"
    ]
    assert check({"gaze_val_predict.txt": GOOD}, dataset="catalysis") == [
        "gaze_val_predict.txt: named for dataset 'gaze', but this submission is for "
        "'catalysis'; did you mean catalysis_val_predict.txt? (or submit it to gaze)"
    ]
    assert check({"gazee_val_predict.txt": GOOD}, dataset="gaze") == [
        "gazee_val_predict.txt: named for dataset 'gazee', but this submission is for "
        "'gaze'; did you mean gaze_val_predict.txt?"
    ]


def test_unknown_datasets_are_named_as_the_site_names_them():
    assert check({"gaze_val_predict.txt": GOOD}, dataset="wheat") == [
        "no dataset 'wheat'; choose one of gaze, catalysis"
    ]
    assert check({"wheat_val_predict.txt": GOOD}) == [
        "wheat_val_predict.txt: this challenge has no dataset 'wheat'; its datasets are "
        "gaze, catalysis"
    ]


def test_the_phase_rules():
    files = {"gaze_val_predict.txt": GOOD, "gaze_test_predict.txt": b"1 0 1\n" * 5}
    assert check(files, phase="validation", test_start=TEST_START) == [
        "gaze_test_predict.txt: test predictions are accepted from the test phase, which "
        "begins 01 Feb 2030 00:00 UTC"
    ]
    assert check({"gaze_val_predict.txt": GOOD}, phase="test") == [
        "the test phase needs gaze_test_predict.txt (the zip holds gaze_val_predict.txt)"
    ]
    assert check(files, phase="post") == []
    assert check(files) == []  # no phase given: not checked


def test_format_problems_of_every_file_lead_with_their_summaries():
    files = {
        "gaze_train_predict.txt": b"1,0.5,1\n" * 12,
        "gaze_val_predict.txt": b"1 0.5 1\n" * 3,
    }
    lines = check(files)
    assert lines[0] == (
        "gaze_train_predict.txt: 12 lines use commas: separate numbers with spaces or tabs"
    )
    assert lines[1] == (
        "gaze_train_predict.txt:1: expected numbers separated by spaces or tabs, found '1,0.5,1'"
    )
    assert "gaze_train_predict.txt:7: expected 6 rows, one per target, found 12" in lines
    assert lines[-1] == "gaze_val_predict.txt:4: expected 4 rows, one per target, found 3"
    assert len(lines) == 1 + 12 + 2


def test_classification_hints_and_the_dataset_options():
    lines = check({"catalysis_val_predict.txt": b"1\n-1\n-1\n1\n"})
    assert lines[0].startswith("catalysis_val_predict.txt: -1 on 2 lines, and every value is +1")
    no_samples = DatasetFacts("gaze", "regression", {"val": 4}, allow_samples=False)
    lines = check({"gaze_val_predict.txt": b"2 0.5 1\n" * 4}, datasets=[no_samples])
    assert lines[0].startswith("gaze_val_predict.txt:1: sample rows ('2 s1 ... sK') are not")


def test_multiclass_files_are_checked_by_the_datasets_class_count_and_ensemble_rule():
    cifar = DatasetFacts("cifar", "multiclass", {"val": 2}, classes=3, allow_ensembles=False)
    assert cifar.options.classes == 3 and not cifar.options.allow_ensembles
    assert check({"cifar_val_predict.txt": b"0.5 0.5 0\n0 0 1\n"}, datasets=[cifar]) == []
    lines = check({"cifar_val_predict.txt": b"0.5 0.5 0 0 0 1\n1 0\n9 0 0\n"}, datasets=[cifar])
    assert lines == [
        "cifar_val_predict.txt:1: expected 3 probabilities (one per class), found 6: is this a "
        "2-member ensemble? this dataset does not accept ensembles",
        "cifar_val_predict.txt:2: expected 3 probabilities (one per class), found 2",
        "cifar_val_predict.txt:3: expected 2 rows, one per target, found 3",
        "cifar_val_predict.txt:3: expected probabilities between 0 and 1, found 9 (class 0)",
    ]
    facts = DatasetFacts.from_json(cifar.to_json())
    assert facts == cifar and facts.to_json()["classes"] == 3
    assert DatasetFacts.from_json({"name": "c", "task": "multiclass"}).options.classes is None


def test_a_split_of_unknown_rows_is_not_checked():
    unknown = DatasetFacts("gaze", "regression", {"val": 4})
    assert check({"gaze_test_predict.txt": b"oops\n"}, datasets=[unknown]) == []


def test_zip_problems_come_in_the_sites_words():
    assert check_upload(io.BytesIO(b"not a zip"), datasets=DATASETS) == [
        "the file is a text file, not a zip archive; put your prediction files in a .zip"
    ]
    limits = Limits(upload_bytes=100)
    assert check({"gaze_val_predict.txt": GOOD * 100}, limits=limits)[0].startswith(
        "the file is 0.0 MB; a submission zip may be at most 0.0 MB"
    )


def test_the_report_is_bounded_like_the_stored_one():
    lines = check({"gaze_val_predict.txt": b"x" * 5000 + b"\n" + b"y\n" * 300})
    assert sum(len(line) for line in lines) < 20_000


def test_dataset_facts_from_the_challenge_api_json():
    facts = DatasetFacts.from_json(
        {
            "name": "gaze",
            "task": "regression",
            "rows": {"train": 6, "val": 4, "test": None},
            "log_base": 2.0,
            "allow_samples": False,
            "min_quantile_gap": 0.5,
            "files": [],
        }
    )
    assert facts == DatasetFacts(
        "gaze", "regression", {"train": 6, "val": 4, "test": None}, False, 0.5
    )
    assert DatasetFacts.from_json(facts.to_json()) == facts
    assert DatasetFacts.from_json({"name": "x", "task": "classification"}).rows == {}
    with pytest.raises(ValueError):
        DatasetFacts("x", "ranking")


def test_the_time_limit_stops_reading_and_keeps_what_was_found():
    bad = b"oops\n" + b"1 0 1\n" * 2_000_000  # 12 MB: a problem on line 1, then rows
    assert check_file(io.BytesIO(bad), path="p.txt", task="regression", rows=5) == [
        "p.txt:1: expected a number, found 'oops'",
        "p.txt:6: expected 5 rows, one per target, found 2000001",
    ]
    start = time.monotonic()
    lines = check_file(
        io.BytesIO(bad), path="p.txt", task="regression", rows=5, deadline=time.monotonic()
    )
    assert lines == []  # nothing read in time: nothing found (the site then says 429)
    lines = check_file(
        _SlowStream(bad), path="p.txt", task="regression", rows=5, deadline=time.monotonic() + 0.2
    )
    assert time.monotonic() - start < 5
    assert lines == [
        "p.txt:1: expected a number, found 'oops'",
        "... and perhaps more problems: the rest of the file was not read",
    ]


class _SlowStream(io.BytesIO):
    """Reads take 50 ms each: a file that cannot be read to its end in the time allowed."""

    def read(self, size=-1):
        time.sleep(0.05)
        return super().read(min(size, 1 << 16) if size and size > 0 else 1 << 16)
