"""The parts of a challenge's data that its phases release and its scores are computed on.

They belong to the challenge's timeline (the release rules of challenges.policy speak of
them), so they sit here, below the datasets app whose files and scores are keyed by them.
"""

from django.db import models


class Split(models.TextChoices):
    TRAIN = "train", "Training"
    VAL = "val", "Validation"
    TEST = "test", "Test"


class ScoredSplit(models.TextChoices):
    """What a score is computed on: a split, or one of the test split's two parts when the
    challenge has a public part (Challenge.test_public_fraction)."""

    TRAIN = "train", "Training"
    VAL = "val", "Validation"
    TEST = "test", "Test"
    PUBLIC = "public", "Test, public part"
    PRIVATE = "private", "Test, private part"


# The test split's parts, scored beside the whole test split.
TEST_PARTS = (ScoredSplit.PUBLIC, ScoredSplit.PRIVATE)


class Kind(models.TextChoices):
    INPUTS = "inputs", "Inputs"
    TARGETS = "targets", "Targets"
    # A slice name per example of the validation or test split (scoring.md §8): optional,
    # never released (no release rule names it), read only by the scoring workers.
    SLICES = "slices", "Slices"


# The files every dataset releases over the challenge (the six of a dataset's folder).
RELEASED_KINDS = (Kind.INPUTS, Kind.TARGETS)
# The splits a slices file may label (scoring.md §8).
SLICED_SPLITS = (Split.VAL, Split.TEST)
