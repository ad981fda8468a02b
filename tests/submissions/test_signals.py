"""submissions.signals: what the apps above submissions hear of its changes, through
signals they connect in their AppConfig.ready() (submissions imports none of them); each
receiver runs in the sender's transaction."""

from django.core import mail

from challenge_site.submissions import signals
from challenge_site.submissions.models import Submission
from datasets.models import Dataset
from tests.factories import make_user
from tests.leaderboard.helpers import add_entry, reg


def answered_by(responses) -> list[str]:
    return [f"{receiver.__module__}.{receiver.__name__}" for receiver, _ in responses]


def test_the_leaderboard_hears_of_listings_and_stale_intervals(gaze):
    listing = signals.listing_changed.send(sender=Dataset, dataset=gaze, entrant=None)
    assert answered_by(listing) == ["challenge_site.leaderboard.receivers.listing_changed"]
    stale = signals.intervals_stale.send(sender=Dataset, dataset_id=gaze.pk, split="val")
    assert answered_by(stale) == ["challenge_site.leaderboard.receivers.intervals_stale"]


def test_the_notifications_hear_that_scoring_finished(gaze):
    entry = add_entry(gaze, user=make_user("ada"), val=reg(0.5, 0.4))
    responses = signals.scoring_finished.send(sender=Submission, submissions=[entry])
    assert [name.split(".")[:2] for name in answered_by(responses)] == [
        ["challenge_site", "notifications"]
    ]
    assert mail.outbox == []  # ada asked for no e-mail
