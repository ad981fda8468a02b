"""scoring.tasks.regression: scalar regression as one task object: Gaussian, quantile and
sample rows, its losses, the options it reads, the baseline and the README text."""

import math
import warnings

import numpy as np
import pytest

from scoring import ScoringOptions, baseline, evaluate
from scoring.losses import losses_for
from scoring.tasks import get_task
from scoring.tasks.regression import TASK

from ..util import arr, lines_of


def test_the_task_is_registered_with_its_losses_and_settings():
    assert get_task("regression") is TASK and TASK.label == "Regression"
    assert [loss.name for loss in losses_for("regression")] == [
        "nlpd",
        "nmse",
        "crps",
        "rauc",
        "wis",  # only with quantile levels (spec §8)
    ]
    assert [loss.name for loss in losses_for("regression", ScoringOptions())] == [
        "nlpd",
        "nmse",
        "crps",
        "rauc",
    ]
    assert TASK.settings == (
        "allow_samples",
        "min_quantile_gap",
        "nmse_normaliser",
        "quantile_levels",
    )
    assert TASK.inference.fallback  # inferred when no other task fits
    assert TASK.target_error(arr(0.5, -3e9), ScoringOptions()) is None  # any numbers


def test_the_baseline_is_a_gaussian_of_the_training_mean_and_variance():
    result = baseline(arr(0.0, 2.0), arr(1.0, 3.0), task="regression")
    # Mean 1, variance 1 (ddof 0): the targets are 0 and 2 standard deviations away.
    expected = 0.5 * math.log(2 * math.pi) + (0.0 + 4.0) / 4
    assert result.scores["nlpd"] == pytest.approx(expected)
    assert result.scores["nmse"] == pytest.approx((0 + 4) / (2 * 1.0))


def test_nmse_by_the_evaluated_or_the_training_targets_variance():
    rows, targets = lines_of(["1 0 1", "1 0 1"]), arr(1.0, 3.0)
    evaluated = evaluate(rows, targets, task="regression")
    assert evaluated.scores["nmse"] == pytest.approx((1 + 9) / (2 * 1.0))
    training = evaluate(
        rows,
        targets,
        task="regression",
        options=ScoringOptions(nmse_normaliser="training"),
        train_targets=arr(0.0, 4.0),
    )
    assert training.scores["nmse"] == pytest.approx((1 + 9) / (2 * 4.0))
    with pytest.raises(ValueError, match="needs train_targets"):
        evaluate(
            rows, targets, task="regression", options=ScoringOptions(nmse_normaliser="training")
        )


def test_point_rows_probing_values_and_plots():
    point = evaluate(lines_of(["1 0 0", "1 1 0"]), arr(0.0, 2.0), task="regression")
    # (0 − 0)² + (2 − 1)² over n · var(t) = 2 · 1; the probabilistic losses are n/a.
    assert point.non_probabilistic and point.scores["nmse"] == pytest.approx(0.5)
    assert point.scores["nlpd"] is None and point.scores["crps"] is None
    mixed = evaluate(lines_of(["1 0 1", "0 0.25 -1 0.75 1"]), arr(0.0, 0.0), task="regression")
    values = TASK.probe_values(mixed.context)
    assert values[0].tolist() == [0.0, 1.0, 1.0]  # mean, variance, row type
    assert math.isnan(values[1][1]) and values[1][2] == 0.0
    assert set(mixed.plot_data()) == {"pit", "calibration_test", "retention"}


def test_the_readme_follows_the_datasets_options():
    default = "\n\n".join(TASK.format_help(ScoringOptions()))
    assert default.startswith("Predictions (regression)\n------------------------\n")
    assert "    2 4.9 5.3 5.1 6.0 5.4" in default and "apart" not in default
    strict = "\n\n".join(
        TASK.format_help(ScoringOptions(allow_samples=False, min_quantile_gap=0.5))
    )
    assert "Flag 2 (a sample of values) is not accepted for this dataset." in strict
    assert "consecutive quantiles must be at least 0.5 apart" in strict.replace("\n", " ")
    assert "2 4.9" not in strict


def test_a_wis_term_is_finite_when_a_reading_passes_the_largest_double():
    """bN ≈ 2.5e308 puts the readings at 0.616 and above past the largest double (+inf),
    yet the term (1/K)Σ QS is 1.02e308 (the exact reference of
    tests/scoring/reference_selective.py, seed 4835 of test_differential_selective)."""
    row = (
        "0 1.995839808613874e-260 -1e+100 9.886146546727004e-226 8.6436494e+99 "
        "5.221317636712711e-210 9.9410212e+99\n"
    )
    levels = (0.004, 0.06, 0.103088, 0.29, 0.31, 0.384, 0.616, 0.69, 0.71, 0.896912, 0.94, 0.996)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ev = evaluate(
            row.encode(), np.array([1e100]), options=ScoringOptions(quantile_levels=levels)
        )
    assert ev.terms()["wis"][0] == pytest.approx(1.0237629483267799e308, rel=1e-9)
    assert ev.scores["wis"] == pytest.approx(1.0237629483267799e308, rel=1e-9)
