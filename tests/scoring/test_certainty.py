"""Evaluation.certain (scoring.certainty): the examples a file claims certainty on.

A certain example is one whose predictive distribution gives some outcome probability 0
(binary p of 0 or 1, a class of probability 0 after normalisation and averaging, a zero
variance); the count reads the predictions only and a part of a file keeps the whole
file's count.
"""

import math

import numpy as np
import pytest

import scoring
from scoring import ScoringOptions, evaluate
from scoring.certainty import binary_certain, multiclass_certain, regression_certain
from scoring.distributions import Stats
from scoring.regression_rows import GAUSSIAN, QUANTILES, SAMPLE, Group, RegressionRows

from .util import arr, lines_of

MULTICLASS = ScoringOptions(classes=3)


def test_binary_counts_probabilities_of_exactly_0_and_1():
    # 1e-300 and 1 − 1e-16 are tiny but positive claims; 0.99999999999999999 is the
    # double 1 (what the losses read) and is certain.
    lines = ["0", "1", "1e-300", "0.5", "0.9999999999999999", "0.99999999999999999", "0.3"]
    result = evaluate(lines_of(lines), arr(-1, 1, 1, 1, -1, 1, -1), task="classification")
    assert result.certain == 3
    assert result.non_probabilistic is False
    assert math.isfinite(result.scores["nlp"])  # none of the ruled-out outcomes happened
    flipped = evaluate(lines_of(lines), arr(1, -1, 1, 1, -1, 1, -1), task="classification")
    assert flipped.certain == 3 and flipped.scores["nlp"] == math.inf  # (from p alone)


def test_binary_count_is_where_a_label_would_make_nlp_infinite():
    rng = np.random.default_rng(28)
    p = rng.uniform(size=400)
    p[rng.choice(400, 37, replace=False)] = rng.choice([0.0, 1.0], size=37)
    t = np.where(rng.uniform(size=400) < 0.5, 1.0, -1.0)
    text = "\n".join(repr(float(x)) for x in p).encode() + b"\n"
    result = evaluate(text, t, task="classification")
    flipped = evaluate(text, -t, task="classification")
    infinite = np.isinf(result.terms()["nlp"]) | np.isinf(flipped.terms()["nlp"])
    assert result.certain == binary_certain(p) == int(infinite.sum()) == 37


def test_a_non_probabilistic_file_counts_every_example():
    result = evaluate(lines_of(["0", "1", "1"]), arr(-1, 1, -1), task="classification")
    assert result.non_probabilistic and result.certain == 3


def test_subsets_and_slices_keep_the_whole_files_count():
    lines = ["0", "0.2", "0.7", "1", "0.4", "0.6"]
    result = evaluate(lines_of(lines), arr(-1, 1, 1, 1, -1, 1), task="classification")
    assert result.certain == 2
    # The part without a certain example says 2 all the same: a count per part would
    # tell which examples are in it.
    part = result.subset(arr(0, 1, 1, 0, 1, 1) == 1)
    assert part.n == 4 and part.certain == 2
    assert binary_certain(part.context.p) == 0  # (what a per-part count would say)
    slices = result.by_slice(np.array(["a", "a", "b", "b", "c", "c"]))
    assert {name: s.certain for name, s in slices.items()} == {"a": 2, "b": 2, "c": 2}


def test_multiclass_counts_rows_that_rule_a_class_out():
    lines = [
        "0.5 0.5 0",  # a zero class
        "1 0 0",  # one-hot: two zeros, counted once
        "0.2 0.3 0.5",
        "1e-300 0.5 0.5",  # tiny, positive
        "0.1 0.9 0",
    ]
    result = evaluate(lines_of(lines), arr(0, 0, 1, 2, 1), task="multiclass", options=MULTICLASS)
    assert result.certain == 3
    assert math.isfinite(result.scores["nlp"])
    assert multiclass_certain(result.context.multiclass) == 3


def test_multiclass_ensembles_are_counted_after_averaging():
    lines = [
        "1 0 0 0 1 0",  # two one-hot members: their mean rules class 2 out
        "1 0 0 0 0.5 0.5",  # the first member rules classes out, the mean none
        "0.2 0.3 0.5 0.4 0.4 0.2",
        "0.5 0.5 0 0.5 0.5 0",  # both members rule class 2 out
    ]
    result = evaluate(lines_of(lines), arr(0, 1, 2, 0), task="multiclass", options=MULTICLASS)
    assert result.certain == 2
    assert result.non_probabilistic is False


def test_multiclass_values_below_the_smallest_double_are_no_certainty():
    # The members' mean of class 0, 2.5e-324, is half the smallest double: it rounds to
    # the double 0, but its exact value (the row kept exactly) is positive, so it is no
    # claim of certainty, and its nlp term is finite.
    lines = ["5e-324 0.5 0.5 0 0.5 0.5", "0.2 0.3 0.5", "0 0.5 0.5"]
    result = evaluate(lines_of(lines), arr(0, 1, 1), task="multiclass", options=MULTICLASS)
    rows = result.context.multiclass
    assert rows.probs[0, 0] == 0 and 0 in rows.exact  # (the reader kept the row exactly)
    assert result.certain == 1
    assert math.isfinite(result.terms()["nlp"][0])


def test_regression_counts_zero_variance_rows():
    lines = [
        "1 0 0",  # a point Gaussian
        "1 0 1",
        "2 3 3 3",  # every sample equal
        "2 1 2",
        "2 5",  # a sample of one value
        "0 0.2 -1 0.8 1",
        "1 2 1e-300",  # tiny, positive
    ]
    targets = arr(0, 0.5, 3, 1, 5, 0, 2)
    result = evaluate(lines_of(lines), targets, task="regression")
    assert result.certain == 3
    assert result.non_probabilistic is False


def test_regression_equal_quantiles_are_certain():
    # The reader refuses quantiles that do not increase strictly; rows made another way
    # (a plug-in, a baseline) are counted by their values all the same.
    stats = Stats(np.zeros(3), np.zeros(3), np.zeros(3), np.full(3, 0.5))
    quantiles = Group(QUANTILES, np.array([0, 2]), arr(0.2, 0.8, 0.2, 0.8).reshape(2, 2), None)
    quantiles.second = np.array([[1.0, 1.0], [0.0, 2.0]])
    gaussian = Group(GAUSSIAN, np.array([1]), arr(0), arr(0))
    kind = np.array([QUANTILES, GAUSSIAN, QUANTILES], dtype=np.int8)
    rows = RegressionRows(kind, arr(np.nan, 0, np.nan), stats, [quantiles, gaussian])
    assert regression_certain(rows) == 2
    sample = Group(SAMPLE, np.array([0]), np.array([[4.0, 4.0, 4.0]]), None)
    rows = RegressionRows(np.array([SAMPLE], dtype=np.int8), arr(np.nan), stats, [sample])
    assert regression_certain(rows) == 1


def test_regression_point_file_and_a_constant_baseline_count_every_row():
    point = evaluate(lines_of(["1 0 0", "1 1 0"]), arr(0, 2), task="regression")
    assert point.non_probabilistic and point.certain == 2
    base = scoring.baseline(arr(3, 3, 3), arr(1, 2, 3, 4), task="regression")
    assert base.certain == 4  # training targets of variance 0: a point Gaussian
    spread = scoring.baseline(arr(1, 2, 3), arr(1, 2, 3, 4), task="regression")
    assert spread.certain == 0


@pytest.mark.parametrize("task", ["classification", "regression", "multiclass"])
def test_every_task_words_its_certainty(task):
    spec = scoring.get_task(task)
    assert spec.certain_what and "infinite" in spec.certain_risk
