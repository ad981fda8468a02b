"""submissions.retention: the zips no longer kept: invalid ones after the retention days
(their reports stay), and a deleted submission's, once the deletion commits."""

from datetime import timedelta

from challenge_site.submissions.models import Status, Submission
from challenge_site.submissions.services import purge_invalid_zips, rescore, score_submission
from tests.factories import VALIDATION

from .helpers import predictions


def test_a_purged_submission_is_not_rescored(gaze, participant, submit_zip, settings):
    settings.SUBMISSION_INVALID_ZIP_RETENTION_DAYS = 7
    bad = submit_zip(participant, gaze.challenge, {"gaze_val_predict.txt": b"x\n"}, now=VALIDATION)
    Submission.objects.filter(pk=bad.pk).update(finished_at=VALIDATION - timedelta(days=30))
    assert purge_invalid_zips(now=VALIDATION) == 1
    assert score_submission(submission_id=bad.pk, force=True) is None
    bad.refresh_from_db()
    assert (bad.status, bad.attempts) == (Status.INVALID, 1)
    assert rescore(submissions=Submission.objects.filter(pk=bad.pk)) == 0


def test_deleting_a_submission_deletes_its_zip(
    admin_client, gaze, participant, submit_zip, storage_roots, django_capture_on_commit_callbacks
):
    submission = submit_zip(participant, gaze.challenge, predictions("gaze"), now=VALIDATION)
    stored = storage_roots["private"] / submission.file.name
    assert stored.is_file()
    assert (
        admin_client.get(f"/admin/submissions/submission/{submission.pk}/change/").status_code
        == 200
    )
    with django_capture_on_commit_callbacks(execute=True):
        participant.delete()  # cascades to the submission
    assert not Submission.objects.filter(pk=submission.pk).exists()
    assert not stored.exists()
