"""challenges.splits: the parts of a challenge's data that its phases release and its
scores are computed on, as stored and as shown."""

import scoring.archive
from challenge_site.challenges.splits import (
    RELEASED_KINDS,
    SLICED_SPLITS,
    TEST_PARTS,
    Kind,
    ScoredSplit,
    Split,
)


def test_the_splits_are_those_of_the_prediction_file_names():
    assert [(s.value, s.label) for s in Split] == [
        ("train", "Training"),
        ("val", "Validation"),
        ("test", "Test"),
    ]
    # A participant's machine names files by scoring's own enum: the same values.
    assert [s.value for s in Split] == [s.value for s in scoring.archive.Split]


def test_scores_are_also_computed_on_the_test_parts():
    assert [s.value for s in ScoredSplit] == ["train", "val", "test", "public", "private"]
    assert ScoredSplit.PUBLIC.label == "Test, public part"
    assert TEST_PARTS == (ScoredSplit.PUBLIC, ScoredSplit.PRIVATE)
    assert {s.value for s in Split} < {s.value for s in ScoredSplit}


def test_each_split_has_inputs_and_targets_and_may_have_slices():
    assert [(k.value, k.label) for k in Kind] == [
        ("inputs", "Inputs"),
        ("targets", "Targets"),
        ("slices", "Slices"),
    ]
    assert RELEASED_KINDS == (Kind.INPUTS, Kind.TARGETS)
    assert SLICED_SPLITS == (Split.VAL, Split.TEST)
