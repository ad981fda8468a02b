"""scoring.tasks.binary: binary classification as one task object: its targets, its
losses in their order, the baseline, what probing compares and the README text."""

import math

import numpy as np
import pytest

from scoring import ScoringError, ScoringOptions, baseline, evaluate
from scoring.losses import losses_for
from scoring.plugins import is_plugin
from scoring.tasks import get_task
from scoring.tasks.binary import TASK

from ..util import arr, lines_of


def test_the_task_is_registered_under_its_stored_name_with_its_losses():
    assert get_task("classification") is TASK and TASK.label == "Classification"
    # (Plug-ins installed in this environment, e.g. plugins/floorlog, come after these.)
    assert [loss.name for loss in losses_for("classification") if not is_plugin(loss)] == [
        "nlp",
        "01l",
        "lift",
        "brier",
        "ece",
        "rauc",
        "aurc",
    ]
    assert [loss.legacy_number for loss in losses_for("classification")][:2] == [3, 4]
    assert TASK.settings == ()  # no dataset option of its own


def test_targets_are_plus_or_minus_one():
    options = ScoringOptions()
    assert TASK.target_error(arr(1, -1, 1), options) is None
    assert TASK.target_error(arr(1, 0, -1), options) == (
        "classification targets must be +1 or -1 (target 2 is 0.0)"
    )
    with pytest.raises(ScoringError, match="expected a class label of \\+1 or -1, found 2"):
        evaluate(lines_of(["0.5", "0.5"]), lines_of(["1", "2"]), task="classification")


def test_the_task_is_inferred_from_labels_and_one_number_lines():
    assert evaluate(lines_of(["0.9", "0.2"]), arr(1, -1)).task == "classification"
    assert evaluate(lines_of(["1 0.9 1", "1 0.2 1"]), arr(1, -1)).task == "regression"


def test_the_baseline_predicts_the_training_frequency_of_plus_one():
    result = baseline(arr(1, 1, 1, -1), arr(1, -1), task="classification")
    # p = 0.75 for both: −(ln 0.75 + ln 0.25) / 2.
    assert result.scores["nlp"] == pytest.approx(-(math.log(0.75) + math.log(0.25)) / 2)
    assert result.scores["01l"] == 0.5
    assert result.scores["brier"] == pytest.approx((0.25**2 + 0.75**2) / 2)


def test_a_file_of_zeros_and_ones_is_a_point_prediction():
    point = evaluate(lines_of(["1", "0", "1"]), arr(1, -1, -1), task="classification")
    assert point.non_probabilistic and point.scores["01l"] == pytest.approx(1 / 3)
    assert point.scores["nlp"] is None  # n/a: only the 0/1 loss ranks it
    assert not evaluate(lines_of(["0.9", "0", "1"]), arr(1, -1, 1)).non_probabilistic


def test_probing_compares_the_probabilities_and_the_plots_are_its_own():
    result = evaluate(lines_of(["0.5", "0.25", "0.5"]), arr(1, -1, 1), task="classification")
    assert TASK.probe_values(result.context).tolist() == [[0.5], [0.25], [0.5]]
    assert set(result.plot_data()) == {
        "reliability",
        "decomposition",
        "decomposition_intervals",
        "recalibration",
        "bands",
        "retention",
    }
    subset = TASK.subset(result.context, np.array([True, False, True]))
    assert subset.p.tolist() == [0.5, 0.5] and subset.targets.tolist() == [1.0, 1.0]


def test_the_readme_explains_the_prediction_file():
    help_text = "\n\n".join(TASK.format_help(ScoringOptions()))
    assert help_text.startswith("Predictions (classification)\n----------------------------\n")
    assert "    0.91\n    0.0625\n    5.0000000e-01\n    1" in help_text
    assert "non-probabilistic entry" in help_text
    assert TASK.readme_targets == "+1 or -1."
