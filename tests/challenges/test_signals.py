"""challenges.signals: what a change of a challenge means for the apps above it, asked
through signals that those apps connect in their AppConfig.ready() (challenges imports
none of them)."""

from challenge_site.challenges import signals
from challenge_site.challenges.models import Challenge
from challenge_site.challenges.splits import Kind, Split
from tests.factories import make_challenge, make_dataset, make_user
from tests.leaderboard.helpers import add_entry, reg


def answers(responses) -> dict:
    return {f"{receiver.__module__}.{receiver.__name__}": value for receiver, value in responses}


def test_the_datasets_and_the_submissions_count_what_publication_exposes(db):
    challenge = make_challenge()
    gaze = make_dataset(challenge, "gaze")
    add_entry(gaze, user=make_user("ada"), val=reg(0.5, 0.4), test=reg(0.6, 0.5))
    responses = signals.exposure_counted.send(
        sender=Challenge, challenge=challenge, parts={(Split.TEST, Kind.TARGETS)}, split="test"
    )
    assert answers(responses) == {
        "datasets.receivers.exposure_counted": {
            gaze.pk: {"released_files": ["gaze_test_targets.txt"]}
        },
        "challenge_site.submissions.receivers.exposure_counted": {
            gaze.pk: {"test_entries": 1, "test_scores": len(reg(0.6, 0.5))}  # one per loss
        },
    }


def test_the_submissions_answer_a_change_of_options(db):
    challenge = make_challenge()
    responses = signals.options_changed.send(
        sender=Challenge,
        challenge=challenge,
        public_part_changed=False,
        final_entries_changed=True,
    )
    assert answers(responses) == {
        "challenge_site.submissions.receivers.options_changed": 0,
        # Who the public boards list may have changed: redrawn, intervals computed again.
        "challenge_site.leaderboard.receivers.shown_entries_changed": 0,
    }
    # Another sender reaches nobody: the receivers listen to challenges only.
    assert (
        signals.options_changed.send(
            sender=object, challenge=challenge, public_part_changed=True, final_entries_changed=True
        )
        == []
    )


def test_the_leaderboard_answers_a_publication(db):
    challenge = make_challenge()
    responses = signals.results_published_changed.send(sender=Challenge, challenge=challenge)
    assert answers(responses) == {"challenge_site.leaderboard.receivers.shown_entries_changed": 0}
    assert signals.results_published_changed.send(sender=object, challenge=challenge) == []
