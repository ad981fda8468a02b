"""submissions.outcomes: a run's outcome written (its rows replaced, its status set), one
run or a batch's at once, and the splits whose scores came or went."""

from challenge_site.submissions import evaluation, outcomes, terms
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


def test_a_scored_run_keeps_its_compared_terms_for_its_participants_next_entry(gaze, participant):
    """The scoring path hands probing the stored terms files' names: the entry's
    compared array (its task's ranking terms of its first split of test, validation,
    training) is kept in terms.COMPARED under its file's name."""
    entry = queued_submission(participant, gaze.challenge)
    score_submission(submission_id=entry.pk)
    names = dict(SplitResult.objects.filter(submission=entry).values_list("split", "terms"))
    kept = terms.COMPARED.peek(names["val"])
    assert list(kept) == ["nlpd"]
    assert kept["nlpd"].tobytes() == terms.load(names["val"])["nlpd"].tobytes()
