"""submissions.services: from an accepted zip to stored scores: the values, the statuses,
the errors, the plots (what a run reads and in which order: test_evaluation.py)."""

import math
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.files.storage import storages

import scoring
from challenge_site.submissions.models import Score, SplitResult, Status, Submission
from challenge_site.submissions.services import score_submission
from datasets.models import Kind
from tests.factories import AFTER, TEST_PHASE, VALIDATION

from .helpers import gaussian_lines, predictions, scores_of

ROOT = Path(__file__).resolve().parents[2]


def _cli_scores(predictions_path: Path, targets_path: Path, *, task: str, log_base: float):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "scoring",
            "evaluate",
            str(predictions_path),
            str(targets_path),
            "--task",
            task,
            "--log-base",
            repr(log_base),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    values = {}
    for line in result.stdout.splitlines():
        name, text = line.split()
        values[name] = None if text == "n/a" else float(text)
    return values


def _write_targets(dataset, split, folder: Path) -> Path:
    datafile = dataset.files.get(split=split, kind=Kind.TARGETS)
    path = folder / datafile.filename
    with storages[datafile.storage_alias].open(datafile.path, "rb") as handle:
        path.write_bytes(handle.read())
    return path


@pytest.mark.parametrize("task", ["regression", "classification"])
def test_scores_equal_the_command_line_for_the_same_files(
    challenge, participant, submit_zip, tmp_path, task
):
    from tests.factories import make_dataset

    dataset = make_dataset(challenge, "gaze", task=task, log_base=10.0, seed=5)
    files = predictions("gaze", ("train", "val", "test"), task=task, seed=7)
    submission = submit_zip(participant, challenge, files, now=AFTER)

    assert submission.status == Status.SCORED, submission.errors or submission.failure
    stored = scores_of(submission)
    assert set(stored) == {"train", "val", "test"}
    for split in ("train", "val", "test"):
        member = tmp_path / f"gaze_{split}_predict.txt"
        member.write_bytes(files[member.name])
        expected = _cli_scores(
            member, _write_targets(dataset, split, tmp_path), task=task, log_base=10.0
        )
        assert stored[split] == expected
        # Every loss of the task that applies under the dataset's options (wis: only with
        # quantile levels, which this dataset has none of).
        options = dataset.scoring_options
        assert list(expected) == [loss.name for loss in scoring.losses_for(task, options)]


def test_submission_records_phase_mark_splits_and_run(gaze, participant, submit_zip, storage_roots):
    submission = submit_zip(
        participant, gaze.challenge, predictions("gaze", ("train", "val")), now=VALIDATION
    )
    assert (submission.phase, submission.mark) == ("validation", "<")
    assert submission.splits == ["train", "val"]
    assert submission.attempts == 1 and submission.errors == [] and submission.failure == ""
    assert submission.started_at is not None and submission.finished_at is not None
    assert submission.file.name.startswith("submissions/demo/gaze/")
    assert (
        submission.file.name.endswith(".zip") and submission.original_filename == "predictions.zip"
    )
    results = {r.split: r for r in SplitResult.objects.filter(submission=submission)}
    assert set(results) == {"train", "val"}
    assert results["val"].rows == 4 and results["val"].filename == "gaze_val_predict.txt"
    pit = results["val"].plot_data["pit"]
    assert pit["n"] == 4 and {"50", "80", "95"} <= set(pit["coverage"])


def test_classification_stores_reliability_bins(catalysis, participant, submit_zip):
    files = predictions("catalysis", ("val",), task="classification")
    submission = submit_zip(participant, catalysis.challenge, files, now=VALIDATION)
    result = SplitResult.objects.get(submission=submission, split="val")
    bins = result.plot_data["reliability"]
    assert len(bins) == 10 and sum(b["count"] for b in bins) == 4


