"""submissions.limits: the submission limits per participant, dataset and phase (per UTC
day, and over the test phase), and the daily cap on a user's invalid or failed uploads."""

from datetime import UTC, datetime

import pytest

from challenge_site.submissions.limits import LimitReached, allowances
from challenge_site.submissions.models import Status, Submission
from challenge_site.submissions.services import Rejected
from tests.factories import AFTER, TEST_PHASE, VALIDATION, make_dataset

from .helpers import predictions


def rejected(submit_zip, user, challenge, files, *, now, **kwargs) -> dict[str, list[str]]:
    with pytest.raises(Rejected) as caught:
        submit_zip(user, challenge, files, now=now, **kwargs)
    return caught.value.errors


def _fill(submit_zip, user, challenge, files, n, *, now):
    return [submit_zip(user, challenge, files, now=now) for _ in range(n)]


def test_validation_daily_limit_counts_per_user_dataset_and_utc_day(
    challenge, participant, other, submit_zip
):
    challenge.val_daily_limit = 2
    challenge.save()
    gaze = make_dataset(challenge, "gaze")
    make_dataset(challenge, "outaouais")
    files = predictions("gaze")
    morning = datetime(2030, 1, 20, 0, 0, 0, tzinfo=UTC)
    _fill(submit_zip, participant, challenge, files, 2, now=morning)
    with pytest.raises(LimitReached) as caught:
        submit_zip(participant, challenge, files, now=datetime(2030, 1, 20, 23, 59, 59, tzinfo=UTC))
    assert caught.value.message == (
        "you have made 2 submissions to gaze today, the daily limit in the validation phase; "
        "the limit resets at 00:00 UTC"
    )
    assert caught.value.retry_after == 2
    # Another user, another dataset and the next UTC day are not affected.
    submit_zip(other, challenge, files, now=morning)
    submit_zip(participant, challenge, predictions("outaouais"), now=morning)
    submit_zip(participant, challenge, files, now=datetime(2030, 1, 21, tzinfo=UTC))
    assert Submission.objects.filter(user=participant, dataset=gaze).count() == 3

    rows = {
        a.dataset.name: a for a in allowances(user=participant, challenge=challenge, now=morning)
    }
    assert (rows["gaze"].used_today, rows["gaze"].daily_limit, rows["gaze"].remaining) == (2, 2, 0)
    assert (rows["outaouais"].used_today, rows["outaouais"].remaining) == (1, 1)


def test_invalid_submissions_do_not_count(gaze, participant, submit_zip):
    challenge = gaze.challenge
    challenge.val_daily_limit = 1
    challenge.save()
    bad = submit_zip(participant, challenge, {"gaze_val_predict.txt": b"oops\n"}, now=VALIDATION)
    assert bad.status == Status.INVALID
    good = submit_zip(participant, challenge, predictions("gaze"), now=VALIDATION)
    assert good.status == Status.SCORED
    with pytest.raises(LimitReached):
        submit_zip(participant, challenge, predictions("gaze"), now=VALIDATION)


@pytest.mark.parametrize("now", [VALIDATION, TEST_PHASE])
def test_failed_submissions_count(gaze, participant, submit_zip, now):
    """Whether scoring failed may depend on a hidden target (a bug): it must not decide
    whether the upload counts."""
    challenge = gaze.challenge
    challenge.val_daily_limit = challenge.test_daily_limit = 1
    challenge.save()
    split = "val" if now == VALIDATION else "test"
    failed = submit_zip(participant, challenge, predictions("gaze", (split,)), now=now)
    Submission.objects.filter(pk=failed.pk).update(status=Status.FAILED)
    with pytest.raises(LimitReached):
        submit_zip(participant, challenge, predictions("gaze", (split,)), now=now)
    (allowance,) = allowances(user=participant, challenge=challenge, now=now)
    assert (allowance.used_today, allowance.remaining) == (1, 0)


