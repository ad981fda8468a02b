"""datasets.receivers: the datasets app's answer when publication asks what it would
release: the files of the parts it releases, per dataset, in the datasets' order."""

from challenge_site.challenges.splits import Kind, Split
from datasets.receivers import exposure_counted
from tests.factories import make_challenge, make_dataset


def test_the_released_parts_files_per_dataset(db):
    challenge = make_challenge()
    gaze = make_dataset(challenge, "gaze", position=1)
    coins = make_dataset(challenge, "coins", task="classification", position=0)
    make_dataset(make_challenge(slug="other"), "gaze")  # another challenge's files: not counted
    parts = {(Split.TEST, Kind.TARGETS), (Split.VAL, Kind.TARGETS)}
    assert exposure_counted(challenge=challenge, parts=parts) == {
        coins.pk: {"released_files": ["coins_test_targets.txt", "coins_val_targets.txt"]},
        gaze.pk: {"released_files": ["gaze_test_targets.txt", "gaze_val_targets.txt"]},
    }
    assert exposure_counted(challenge=challenge, parts=set()) == {}
    assert list(exposure_counted(challenge=challenge, parts=parts)) == [coins.pk, gaze.pk]
