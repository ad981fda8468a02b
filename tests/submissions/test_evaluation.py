"""submissions.evaluation: from a stored submission to an outcome, writing nothing: on a
hidden split every file is checked before any target is read, a failure there is told
in generic words, and every stored report is bounded."""

import json
import math

import pytest

import scoring
from challenge_site.submissions.evaluation import REPORT_MAX_BYTES, bounded_report
from challenge_site.submissions.models import Status
from datasets.models import Kind
from tests.factories import AFTER, TEST_PHASE, VALIDATION

from .helpers import gaussian_lines, predictions

GENERIC = (
    "scoring failed because of a fault on our side, not in your files; the organisers "
    "have been told and can score it again"
)


@pytest.fixture
def target_reads(monkeypatch):
    """The splits whose targets the pipeline read, in order."""
    from challenge_site.submissions import evaluation

    reads = []
    real = evaluation.read_dataset_targets

    def spy(dataset, *args, **kwargs):
        result = real(dataset, *args, **kwargs)
        reads.append(sorted(result))
        return result

    monkeypatch.setattr(evaluation, "read_dataset_targets", spy)
    return reads


def test_an_invalid_test_file_is_reported_before_any_target_is_read(
    gaze, participant, submit_zip, target_reads
):
    files = predictions("gaze", ("train", "val"))
    files["gaze_test_predict.txt"] = b"1 0 1\n1 0 x\n1 0 1\n1 0 1\n1 0 1\n"
    submission = submit_zip(participant, gaze.challenge, files, now=TEST_PHASE)
    assert submission.status == Status.INVALID
    assert submission.errors and all(
        line.startswith("gaze_test_predict.txt:2: ") for line in submission.errors
    )
    assert target_reads == []


def test_a_wrong_row_count_is_found_from_the_public_row_count(
    gaze, participant, submit_zip, target_reads
):
    files = {"gaze_test_predict.txt": gaussian_lines(4)}  # the test split has 5 rows
    submission = submit_zip(participant, gaze.challenge, files, now=TEST_PHASE)
    assert submission.status == Status.INVALID
    assert submission.errors == [
        "gaze_test_predict.txt:5: expected 5 rows, one per target, found 4"
    ]
    assert target_reads == []


def test_a_valid_upload_reads_the_targets_once_every_file_is_checked(
    gaze, participant, submit_zip, target_reads, monkeypatch
):
    import scoring.upload_check

    events = []
    real = scoring.evaluate
    real_check = scoring.upload_check.check_file

    def logged(predictions, targets, **kwargs):
        events.append(kwargs["predictions_path"])
        return real(predictions, targets, **kwargs)

    def checked(source, **kwargs):
        events.append(kwargs["path"])
        return real_check(source, **kwargs)

    monkeypatch.setattr(scoring, "evaluate", logged)
    monkeypatch.setattr(scoring.upload_check, "check_file", checked)
    real_read = evaluation_module().read_dataset_targets

    def read(dataset, *args, **kwargs):
        events.append("targets")
        return real_read(dataset, *args, **kwargs)

    monkeypatch.setattr(evaluation_module(), "read_dataset_targets", read)
    files = predictions("gaze", ("val", "test"))
    submission = submit_zip(participant, gaze.challenge, files, now=TEST_PHASE)
    assert submission.status == Status.SCORED
    assert events.index("targets") >= events.index("gaze_test_predict.txt")
    # (The intervals, computed after the scores, read the targets again.)
    last_evaluation = len(events) - events[::-1].index("gaze_test_predict.txt")
    assert events[:last_evaluation].count("targets") == 1
    assert set(events[: events.index("targets")]) == {
        "gaze_val_predict.txt",
        "gaze_test_predict.txt",
    }


def evaluation_module():
    from challenge_site.submissions import evaluation

    return evaluation