def test_invalid_or_failed_uploads_are_capped_per_user_and_day(
    gaze, participant, other, submit_zip, settings
):
    settings.SUBMISSION_MAX_REJECTED_PER_DAY = 2
    challenge = gaze.challenge
    morning = datetime(2030, 1, 20, 6, 0, tzinfo=UTC)
    bad = {"gaze_val_predict.txt": b"oops\n"}
    assert submit_zip(participant, challenge, bad, now=morning).status == Status.INVALID
    failed = submit_zip(participant, challenge, predictions("gaze"), now=morning)
    Submission.objects.filter(pk=failed.pk).update(status=Status.FAILED)
    for files in (bad, predictions("gaze")):  # even a good file waits for the next day
        with pytest.raises(LimitReached) as caught:
            submit_zip(participant, challenge, files, now=morning)
        assert caught.value.message == (
            "you have made 2 uploads today that were invalid or could not be scored, the "
            "most a participant may make in a day; uploads are accepted again at 00:00 UTC. "
            "Check your files with python -m scoring evaluate first (see the file formats page)"
        )
        assert caught.value.retry_after == 18 * 3600 + 1
    assert Submission.objects.filter(user=participant).count() == 2
    # Other users and the next day are not affected.
    assert submit_zip(other, challenge, bad, now=morning).status == Status.INVALID
    next_day = datetime(2030, 1, 21, tzinfo=UTC)
    assert submit_zip(participant, challenge, predictions("gaze"), now=next_day).status == (
        Status.SCORED
    )


def test_queued_and_running_submissions_count(gaze, participant, submit_zip):
    challenge = gaze.challenge
    challenge.val_daily_limit = 2
    challenge.save()
    first, second = _fill(
        submit_zip, participant, challenge, predictions("gaze"), 2, now=VALIDATION
    )
    Submission.objects.filter(pk=first.pk).update(status=Status.QUEUED)
    Submission.objects.filter(pk=second.pk).update(status=Status.RUNNING)
    with pytest.raises(LimitReached):
        submit_zip(participant, challenge, predictions("gaze"), now=VALIDATION)


def test_test_phase_daily_and_total_limits(gaze, participant, submit_zip):
    challenge = gaze.challenge
    challenge.test_daily_limit, challenge.test_total_limit = 2, 3
    challenge.val_daily_limit = None
    challenge.save()
    # Validation-phase submissions count only against the validation phase (no limit here).
    _fill(submit_zip, participant, challenge, predictions("gaze"), 4, now=VALIDATION)
    files = predictions("gaze", ("test",))
    day1, day2 = datetime(2030, 2, 2, 9, tzinfo=UTC), datetime(2030, 2, 3, 9, tzinfo=UTC)
    _fill(submit_zip, participant, challenge, files, 2, now=day1)
    with pytest.raises(LimitReached, match="daily limit in the test phase"):
        submit_zip(participant, challenge, files, now=day1)
    submit_zip(participant, challenge, files, now=day2)
    with pytest.raises(LimitReached) as caught:
        submit_zip(participant, challenge, files, now=day2)
    assert caught.value.message == (
        "you have made 3 submissions to gaze in the test phase, its overall limit"
    )
    assert caught.value.retry_after is None
    (row,) = allowances(user=participant, challenge=challenge, now=day2)
    assert (row.used_today, row.used_total, row.total_limit, row.remaining) == (1, 3, 3, 0)


def test_after_the_deadline_the_daily_limit_holds_but_not_the_total(gaze, participant, submit_zip):
    challenge = gaze.challenge
    challenge.test_daily_limit, challenge.test_total_limit = 2, 1
    challenge.save()
    files = predictions("gaze", ("test",))
    submit_zip(participant, challenge, files, now=TEST_PHASE)
    _fill(submit_zip, participant, challenge, files, 2, now=AFTER)
    with pytest.raises(LimitReached, match="daily limit in the post-challenge"):
        submit_zip(participant, challenge, files, now=AFTER)


def test_unlimited_phase(gaze, participant, submit_zip):
    challenge = gaze.challenge
    assert challenge.val_daily_limit is None
    _fill(submit_zip, participant, challenge, predictions("gaze"), 7, now=VALIDATION)
    (row,) = allowances(user=participant, challenge=challenge, now=VALIDATION)
    assert (row.used_today, row.remaining) == (7, None)


def test_refused_over_the_limit_leaves_no_file_behind(gaze, participant, submit_zip, storage_roots):
    challenge = gaze.challenge
    challenge.val_daily_limit = 1
    challenge.save()
    kept = submit_zip(participant, challenge, predictions("gaze"), now=VALIDATION)
    with pytest.raises(LimitReached):
        submit_zip(participant, challenge, predictions("gaze"), now=VALIDATION)
    stored = sorted(p.name for p in (storage_roots["private"] / "submissions").rglob("*.zip"))
    assert stored == [kept.file.name.rsplit("/", 1)[1]]


def test_challenge_without_datasets(challenge, participant, submit_zip):
    errors = rejected(submit_zip, participant, challenge, predictions("gaze"), now=VALIDATION)
    assert errors == {
        "file": ["gaze_val_predict.txt: this challenge has no dataset 'gaze'; it has none yet"]
    }