def test_infinity_and_not_applicable_round_trip_through_the_database(gaze, participant, submit_zip):
    # A zero-variance row makes nlpd infinite; all rows zero-variance: non-probabilistic.
    files = {"gaze_val_predict.txt": b"1 0.5 0\n1 0.1 0\n1 -0.2 0\n1 0.3 0\n"}
    submission = submit_zip(participant, gaze.challenge, files, now=VALIDATION)
    assert submission.status == Status.SCORED
    val = scores_of(submission)["val"]
    assert val["nlpd"] is None and val["crps"] is None  # n/a: non-probabilistic
    assert isinstance(val["nmse"], float) and math.isfinite(val["nmse"])
    assert SplitResult.objects.get(submission=submission).non_probabilistic is True

    files = {"gaze_val_predict.txt": b"1 0.5 0\n1 0.1 1\n1 -0.2 1\n1 0.3 1\n"}
    submission = submit_zip(participant, gaze.challenge, files, now=VALIDATION)
    value = Score.objects.get(submission=submission, split="val", loss="nlpd").value
    assert value == math.inf
    assert Score.objects.filter(loss="nlpd", value=math.inf).count() == 1


def test_invalid_submission_keeps_every_error_of_every_file_and_no_scores(
    gaze, participant, submit_zip
):
    files = {
        "results/gaze_train_predict.txt": b"1 0 1\n" * 5 + b"1 0 -1\n",
        "results/gaze_val_predict.txt": b"1 0 1\n1 0 x\n1 0 1\n",
    }
    submission = submit_zip(participant, gaze.challenge, files, now=VALIDATION)
    assert submission.status == Status.INVALID
    errors = submission.errors
    assert any(line.startswith("results/gaze_train_predict.txt:6: ") for line in errors)
    assert any(line.startswith("results/gaze_val_predict.txt:2: ") for line in errors)
    assert any("results/gaze_val_predict.txt" in line and "4" in line for line in errors)
    expected = []
    for member, targets_split in (("train", "train"), ("val", "val")):
        name = f"results/gaze_{member}_predict.txt"
        try:
            scoring.evaluate(
                files[name],
                _targets(gaze, targets_split),
                task="regression",
                predictions_path=name,
            )
        except scoring.ScoringError as error:
            expected.extend(error.lines)
    assert errors == expected
    assert not Score.objects.filter(submission=submission).exists()
    assert not SplitResult.objects.filter(submission=submission).exists()


def _targets(dataset, split):
    datafile = dataset.files.get(split=split, kind=Kind.TARGETS)
    with storages[datafile.storage_alias].open(datafile.path, "rb") as handle:
        return scoring.read_targets(handle.read(), path=datafile.filename, task=dataset.task)


def test_error_report_is_capped_by_the_scoring_package(gaze, participant, submit_zip):
    from tests.factories import make_dataset

    big = make_dataset(gaze.challenge, "big", sizes=(6, 300, 5))
    files = {"big_val_predict.txt": b"oops\n" * 300}
    submission = submit_zip(participant, big.challenge, files, now=VALIDATION)
    assert submission.status == Status.INVALID
    # The summary that says the fix once, then 100 lines and the count of the rest.
    assert len(submission.errors) == 102
    assert submission.errors[0].startswith("big_val_predict.txt: 300 lines hold text")
    assert submission.errors[-1] == "... and 200 more problems"


def test_unexpected_exception_fails_without_partial_scores(
    gaze, participant, submit_zip, monkeypatch, caplog
):
    import scoring.upload_check

    calls = []
    real = scoring.upload_check.check_file

    def flaky(*args, **kwargs):
        calls.append(kwargs["path"])
        if len(calls) == 2:
            raise RuntimeError("disk on fire")
        return real(*args, **kwargs)

    # The format check, before any target is read: its fault may be shown as it is.
    monkeypatch.setattr(scoring.upload_check, "check_file", flaky)
    submission = submit_zip(
        participant, gaze.challenge, predictions("gaze", ("train", "val", "test")), now=TEST_PHASE
    )
    assert calls == ["gaze_train_predict.txt", "gaze_val_predict.txt"]
    assert submission.status == Status.FAILED
    assert submission.failure == "RuntimeError: disk on fire"
    assert not Score.objects.filter(submission=submission).exists()
    assert "scoring submission" in caplog.text


def test_failure_while_writing_scores_leaves_none(gaze, participant, submit_zip, monkeypatch):
    real = Score.objects.bulk_create

    def half_then_fail(objs, *args, **kwargs):
        objs = list(objs)
        real(objs[:2], *args, **kwargs)
        raise RuntimeError("connection lost")

    monkeypatch.setattr(Score.objects, "bulk_create", half_then_fail)
    submission = submit_zip(participant, gaze.challenge, predictions("gaze"), now=VALIDATION)
    assert submission.status == Status.FAILED
    assert submission.failure == "storing the scores failed: RuntimeError"
    assert not Score.objects.filter(submission=submission).exists()
    assert not SplitResult.objects.filter(submission=submission).exists()


