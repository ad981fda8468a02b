"""scoring.options: the dataset options that change how files are read and scored, and
the names of the built-in tasks."""

import math

import numpy as np
import pytest

from scoring import ScoringError, ScoringOptions, evaluate, read_regression
from scoring.options import (
    MAX_CLASSES,
    MAX_LINE_NUMBERS,
    MAX_MEMBERS,
    MAX_SAMPLES,
    NmseNormaliser,
    Task,
)

from .util import arr, lines_of


def test_the_defaults_are_the_2004_challenges():
    options = ScoringOptions()
    assert options.log_base == math.e and options.allow_samples
    assert options.min_quantile_gap == 0.0
    assert options.nmse_normaliser is NmseNormaliser.EVALUATED
    assert [str(task) for task in Task] == ["classification", "regression", "multiclass"]
    assert MAX_LINE_NUMBERS == MAX_SAMPLES + 1 == 1001
    assert options.classes is None and options.allow_ensembles
    assert (MAX_CLASSES, MAX_MEMBERS) == (1000, 100)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"log_base": 1}, "log_base must be a positive number other than 1, got 1"),
        ({"log_base": 0}, "log_base must be a positive number other than 1, got 0"),
        ({"log_base": math.inf}, "log_base must be a positive number other than 1, got inf"),
        ({"min_quantile_gap": -0.1}, "min_quantile_gap must be >= 0, got -0.1"),
        ({"min_quantile_gap": math.nan}, "min_quantile_gap must be >= 0, got nan"),
        ({"nmse_normaliser": "test"}, "'test' is not a valid NmseNormaliser"),
        ({"classes": 1}, "classes must be a whole number from 2 to 1000, got 1"),
        ({"classes": 1001}, "classes must be a whole number from 2 to 1000, got 1001"),
        ({"classes": 2.5}, "classes must be a whole number from 2 to 1000, got 2.5"),
        ({"classes": True}, "classes must be a whole number from 2 to 1000, got True"),
        ({"classes": "10"}, "classes must be a whole number from 2 to 1000, got '10'"),
        ({"classes": math.nan}, "classes must be a whole number from 2 to 1000, got nan"),
    ],
)
def test_impossible_options_are_refused(options, message):
    with pytest.raises(ValueError) as refused:
        ScoringOptions(**options)
    assert str(refused.value) == message


def test_the_normaliser_is_taken_by_name():
    assert ScoringOptions(nmse_normaliser="training").nmse_normaliser is NmseNormaliser.TRAINING


def test_the_options_change_the_scores_and_the_checks():
    targets = arr(0.0, 1.0)
    rows = lines_of(["1 0 1", "1 1 1"])
    nats = evaluate(rows, targets, task="regression").scores["nlpd"]
    bits = evaluate(rows, targets, task="regression", options=ScoringOptions(log_base=2))
    assert bits.scores["nlpd"] == pytest.approx(nats / math.log(2))
    samples = lines_of(["2 -1 0 1", "2 0 1 2"])
    assert read_regression(samples, path="p", targets=targets) is not None
    with pytest.raises(ScoringError, match="sample rows"):
        read_regression(
            samples, path="p", targets=targets, options=ScoringOptions(allow_samples=False)
        )


def test_the_class_count_is_kept_as_an_int():
    assert ScoringOptions(classes=np.int64(10)).classes == 10
    assert type(ScoringOptions(classes=10.0).classes) is int
    assert ScoringOptions(classes=2).classes == 2 and ScoringOptions(classes=1000).classes == 1000
    assert ScoringOptions(allow_ensembles=0).allow_ensembles is False


def test_quantile_levels_are_kept_as_a_tuple_of_floats():
    assert ScoringOptions().quantile_levels is None
    levels = ScoringOptions(quantile_levels=[0.05, 0.25, 0.5, 0.75, 0.95]).quantile_levels
    assert levels == (0.05, 0.25, 0.5, 0.75, 0.95) and type(levels) is tuple
    assert ScoringOptions(quantile_levels=np.array([0.5])).quantile_levels == (0.5,)
    assert ScoringOptions(quantile_levels=[np.float32(0.5)]).quantile_levels == (0.5,)
    many = [k / 100 for k in range(1, 100)]  # 99 levels, the most
    assert len(ScoringOptions(quantile_levels=many).quantile_levels) == 99
    hash(ScoringOptions(quantile_levels=[0.1, 0.9]))  # still a frozen, hashable value


@pytest.mark.parametrize(
    ("levels", "message"),
    [
        ([], "expected 1 to 99 quantile levels, got 0"),
        ([k / 101 for k in range(1, 101)], "expected 1 to 99 quantile levels, got 100"),
        ([0.5, 0.5], "quantile levels must increase strictly (0.5 after 0.5)"),
        ([0.7, 0.3], "quantile levels must increase strictly (0.3 after 0.7)"),
        ([0.0, 0.5], "quantile levels must lie strictly between 0 and 1, got 0.0"),
        ([0.5, 1], "quantile levels must lie strictly between 0 and 1, got 1"),
        ([math.nan], "quantile levels must lie strictly between 0 and 1, got nan"),
        ([True], "quantile levels must be numbers, got True"),
        (["0.5"], "quantile levels must be numbers, got '0.5'"),
        ("0.1,0.9", "quantile levels must be a list of numbers, got '0.1,0.9'"),
        (0.5, "quantile levels must be a list of numbers, got 0.5"),
    ],
)
def test_impossible_quantile_levels_are_refused(levels, message):
    with pytest.raises(ValueError) as refused:
        ScoringOptions(quantile_levels=levels)
    assert str(refused.value) == message
