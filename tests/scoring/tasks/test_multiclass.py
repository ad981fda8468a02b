"""scoring.tasks.multiclass: multiclass classification (spec §7) as one task object: its
targets, its losses in their order (by hand on a small file), the ensembles' reported
values, the baseline, the non-probabilistic rule, its plots, probing and README text."""

import math

import numpy as np
import pytest

from scoring import ScoringError, ScoringOptions, baseline, evaluate, read_targets
from scoring.losses import losses_for
from scoring.options import Task
from scoring.plugins import is_plugin
from scoring.tasks import get_task, inferable
from scoring.tasks.multiclass import TASK

from ..util import arr, lines_of

L3 = ScoringOptions(classes=3)
PREDICTIONS = lines_of(["0.7 0.2 0.1", "0.1 0.8 0.1", "0.25 0.25 0.5", "0.2 0.5 0.3"])
TARGETS = lines_of(["0", "2", "2", "1"])


def H(*q):
    return -sum(x * math.log(x) for x in q if x)


def test_the_task_is_registered_never_inferred_with_its_losses_and_settings():
    assert get_task("multiclass") is TASK and TASK.name is Task.MULTICLASS
    assert TASK.label == "Multiclass classification"
    assert TASK.settings == ("classes", "allow_ensembles")
    assert TASK.inference is None and TASK not in inferable()
    # (Plug-ins installed in this environment, e.g. plugins/floorlog, come after these.)
    losses = [loss for loss in losses_for("multiclass") if not is_plugin(loss)]
    assert [loss.name for loss in losses] == [
        *("nlp", "brier", "01l", "ece", "rmsce", "sce", "ace", "rauc", "aurc")
    ]
    assert [loss.name for loss in losses if loss.terms] == ["nlp", "brier", "01l"]
    assert [loss.name for loss in losses if not loss.probabilistic] == ["01l"]
    assert losses[0].default_ranking and losses[0].log_scale
    assert all(loss.title and loss.reference and loss.description for loss in losses)
    assert all(loss.legacy_number is None for loss in losses)  # (1-4 are the 2006 tasks')


def test_every_loss_by_hand():
    result = evaluate(PREDICTIONS, TARGETS, task="multiclass", options=L3)
    s = result.scores
    assert s["nlp"] == pytest.approx(-(math.log(0.7) + math.log(0.1) + 2 * math.log(0.5)) / 4)
    # Σ_k (p_k − 1{k = y})² per row: 0.14, 1.46, 0.375, 0.38.
    assert s["brier"] == pytest.approx((0.14 + 1.46 + 0.375 + 0.38) / 4)
    assert s["01l"] == 0.25  # row 2 predicts class 1
    # Confidence bins: 0.7 (right), 0.8 (wrong: 0.8 is the edge 12/15, in the bin below),
    # 0.5 and 0.5 (both right, one bin).
    assert s["ece"] == pytest.approx((0.3 + 0.8 + 1.0) / 4)
    assert s["rmsce"] == pytest.approx(math.sqrt(0.3**2 / 4 + 0.8**2 / 4 + 2 / 4 * 0.5**2))
    # sce: per class, bins of p_k; class 2's 0.1 and 0.1 share a bin (|1 − 0.2|).
    assert s["sce"] == pytest.approx((0.85 + 1.75 + (0.8 + 0.5 + 0.3)) / 12)
    # ace: 4 examples, 4 ranges of one each: every |1{y = k} − p_k| on its own.
    assert s["ace"] == pytest.approx((0.85 + 1.75 + 1.8) / 12)
    assert not result.non_probabilistic and result.reported == {}
    terms = result.terms()
    plugins = [loss.terms_key for loss in losses_for("multiclass") if is_plugin(loss)]
    assert list(terms) == ["nlp", "brier", "01l", *plugins]  # (plug-ins' after the built-ins)
    assert terms["nlp"] == pytest.approx(-np.log([0.7, 0.1, 0.5, 0.5]))
    assert terms["brier"] == pytest.approx([0.14, 1.46, 0.375, 0.38])
    assert terms["01l"].tolist() == [0, 1, 0, 0]
    bits = evaluate(
        PREDICTIONS, TARGETS, task="multiclass", options=ScoringOptions(classes=3, log_base=2)
    )
    assert bits.scores["nlp"] == pytest.approx(s["nlp"] / math.log(2))
    assert bits.terms()["nlp"] == pytest.approx(terms["nlp"] / math.log(2))


def test_the_number_of_classes_comes_from_the_first_line_when_not_given():
    result = evaluate(PREDICTIONS, TARGETS, task="multiclass")
    assert result.context.options.classes == 3
    assert result.scores == evaluate(PREDICTIONS, TARGETS, task="multiclass", options=L3).scores
    # The targets are checked against that L before the predictions are read.
    with pytest.raises(ScoringError, match="targets:1: class label 3 is outside 0..2"):
        evaluate(PREDICTIONS, lines_of(["3", "0", "0", "0"]), task="multiclass")
    resolved = TASK.resolve_options(PREDICTIONS, ScoringOptions(), path="p")
    assert resolved.classes == 3 and TASK.resolve_options(b"1\n", L3, path="p") is L3
    assert TASK.resolve_options(b"0.5\n", ScoringOptions(), path="p").classes is None
    assert TASK.resolve_options("/no/such/file", ScoringOptions(), path="p").classes is None


