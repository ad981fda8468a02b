"""submissions.receivers: the submissions app's answers to changes and questions below
it: a new public part rescores the challenge's entries, a new number of final entries or
ranking loss recomputes those that count and the Ladder, and publication asks what it
would show."""

from challenge_site.submissions import receivers
from challenge_site.submissions.models import Score, Submission
from tests.factories import TEST_PHASE, make_challenge, make_dataset, make_user
from tests.leaderboard.helpers import add_entry, cls, reg

from .helpers import predictions


def test_publication_counts_the_listed_entries_and_scores_of_the_split(challenge, gaze):
    ada, grace = make_user("ada"), make_user("grace")
    add_entry(gaze, user=ada, test=reg(0.5, 0.4))
    add_entry(gaze, user=grace, test=reg(0.6, 0.4), status="invalid")  # not listed
    add_entry(gaze, user=grace, val=reg(0.6, 0.4))  # another split
    coins = make_dataset(challenge, "coins", task="classification")
    add_entry(coins, user=grace, test=cls(0.3, 0.2))
    add_entry(make_dataset(make_challenge(slug="other"), "gaze"), user=ada, test=reg(1, 1))
    assert receivers.exposure_counted(challenge=challenge, split="test") == {
        # One Score row per loss of the listed entry's test split.
        gaze.pk: {"test_entries": 1, "test_scores": len(reg(0.5, 0.4))},
        coins.pk: {"test_entries": 1, "test_scores": len(cls(0.3, 0.2))},
    }


def test_a_new_public_part_rescores_every_finished_entry(
    challenge, gaze, submit_zip, django_capture_on_commit_callbacks
):
    ada = make_user("ada")
    entry = submit_zip(ada, challenge, predictions("gaze", ("val", "test")), now=TEST_PHASE)
    assert (
        receivers.options_changed(
            challenge=challenge, public_part_changed=False, final_entries_changed=True
        )
        == 0
    )
    challenge.test_public_fraction = 0.4
    challenge.save()
    with django_capture_on_commit_callbacks(execute=True):
        queued = receivers.options_changed(
            challenge=challenge, public_part_changed=True, final_entries_changed=False
        )
    assert queued == Submission.objects.filter(dataset=gaze).count() >= 1
    splits = set(Score.objects.filter(submission=entry).values_list("split", flat=True))
    assert {"public", "private"} <= splits


def test_a_new_ranking_loss_moves_the_ladder_to_it(challenge, submit_zip):
    challenge.test_public_fraction = 0.4
    challenge.feedback = "ladder"
    challenge.save()
    gaze = make_dataset(challenge, "gaze")
    entry = submit_zip(
        make_user("ada"), challenge, predictions("gaze", ("val", "test")), now=TEST_PHASE
    )

    def shown(loss):
        return Score.objects.filter(
            submission=entry, split="val", loss=loss, ladder_value__isnull=False
        ).count()

    assert (shown("nlpd"), shown("crps")) == (1, 0)
    gaze.ranking_loss = "crps"
    gaze.save()
    receivers.ranking_loss_changed(dataset=gaze)
    assert (shown("nlpd"), shown("crps")) == (0, 1)
