"""submissions.outcomes: a run's outcome written (its rows replaced, its status set), one
run or a batch's at once, and the splits whose scores came or went."""

from challenge_site.submissions import evaluation, outcomes
from challenge_site.submissions.models import Score, SplitResult, Status, Submission
from challenge_site.submissions.services import score_submission
from tests.factories import VALIDATION

from .helpers import predictions, queued_submission


def _evaluated(submission) -> evaluation.Outcome:
    return evaluation.evaluate(
        Submission.objects.select_related("dataset__challenge").get(pk=submission.pk)
    )


def test_a_batch_of_outcomes_replaces_each_ones_rows_and_names_the_splits_that_changed(
    gaze, participant, submit_zip, django_assert_max_num_queries
):
    scored = submit_zip(
        participant, gaze.challenge, predictions("gaze", ("train", "val")), now=VALIDATION
    )
    assert set(SplitResult.objects.filter(submission=scored).values_list("split", flat=True)) == {
        "train",
        "val",
    }
    fresh = queued_submission(participant, gaze.challenge)
    # The scored entry's new run ends failed, the fresh one's scored (val only).
    failed = evaluation.Outcome.failed("a fault", "detail")
    runs = [
        (Submission.objects.get(pk=scored.pk), failed, {}),
        (Submission.objects.get(pk=fresh.pk), _evaluated(fresh), {}),
    ]
    with django_assert_max_num_queries(20):
        changed = outcomes.store_many(runs)
    assert changed == {scored.pk: {"train", "val"}, fresh.pk: {"val"}}
    assert not Score.objects.filter(submission=scored).exists()
    assert not SplitResult.objects.filter(submission=scored).exists()
    assert Submission.objects.get(pk=scored.pk).status == Status.FAILED
    assert Submission.objects.get(pk=fresh.pk).status == Status.SCORED
    assert Score.objects.filter(submission=fresh, split="val").count() == 4


def test_a_batch_writes_the_same_rows_as_runs_one_at_a_time(gaze, participant, settings):
    settings.SUBMISSION_BATCH_SIZE = 1
    one = queued_submission(participant, gaze.challenge)
    score_submission(submission_id=one.pk)
    alone = sorted(Score.objects.filter(submission=one).values_list("split", "loss", "value"))
    two = queued_submission(participant, gaze.challenge)  # the same file
    outcomes.store_many([(Submission.objects.get(pk=two.pk), _evaluated(two), {})])
    assert (
        sorted(Score.objects.filter(submission=two).values_list("split", "loss", "value")) == alone
    )