def nan_crps(monkeypatch):
    """A scoring bug: the crps comes out as NaN whatever the file."""
    real = scoring.evaluate

    def buggy(*args, **kwargs):
        evaluation = real(*args, **kwargs)
        if "crps" in evaluation.scores:
            evaluation.scores["crps"] = math.nan
        return evaluation

    monkeypatch.setattr(scoring, "evaluate", buggy)


def test_a_failure_on_the_hidden_test_split_is_generic_counts_and_staff_see_why(
    gaze, participant, submit_zip, monkeypatch, admin_client
):
    from challenge_site.submissions.limits import allowances

    nan_crps(monkeypatch)
    submission = submit_zip(
        participant, gaze.challenge, predictions("gaze", ("test",)), now=TEST_PHASE
    )
    assert submission.status == Status.FAILED
    assert submission.failure == GENERIC
    assert "loss crps of the test split came out as NaN" in submission.failure_detail
    assert "Traceback" in submission.failure_detail
    (allowance,) = allowances(user=participant, challenge=gaze.challenge, now=TEST_PHASE)
    assert allowance.used_today == 1
    page = admin_client.get(f"/admin/submissions/submission/{submission.pk}/change/")
    assert "loss crps of the test split came out as NaN" in page.content.decode()


def test_a_failure_while_reading_hidden_targets_is_generic(
    gaze, participant, submit_zip, monkeypatch
):
    def unreadable(dataset, *args, **kwargs):
        raise RuntimeError("gaze_test_targets.txt: target 3 is 0.4217")

    monkeypatch.setattr(evaluation_module(), "read_dataset_targets", unreadable)
    submission = submit_zip(
        participant, gaze.challenge, predictions("gaze", ("val", "test")), now=TEST_PHASE
    )
    assert (submission.status, submission.failure) == (Status.FAILED, GENERIC)
    assert "RuntimeError: gaze_test_targets.txt: target 3 is 0.4217" in submission.failure_detail


def test_a_failure_on_public_splits_keeps_its_reason(gaze, participant, submit_zip, monkeypatch):
    nan_crps(monkeypatch)
    submission = submit_zip(participant, gaze.challenge, predictions("gaze"), now=VALIDATION)
    assert submission.status == Status.FAILED
    assert submission.failure == "ValueError: loss crps of the val split came out as NaN"
    # After publication the test split is public too.
    challenge = gaze.challenge
    type(challenge).objects.filter(pk=challenge.pk).update(results_published=True)
    files = predictions("gaze", ("test",))
    after = submit_zip(participant, challenge, files, now=AFTER)
    assert after.failure == "ValueError: loss crps of the test split came out as NaN"


def test_without_test_targets_a_file_is_still_checked_against_the_inputs(
    gaze, participant, submit_zip, target_reads, django_capture_on_commit_callbacks
):
    from datasets.services import delete_file

    with django_capture_on_commit_callbacks(execute=True):
        delete_file(gaze.files.get(split="test", kind=Kind.TARGETS))
    target_reads.clear()  # the baseline, scored again
    submission = submit_zip(
        participant, gaze.challenge, {"gaze_test_predict.txt": b"oops\n"}, now=TEST_PHASE
    )
    assert submission.status == Status.INVALID  # checked against the inputs' row count
    assert target_reads == []


def test_error_reports_are_cut_to_20_kb_with_a_count_of_the_rest():
    lines = [f"gaze_val_predict.txt:{i}: " + "x" * 300 for i in range(1, 102)]
    report = bounded_report(lines)
    assert len(json.dumps(report)) <= REPORT_MAX_BYTES == 20_000
    kept = len(report) - 1
    assert report[:kept] == lines[:kept]
    assert report[-1] == f"… and {101 - kept} more lines of this report, left out (over 20 KB)"
    assert bounded_report(lines[:3]) == lines[:3]
    (long,) = bounded_report(["a" * 50_000])
    assert len(long) == 1000 and long.endswith("…")