def test_targets_are_class_labels_in_any_number_syntax():
    labels = read_targets(
        lines_of(["2.0000000e+00", "0", "+2", "1.0"]), path="t", task="multiclass", options=L3
    )
    assert labels.tolist() == [2, 0, 2, 1]
    with pytest.raises(ScoringError) as refused:
        read_targets(
            lines_of(["0", "3", "-1", "1.5", "x"]), path="t", task="multiclass", options=L3
        )
    assert refused.value.lines == [
        "t:2: class label 3 is outside 0..2",
        "t:3: class label -1 is outside 0..2",
        "t:4: class label 1.5 is not a whole number (expected 0..2)",
        "t:5: expected a number, found 'x'",
    ]
    assert TASK.target_error(arr(0, 1, 2), L3) is None
    assert TASK.target_error(arr(0, 10, 2), L3) == "class label 10 is outside 0..2 (target 2)"
    with pytest.raises(ValueError, match="targets: class label 10 is outside 0..2"):
        evaluate(PREDICTIONS, arr(0, 10, 2, 1), task="multiclass", options=L3)


def test_ensembles_report_total_and_data_uncertainty_and_their_difference():
    rows = lines_of(["0.6 0.4 0 0.2 0.8 0", "0.1 0.8 0.1"])
    result = evaluate(rows, lines_of(["0", "1"]), task="multiclass", options=L3)
    tu, du = H(0.4, 0.6), (H(0.6, 0.4) + H(0.2, 0.8)) / 2  # over the ensemble row alone
    assert result.reported == pytest.approx({"tu": tu, "du": du, "mi": tu - du})
    assert list(result.reported) == ["tu", "du", "mi"]
    assert result.scores["nlp"] == pytest.approx(-(math.log(0.4) + math.log(0.8)) / 2)
    bits = evaluate(
        rows, lines_of(["0", "1"]), task="multiclass", options=ScoringOptions(classes=3, log_base=2)
    )
    assert bits.reported["tu"] == pytest.approx(tu / math.log(2))
    ensemble = result.plot_data()["ensemble"]
    assert ensemble["members"] == [2, 2] and ensemble["tu"] == pytest.approx(tu)
    # A part without ensemble rows reports none.
    assert result.subset(np.array([False, True])).reported == {}


def test_the_baseline_predicts_the_training_class_frequencies():
    result = baseline(arr(0, 0, 1, 2), arr(0, 2), task="multiclass", options=L3)
    assert result.scores["nlp"] == pytest.approx(-(math.log(0.5) + math.log(0.25)) / 2)
    assert result.scores["01l"] == 0.5
    # A class absent from the training targets gets probability 0: nlp is +inf.
    absent = baseline(arr(0, 0, 1), arr(2, 0), task="multiclass", options=L3)
    assert absent.scores["nlp"] == math.inf and absent.terms()["nlp"][0] == math.inf
    assert baseline(arr(0, 1), arr(1, 0), task="multiclass").context.options.classes == 2


def test_a_one_hot_file_is_non_probabilistic_on_the_whole_file_never_per_part():
    hard = lines_of(["1 0 0", "0 0 1", "0 1 0 0 1 0"])
    result = evaluate(hard, lines_of(["0", "1", "1"]), task="multiclass", options=L3)
    assert result.non_probabilistic
    assert [name for name, value in result.scores.items() if value is not None] == ["01l"]
    assert result.terms()["nlp"] is None and result.terms()["01l"].tolist() == [0, 1, 0]
    mixed = lines_of(["1 0 0", "0.5 0.5 0"])
    result = evaluate(mixed, lines_of(["0", "1"]), task="multiclass", options=L3)
    part = result.subset(np.array([True, False]))  # one-hot alone, but the file is not
    assert not result.non_probabilistic and not part.non_probabilistic
    assert part.scores["nlp"] == 0.0


def test_plots_probing_and_subsets():
    result = evaluate(PREDICTIONS, TARGETS, task="multiclass", options=L3)
    data = result.plot_data()
    assert list(data) == ["top_label", "classwise", "confusion", "retention"]
    assert data["confusion"]["matrix"] == [[1, 0, 0], [0, 1, 0], [0, 1, 1]]
    assert TASK.probe_values(result.context).tolist() == [
        [0.7, 0.2, 0.1],
        [0.1, 0.8, 0.1],
        [0.25, 0.25, 0.5],
        [0.2, 0.5, 0.3],
    ]
    part = result.subset(np.array([True, False, True, False]))
    assert part.n == 2
    assert part.scores["nlp"] == pytest.approx(-(math.log(0.7) + math.log(0.5)) / 2)


def test_the_readme_explains_the_file_with_a_numpy_recipe():
    text = "\n".join(TASK.format_help(ScoringOptions(classes=10)))
    assert "Predictions (multiclass classification)" in text
    assert 'np.savetxt(path, softmax(logits), fmt="%.6g")' in text
    flat = " ".join(text.split())
    assert "classes 0 to 9" in flat and "M x 10 numbers, 2 <= M <= 100" in flat
    assert "probs.reshape(len(probs), -1)" in text
    assert max(len(line) for line in text.splitlines()) <= 78
    closed = "\n".join(TASK.format_help(ScoringOptions(classes=10, allow_ensembles=False)))
    assert "does not accept ensemble rows" in closed and "M x 10" not in closed
    assert "holding L numbers" in " ".join("\n".join(TASK.format_help(ScoringOptions())).split())
    assert "0 to L-1" in TASK.readme_targets