def test_rescore_that_fails_removes_the_old_scores(gaze, participant, submit_zip, monkeypatch):
    submission = submit_zip(participant, gaze.challenge, predictions("gaze"), now=VALIDATION)
    assert Score.objects.filter(submission=submission).count() == 4  # nlpd nmse crps rauc

    def broken(*args, **kwargs):
        raise ValueError("bad options")

    monkeypatch.setattr(scoring, "evaluate", broken)
    score_submission(submission_id=submission.pk, force=True)
    submission.refresh_from_db()
    assert submission.status == Status.FAILED and submission.failure == "ValueError: bad options"
    assert not Score.objects.filter(submission=submission).exists()


def test_missing_targets_fail_and_are_scored_once_the_targets_arrive(
    gaze, participant, submit_zip, django_capture_on_commit_callbacks
):
    from datasets.services import check_files, delete_file, save_files
    from tests.factories import dataset_files

    test_targets = gaze.files.get(split="test", kind=Kind.TARGETS)
    with django_capture_on_commit_callbacks(execute=True):
        delete_file(test_targets)
    submission = submit_zip(
        participant, gaze.challenge, predictions("gaze", ("test",)), now=TEST_PHASE
    )
    assert submission.status == Status.FAILED
    assert "test targets of gaze are not on the server yet" in submission.failure

    name = "gaze_test_targets.txt"
    checked = check_files(
        name="gaze",
        task="regression",
        uploads=[(name, dataset_files("gaze", task="regression")[name], name)],
        existing=list(gaze.files.all()),
    )
    with django_capture_on_commit_callbacks(execute=True):
        save_files(gaze, checked, now=TEST_PHASE)
    submission.refresh_from_db()
    assert submission.status == Status.SCORED
    assert set(scores_of(submission)) == {"test"}


def test_stored_zip_is_checked_again_by_the_worker(gaze, participant, submit_zip, settings):
    submission = submit_zip(participant, gaze.challenge, predictions("gaze"), now=VALIDATION)
    settings.SUBMISSION_MAX_UPLOAD_BYTES = 10
    score_submission(submission_id=submission.pk, force=True)
    submission.refresh_from_db()
    assert submission.status == Status.INVALID
    assert submission.errors[0].startswith("the file is ")
    assert not Score.objects.filter(submission=submission).exists()


def test_nmse_normalised_by_training_targets_uses_them(challenge, participant, submit_zip):
    from tests.factories import make_dataset

    dataset = make_dataset(challenge, "udon", nmse_normaliser="training")
    files = {"udon_val_predict.txt": gaussian_lines(4, seed=2)}
    submission = submit_zip(participant, challenge, files, now=VALIDATION)
    expected = scoring.evaluate(
        files["udon_val_predict.txt"],
        _targets(dataset, "val"),
        task="regression",
        options=scoring.ScoringOptions(nmse_normaliser="training"),
        train_targets=_targets(dataset, "train"),
    ).scores
    assert scores_of(submission)["val"] == expected
    assert Submission.objects.get(pk=submission.pk).status == Status.SCORED


# --- Error reports are bounded ------------------------------------------------------------


def test_a_long_folder_name_stores_a_short_report(gaze, participant, submit_zip):
    import json

    from .hostile import Target, long_folder_name

    data = long_folder_name(Target("gaze", 4, "catalysis"))
    submission = submit_zip_bytes(submit_zip, participant, gaze.challenge, data)
    assert submission.status == Status.INVALID
    assert len(json.dumps(submission.errors)) <= 20 * 1024
    shown = "…" + ("f" * 60_000 + "/gaze_val_predict.txt")[-100:]
    assert submission.errors[0].startswith(f"{shown}: 101 lines hold text")  # the summary
    assert submission.errors[1].startswith(f"{shown}:1: ")


def submit_zip_bytes(submit_zip, user, challenge, data: bytes):
    import io
    import zipfile

    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    return submit_zip(user, challenge, files, now=VALIDATION)
