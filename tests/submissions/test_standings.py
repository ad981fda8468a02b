"""submissions.standings: what follows from a change to a participant's entries: the
splits they are scored on (the test's parts too), the intervals asked for again, and
the listing told to the apps above (their Ladder and final entries recomputed here)."""

import pytest

from challenge_site.submissions import signals, standings
from challenge_site.submissions.entrants import Entrant
from datasets.models import Dataset
from tests.factories import make_user
from tests.leaderboard.helpers import add_entry, reg


@pytest.fixture
def heard():
    """What the submissions app told the apps above, in order."""
    told = []

    def stale(sender, dataset_id, split, **kwargs):
        told.append(("intervals_stale", dataset_id, split))

    def listing(sender, dataset, entrant=None, entrants=None, **kwargs):
        # One signal for a batch's participants (entrants), in the order given.
        for one in [entrant] if entrants is None else entrants:
            told.append(("listing_changed", dataset.pk, one))

    signals.intervals_stale.connect(stale, sender=Dataset)
    signals.listing_changed.connect(listing, sender=Dataset)
    yield told
    signals.intervals_stale.disconnect(stale, sender=Dataset)
    signals.listing_changed.disconnect(listing, sender=Dataset)


def test_the_test_split_is_scored_with_its_parts_when_the_challenge_has_them():
    assert standings.scored_splits(["val"], has_public_part=True) == ["val"]
    assert standings.scored_splits(["test"], has_public_part=False) == ["test"]
    assert standings.scored_splits(["test", "val"], has_public_part=True) == [
        "private",
        "public",
        "test",
        "val",
    ]


def test_a_change_asks_for_intervals_and_tells_the_listing(gaze, heard):
    ada = make_user("ada")
    entry = add_entry(gaze, user=ada, val=reg(0.5, 0.4))
    heard.clear()
    standings.entries_changed(dataset=gaze, entrant=Entrant.of(entry), splits=["val"])
    assert heard == [
        ("intervals_stale", gaze.pk, "val"),
        ("listing_changed", gaze.pk, Entrant(None, ada.pk)),
    ]


def test_after_a_deletion_a_participant_or_dataset_that_went_is_left_out(gaze, heard):
    ada = make_user("ada")
    gone = Entrant(None, ada.pk + 100)
    standings.entry_deleted(dataset_id=gaze.pk, entrant=gone, splits=["val"])
    assert heard == [("intervals_stale", gaze.pk, "val"), ("listing_changed", gaze.pk, None)]
    heard.clear()
    standings.entry_deleted(dataset_id=gaze.pk + 100, entrant=Entrant(None, ada.pk), splits=["val"])
    assert heard == []
