"""purge_invalid_zips: the command (and the beat's task) that deletes the zips of
submissions found invalid more than SUBMISSION_INVALID_ZIP_RETENTION_DAYS ago."""

from datetime import timedelta

import time_machine
from django.core.management import call_command

from challenge_site.submissions import tasks
from challenge_site.submissions.models import Status, Submission
from challenge_site.submissions.services import purge_invalid_zips
from tests.factories import VALIDATION

from .helpers import predictions


def test_zips_of_invalid_submissions_are_purged_after_the_retention(
    gaze, participant, submit_zip, settings, storage_roots, capsys,
    django_capture_on_commit_callbacks,
):  # fmt: skip
    settings.SUBMISSION_INVALID_ZIP_RETENTION_DAYS = 7
    bad = {"gaze_val_predict.txt": b"x\n"}
    old_invalid = submit_zip(participant, gaze.challenge, bad, now=VALIDATION)
    new_invalid = submit_zip(participant, gaze.challenge, bad, now=VALIDATION)
    old_scored = submit_zip(participant, gaze.challenge, predictions("gaze"), now=VALIDATION)
    old_failed = submit_zip(participant, gaze.challenge, predictions("gaze"), now=VALIDATION)
    week = timedelta(days=7)
    Submission.objects.filter(pk__in=[old_invalid.pk, old_scored.pk, old_failed.pk]).update(
        finished_at=VALIDATION - week - timedelta(seconds=1)
    )
    Submission.objects.filter(pk=old_failed.pk).update(status=Status.FAILED)
    Submission.objects.filter(pk=new_invalid.pk).update(finished_at=VALIDATION - week)
    paths = {s.pk: storage_roots["private"] / s.file.name for s in Submission.objects.all()}

    with (
        time_machine.travel(VALIDATION, tick=False),
        django_capture_on_commit_callbacks(execute=True),
    ):
        call_command("purge_invalid_zips")
    assert capsys.readouterr().out == "Deleted the zips of 1 invalid submission(s).\n"
    assert not paths[old_invalid.pk].exists()
    assert all(paths[s.pk].exists() for s in (new_invalid, old_scored, old_failed))
    purged = Submission.objects.get(pk=old_invalid.pk)
    assert (purged.file.name, purged.file_deleted_at) == ("", VALIDATION)
    assert purged.status == Status.INVALID and purged.errors  # the report stays
    assert purge_invalid_zips(now=VALIDATION) == 0  # nothing more is due yet

    with (
        time_machine.travel(VALIDATION + timedelta(days=1), tick=False),
        django_capture_on_commit_callbacks(execute=True),
    ):
        assert tasks.purge_invalid_zips.delay().get() == 1
    assert not paths[new_invalid.pk].exists()
