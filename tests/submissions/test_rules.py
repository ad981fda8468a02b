"""Phase rules of submissions.services.submit: which splits each phase takes and the
paper's marks (the submission limits: test_limits.py)."""

from datetime import UTC, datetime

import pytest

from challenge_site.submissions.models import Status, Submission
from challenge_site.submissions.services import Rejected
from tests.factories import AFTER, BEFORE_START, TEST_PHASE, VALIDATION

from .helpers import predictions


def rejected(submit_zip, user, challenge, files, *, now, **kwargs) -> dict[str, list[str]]:
    with pytest.raises(Rejected) as caught:
        submit_zip(user, challenge, files, now=now, **kwargs)
    return caught.value.errors


@pytest.mark.parametrize(
    ("now", "splits", "phase", "mark"),
    [
        (VALIDATION, ("val",), "validation", "<"),
        (VALIDATION, ("train", "val"), "validation", "<"),
        (TEST_PHASE, ("test",), "test", ""),
        (TEST_PHASE, ("train", "val", "test"), "test", ""),
        (AFTER, ("val",), "post", ">"),
        (AFTER, ("train",), "post", ">"),
        (AFTER, ("train", "val", "test"), "post", ">"),
    ],
)
def test_accepted_splits_phase_and_mark(gaze, participant, submit_zip, now, splits, phase, mark):
    submission = submit_zip(participant, gaze.challenge, predictions("gaze", splits), now=now)
    assert (submission.phase, submission.mark, submission.status) == (phase, mark, Status.SCORED)
    assert submission.splits == list(splits)


def test_moment_of_the_marks(gaze, participant, submit_zip):
    challenge = gaze.challenge
    just_before = datetime(2030, 1, 31, 23, 59, 59, tzinfo=UTC)
    assert submit_zip(participant, challenge, predictions("gaze"), now=just_before).mark == "<"
    at_test_start = challenge.test_start
    files = predictions("gaze", ("test",))
    assert submit_zip(participant, challenge, files, now=at_test_start).mark == ""
    assert submit_zip(participant, challenge, files, now=challenge.deadline).mark == ""
    after = datetime(2030, 2, 9, 0, 0, 0, tzinfo=UTC)
    assert submit_zip(participant, challenge, files, now=after).mark == ">"


def test_test_predictions_wait_for_the_test_phase(gaze, participant, submit_zip):
    errors = rejected(
        submit_zip,
        participant,
        gaze.challenge,
        predictions("gaze", ("val", "test")),
        now=VALIDATION,
    )
    assert errors == {
        "file": [
            "gaze_test_predict.txt: test predictions are accepted from the test phase, "
            "which begins 01 Feb 2030 00:00 UTC"
        ]
    }


def test_each_phase_requires_its_own_split(gaze, participant, submit_zip):
    errors = rejected(
        submit_zip, participant, gaze.challenge, predictions("gaze", ("train",)), now=VALIDATION
    )
    assert errors == {
        "file": [
            "the validation phase needs gaze_val_predict.txt (the zip holds gaze_train_predict.txt)"
        ]
    }
    errors = rejected(
        submit_zip, participant, gaze.challenge, predictions("gaze", ("val",)), now=TEST_PHASE
    )
    assert errors == {
        "file": ["the test phase needs gaze_test_predict.txt (the zip holds gaze_val_predict.txt)"]
    }


def test_nothing_is_accepted_before_the_challenge_opens(gaze, participant, submit_zip):
    errors = rejected(
        submit_zip, participant, gaze.challenge, predictions("gaze"), now=BEFORE_START
    )
    assert errors == {"__all__": ["submissions open with the challenge, 10 Jan 2030 00:00 UTC"]}
    assert not Submission.objects.exists()


def test_unknown_dataset_in_the_form_or_the_file_names(gaze, participant, submit_zip):
    errors = rejected(
        submit_zip,
        participant,
        gaze.challenge,
        predictions("gaze"),
        now=VALIDATION,
        dataset_name="nope",
    )
    assert errors == {"dataset": ["no dataset 'nope'; choose one of gaze"]}
    errors = rejected(submit_zip, participant, gaze.challenge, predictions("wheat"), now=VALIDATION)
    assert errors == {
        "file": [
            "wheat_val_predict.txt: this challenge has no dataset 'wheat'; its datasets are gaze"
        ]
    }


def test_rejected_upload_leaves_no_file_behind(gaze, participant, submit_zip, storage_roots):
    rejected(
        submit_zip, participant, gaze.challenge, predictions("gaze", ("train",)), now=VALIDATION
    )
    assert not (storage_roots["private"] / "submissions").exists()
