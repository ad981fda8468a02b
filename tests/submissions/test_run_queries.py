"""One scoring run's own database work (bench/worker.py measures it on PostgreSQL with
S3): a bound on its queries, the on-commit hooks included, so that a query put back
into the path (a lock taken twice, a row read twice, a Ladder refreshed for a split
the entry is not scored on) fails here."""

from unittest import mock

import pytest

from challenge_site.leaderboard import interval_runs, plot_drawings
from challenge_site.leaderboard.models import IntervalRun
from challenge_site.submissions import services
from challenge_site.submissions.models import BoardLadder, Score, Status, Submission
from tests.factories import VALIDATION

from .helpers import predictions

# Measured when the bound was set, savepoints counted (SQLite and PostgreSQL agree): 67
# before the work of issue 29 (Must 6), 48 after.
MAX_QUERIES = 48


def _queued(participant, challenge) -> Submission:
    from django.core.files.uploadedfile import SimpleUploadedFile

    from tests.factories import make_zip

    with mock.patch.object(services, "enqueue"):
        return services.submit(
            user=participant,
            challenge=challenge,
            dataset_name="gaze",
            method="m",
            description="",
            authors="",
            upload=SimpleUploadedFile("p.zip", make_zip(predictions("gaze", ("val",), seed=3))),
            now=VALIDATION,
        )


@pytest.mark.django_db(transaction=False)
def test_a_scoring_run_stays_within_its_queries(
    gaze, participant, submit_zip, django_assert_max_num_queries, django_capture_on_commit_callbacks
):
    first = submit_zip(participant, gaze.challenge, predictions("gaze", ("val",)), now=VALIDATION)
    assert first.status == Status.SCORED
    second = _queued(participant, gaze.challenge)
    # What the hooks send is sent, not run here (as with a broker).
    with (
        mock.patch.object(interval_runs, "send") as intervals_sent,
        mock.patch.object(plot_drawings, "send"),
        django_assert_max_num_queries(MAX_QUERIES),
        django_capture_on_commit_callbacks(execute=True),
    ):
        services.score_submission(submission_id=second.pk)
    assert intervals_sent.called or IntervalRun.objects.filter(dataset_id=gaze.pk).exists()
    second.refresh_from_db()
    assert second.status == Status.SCORED
    # Its participant's Ladder took the step (the first entry set the shown score).
    ladder = Score.objects.get(submission=second, split="val", loss=gaze.effective_ranking_loss)
    assert ladder.ladder_accepted is not None


def test_a_validation_entry_leaves_the_public_parts_ladders_alone(gaze, participant, submit_zip):
    challenge = gaze.challenge
    challenge.test_public_fraction = 0.5
    challenge.save()
    entry = submit_zip(participant, challenge, predictions("gaze", ("val",)), now=VALIDATION)
    assert entry.status == Status.SCORED
    assert set(BoardLadder.objects.filter(dataset=gaze).values_list("split", flat=True)) == {"val"}
