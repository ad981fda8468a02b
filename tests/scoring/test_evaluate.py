"""scoring.evaluate: files in, every loss of the task out; baselines; the non-probabilistic rule."""

import io
import math

import numpy as np
import pytest
from scipy import stats

from scoring import (
    ScoringError,
    ScoringOptions,
    Task,
    baseline,
    evaluate,
    gaussian_stats,
    quantile_stats,
    sample_stats,
)

from .util import arr, lines_of, problems_of

CLS_P = ["0.9", "0.2", "0.5", "0"]
CLS_T = ["1", "-1", "-1", "-1"]


def test_classification_end_to_end_by_hand():
    result = evaluate(lines_of(CLS_P), lines_of(CLS_T))
    assert result.task == Task.CLASSIFICATION
    assert result.n == 4
    assert not result.non_probabilistic
    # floorlog: the example plug-in's (plugins/floorlog, spec §9), after the built-ins.
    assert list(result.scores) == [
        *("nlp", "01l", "lift", "brier", "ece", "rauc", "aurc", "floorlog")
    ]
    nats = -(math.log(0.9) + math.log(0.8) + math.log(0.5)) / 4
    assert result.scores == pytest.approx(
        {
            "nlp": nats,
            "01l": 0.25,
            "lift": (23 / 8 - 25 / 12) / (23 / 8 - 1),
            "brier": 0.075,
            "ece": 0.2,
            # By confidence: p = 0 (1), 0.9, 0.2 (0.8), 0.5 (wrong): E = 0, 0, 0, 1.
            "rauc": 1 / 16,
            "aurc": 1 / 16,
            # −ln max(p(true class), 0.001): no p below the floor, so nlp's value in nats.
            "floorlog": nats,
        },
        rel=1e-14,
    )
    base10 = evaluate(lines_of(CLS_P), lines_of(CLS_T), options=ScoringOptions(log_base=10))
    assert base10.scores["nlp"] == pytest.approx(nats / math.log(10), rel=1e-15)
    assert base10.scores["01l"] == 0.25


def test_sources_bytes_paths_files_and_arrays(tmp_path):
    pred, targ = tmp_path / "p.txt", tmp_path / "t.txt"
    pred.write_bytes(lines_of(CLS_P))
    targ.write_bytes(lines_of(CLS_T))
    want = evaluate(lines_of(CLS_P), lines_of(CLS_T)).scores
    with pred.open("rb") as p_file, targ.open("rb") as t_file:
        from_files = evaluate(p_file, t_file).scores
    for p, t in [
        (str(pred), str(targ)),
        (pred, targ),
        (io.BytesIO(lines_of(CLS_P)), io.BytesIO(lines_of(CLS_T))),
        (lines_of(CLS_P), arr(1, -1, -1, -1)),
    ]:
        assert evaluate(p, t).scores == want
    assert from_files == want


def test_task_inference():
    # ±1 targets and one number per line: classification.
    assert evaluate(lines_of(["0.5", "0.5"]), arr(1, -1)).task == Task.CLASSIFICATION
    # ±1 targets but rows of several numbers: regression.
    r = evaluate(lines_of(["1 0 1", "1 0 1"]), arr(1, -1))
    assert r.task == Task.REGRESSION
    assert r.scores["nmse"] == pytest.approx(1.0)
    # Targets other than ±1: regression, so single numbers are bad rows.
    err = problems_of(evaluate, lines_of(["0.5", "0.5"]), arr(1, 2))
    assert [p.line for p in err.problems] == [1, 2]
    assert "row type flag" in err.problems[0].message
    # An explicit task wins.
    assert (
        evaluate(lines_of(["1 0 1", "1 0 1"]), arr(1, -1), task="regression").task
        == Task.REGRESSION
    )
    err = problems_of(evaluate, lines_of(["1 0 1"]), arr(1), task="classification")
    assert err.lines == ["predictions:1: expected 1 number (p(y = +1)), found 3"]


def test_inference_keeps_the_problems_of_classification_files():
    err = problems_of(
        evaluate, lines_of(["0.5", "abc", "1.5"]), arr(1, -1, 1), predictions_path="p.txt"
    )
    assert err.lines == [
        "p.txt:2: expected a number, found 'abc'",
        "p.txt:3: expected a probability between 0 and 1, found 1.5",
    ]


def test_inference_with_a_bad_line_in_a_regression_file():
    err = problems_of(
        evaluate, lines_of(["1 0 1", "oops", "1 0 -1"]), arr(1, -1, 1), predictions_path="p.txt"
    )
    assert err.lines == [
        "p.txt:2: expected a number, found 'oops'",
        "p.txt:3: expected a variance of at least 0, found -1",
    ]


def test_targets_file_problems_are_reported_with_its_path():
    err = problems_of(evaluate, lines_of(["0.5"]), lines_of(["x"]), targets_path="t.txt")
    assert err.lines == ["t.txt:1: expected a number, found 'x'"]


# --- the non-probabilistic rule -------------------------------------------------------------


def test_hard_classification_reports_only_zero_one_loss():
    result = evaluate(lines_of(["1", "0", "0", "1.0000000e+00"]), arr(1, -1, 1, -1))
    assert result.non_probabilistic
    assert result.scores == {
        **{"nlp": None, "01l": 0.5, "lift": None, "brier": None, "ece": None},
        **{"rauc": None, "aurc": None},
        "floorlog": None,  # the example plug-in's (plugins/floorlog), probabilistic
    }


def test_point_regression_reports_only_nmse():
    t = arr(1.0, 2.0, 4.0)
    result = evaluate(lines_of(["1 1.5 0", "1 2 0", "1 3 0"]), t)
    assert result.non_probabilistic
    assert result.scores == {
        "nlpd": None,
        "nmse": pytest.approx((0.25 + 0 + 1) / 3 / np.var(t)),
        "crps": None,
        "rauc": None,
    }


def test_one_zero_variance_row_among_others_gives_infinite_nlpd():
    t = arr(1.0, 2.0, 4.0)
    result = evaluate(lines_of(["1 1.5 0", "1 2 1", "1 3 0"]), t)
    assert not result.non_probabilistic
    assert result.scores["nlpd"] == math.inf
    crps = (0.5 + gaussian_stats([2.0], [1.0], [2.0]).crps[0] + 1.0) / 3
    assert result.scores["crps"] == pytest.approx(crps, rel=1e-14)


def test_samples_of_one_value_are_not_point_predictions():
    result = evaluate(lines_of(["2 1.5", "2 2.5"]), arr(1.0, 2.0))
    assert not result.non_probabilistic
    # Both variances 0: one run, E = 0.25, 0.5.
    assert result.scores == {
        **{"nlpd": None, "nmse": pytest.approx(1.0), "crps": pytest.approx(0.5)},
        "rauc": pytest.approx(0.1875),
    }


# --- regression -----------------------------------------------------------------------------


def test_gaussian_file_end_to_end():
    rng = np.random.default_rng(90)
    m = rng.normal(0, 1, 200)
    v = rng.uniform(0.1, 2, 200)
    t = m + rng.normal(0, 1, 200) * np.sqrt(v)
    data = lines_of([f"1 {float(a)!r} {float(b)!r}" for a, b in zip(m, v, strict=True)])
    result = evaluate(data, t)
    sd = np.sqrt(v)
    assert result.scores["nlpd"] == pytest.approx(-np.mean(stats.norm.logpdf(t, m, sd)), rel=1e-12)
    assert result.scores["nmse"] == pytest.approx(np.mean((t - m) ** 2) / np.var(t), rel=1e-12)
    base2 = evaluate(data, t, options=ScoringOptions(log_base=2))
    assert base2.scores["nlpd"] == pytest.approx(result.scores["nlpd"] / math.log(2), rel=1e-14)
    assert base2.scores["nmse"] == result.scores["nmse"]


def test_mixed_row_types_in_one_file():
    t = arr(0.3, 0.0, -1.5, 7.0, 2.0)
    rows = [
        "1 0.5 2",
        "0 0.2 -2 0.3 -1 0.8 1 0.9 3",
        "1.0000000e+00 -1 0",
        "0 0.1 6 0.5 7 0.9 7.5",
        "1 2 0.25",
    ]
    result = evaluate(lines_of(rows), t)
    g = gaussian_stats(arr(0.5, -1, 2), arr(2, 0, 0.25), t[[0, 2, 4]])
    q1 = quantile_stats([[0.2, 0.3, 0.8, 0.9]], [[-2, -1, 1, 3]], t[[1]])
    q2 = quantile_stats([[0.1, 0.5, 0.9]], [[6, 7, 7.5]], t[[3]])
    crps = np.r_[g.crps[0], q1.crps, g.crps[1], q2.crps, g.crps[2]]
    mean = np.r_[0.5, q1.mean, -1.0, q2.mean, 2.0]
    assert result.scores["nlpd"] == math.inf  # the zero-variance row
    assert result.scores["crps"] == pytest.approx(crps.mean(), rel=1e-14)
    assert result.scores["nmse"] == pytest.approx(np.mean((t - mean) ** 2) / np.var(t), rel=1e-14)
    # Without the point row the NLPD is the mean of the rows' log densities.
    keep = [0, 1, 3, 4]
    result = evaluate(lines_of([rows[k] for k in keep]), t[keep])
    logpdf = np.r_[g.logpdf[0], q1.logpdf, q2.logpdf, g.logpdf[2]]
    assert result.scores["nlpd"] == pytest.approx(-logpdf.mean(), rel=1e-14)


def test_nlpd_not_available_with_any_sample_row():
    t = arr(0.0, 1.0, 2.0)
    result = evaluate(lines_of(["1 0 1", "0 0.25 0 0.75 2", "2 1 2 3"]), t)
    assert result.scores["nlpd"] is None
    s = sample_stats(np.array([[1.0, 2.0, 3.0]]), arr(2.0))
    want = (
        gaussian_stats([0.0], [1.0], [0.0]).crps[0]
        + quantile_stats([[0.25, 0.75]], [[0, 2]], [1.0]).crps[0]
        + s.crps[0]
    ) / 3
    assert result.scores["crps"] == pytest.approx(want, rel=1e-14)
    assert result.scores["nmse"] is not None


def test_nmse_not_available_when_the_targets_do_not_vary():
    result = evaluate(lines_of(["1 0 1", "1 2 1"]), arr(3.0, 3.0))
    assert result.scores["nmse"] is None
    assert result.scores["nlpd"] is not None and result.scores["crps"] is not None


def test_nmse_normalised_by_the_training_targets():
    t = arr(1.0, 2.0, 4.0)
    train = arr(0.0, 10.0, 2.0, 4.0)  # mean 4, var (ddof 0) = (16 + 36 + 4 + 0)/4 = 14
    rows = lines_of(["1 1.5 1", "1 2 1", "1 3 1"])
    options = ScoringOptions(nmse_normaliser="training")
    result = evaluate(rows, t, options=options, train_targets=train)
    assert np.var(train) == 14.0
    assert result.scores["nmse"] == pytest.approx((0.25 + 0 + 1) / 3 / 14.0, rel=1e-15)
    own = evaluate(rows, t, train_targets=train)  # the default: the evaluated targets
    assert own.scores["nmse"] == pytest.approx((0.25 + 0 + 1) / 3 / np.var(t), rel=1e-15)
    flat = evaluate(rows, t, options=options, train_targets=arr(5.0, 5.0))
    assert flat.scores["nmse"] is None
    with pytest.raises(ValueError, match="train"):
        evaluate(rows, t, options=options)


def test_a_far_tail_target_gives_a_large_finite_nlpd():
    fig4 = "0 0.2 -2 0.3 -1 0.8 1 0.9 3"
    result = evaluate(lines_of([fig4, fig4]), arr(0.0, 3 + 2e4))
    # b_N = 2: 1e4 scale lengths into the upper tail.
    want = (-math.log(0.25) - (math.log(0.05) - 1e4)) / 2
    assert result.scores["nlpd"] == pytest.approx(want, rel=1e-14)
    assert math.isfinite(result.scores["nlpd"]) and result.scores["nlpd"] > 5000
    g = evaluate(lines_of(["1 0 1e-6", "1 0 1"]), arr(50.0, 0.0))
    assert math.isfinite(g.scores["nlpd"]) and g.scores["nlpd"] > 1e8


def test_a_quantile_bin_of_subnormal_width_scores_finite():
    # Valid per spec §1 (0 < 1e-320): the Gaze abuse pushed to the last bit.
    result = evaluate(lines_of(["0 0.2 0 0.8 1e-320", "1 0 1"]), arr(0.0, 0.5))
    nlpd = -(math.log(0.6) - math.log(1e-320) + stats.norm.logpdf(0.5)) / 2
    assert result.scores["nlpd"] == pytest.approx(nlpd, rel=1e-12)
    assert all(math.isfinite(v) for v in result.scores.values())


def test_fig4_row_by_evaluate():
    result = evaluate(lines_of(["0 0.2 -2 0.3 -1 0.8 1 0.9 3"] * 2), arr(0.0, -0.5))
    assert result.scores["nlpd"] == pytest.approx(-math.log(0.25), rel=1e-15)
    assert result.scores["nmse"] == pytest.approx(
        ((0.25) ** 2 + (0.25) ** 2) / 2 / 0.0625, rel=1e-14
    )


def test_scores_are_plain_floats_or_none():
    for result in (
        evaluate(lines_of(CLS_P), lines_of(CLS_T)),
        evaluate(lines_of(["1 0 1", "2 1 2"]), arr(0.0, 1.0)),
    ):
        for value in result.scores.values():
            assert value is None or type(value) is float


# --- baselines ------------------------------------------------------------------------------


def test_classification_baseline_predicts_the_training_frequency():
    train = arr(1, 1, 1, -1)  # p = 0.75
    t = arr(1, -1, 1, -1, 1)
    result = baseline(train, t, task="classification")
    want = -(3 * math.log(0.75) + 2 * math.log(0.25)) / 5
    assert result.scores["nlp"] == pytest.approx(want, rel=1e-15)
    assert result.scores["01l"] == 0.4
    assert result.scores["brier"] == pytest.approx((3 * 0.0625 + 2 * 0.5625) / 5, rel=1e-15)
    assert result.scores["lift"] == pytest.approx(1.0, rel=1e-14)  # a constant is a random ranking
    assert not result.non_probabilistic


def test_balanced_baseline_in_base_ten_is_log10_of_two():
    result = baseline(
        arr(1, -1, -1, 1),
        arr(1, -1, 1, 1, -1),
        task="classification",
        options=ScoringOptions(log_base=10),
    )
    assert result.scores["nlp"] == pytest.approx(math.log10(2), rel=1e-15)
    assert result.scores["01l"] == 0.4  # p = 0.5 says +1


def test_baseline_equals_scoring_its_own_file():
    train = arr(1, -1, -1, -1, 1, -1, -1, -1)
    t = arr(1, -1, -1, 1, -1, -1)
    direct = baseline(train, t, task="classification")
    as_file = evaluate(lines_of([repr(0.25)] * 6), t)
    assert direct.scores == as_file.scores


def test_regression_baseline_is_a_gaussian_with_training_mean_and_variance():
    train = arr(1.0, 2.0, 3.0, 6.0)  # mean 3, var (ddof 0) 3.5
    t = arr(2.0, 5.0, 3.0)
    result = baseline(train, t, task="regression")
    nlpd = np.mean(0.5 * np.log(2 * np.pi * 3.5) + (t - 3.0) ** 2 / 7.0)
    assert result.scores["nlpd"] == pytest.approx(nlpd, rel=1e-14)
    assert result.scores["nmse"] == pytest.approx(np.mean((t - 3) ** 2) / np.var(t), rel=1e-14)
    crps = gaussian_stats(np.full(3, 3.0), np.full(3, 3.5), t).crps.mean()
    assert result.scores["crps"] == pytest.approx(crps, rel=1e-14)
    as_file = evaluate(lines_of(["1 3 3.5"] * 3), t)
    assert result.scores == pytest.approx(as_file.scores, rel=1e-15)


def test_regression_baseline_with_options():
    train = arr(1.0, 2.0, 3.0, 6.0)
    t = arr(2.0, 5.0, 3.0)
    opts = ScoringOptions(log_base=10, nmse_normaliser="training")
    result = baseline(train, t, task="regression", options=opts)
    plain = baseline(train, t, task="regression")
    assert result.scores["nlpd"] == pytest.approx(plain.scores["nlpd"] / math.log(10), rel=1e-14)
    assert result.scores["nmse"] == pytest.approx(np.mean((t - 3) ** 2) / 3.5, rel=1e-14)


# --- plot data ------------------------------------------------------------------------------


def test_plot_data_for_both_tasks():
    cls = evaluate(lines_of(["0.05", "0.15", "0.95", "1"]), arr(-1, 1, 1, 1)).plot_data()
    bins = cls["reliability"]
    assert [b["count"] for b in bins] == [1, 1, 0, 0, 0, 0, 0, 0, 0, 2]
    assert (
        bins[9]["mean_predicted"] == pytest.approx(0.975) and bins[9]["observed_frequency"] == 1.0
    )
    reg = evaluate(
        lines_of(["1 0 1", "0 0.2 -2 0.3 -1 0.8 1 0.9 3", "2 1 2 3 4"]), arr(0.0, 0.0, 5.0)
    ).plot_data()
    pit = reg["pit"]
    assert pit["n"] == 3
    # PIT 0.5, 0.55 and, for the sample (verification rank 4 of 0…4), uniform on [0.8, 1]
    assert [b["count"] for b in pit["bins"]] == [0, 0, 0, 0, 0, 2, 0, 0, 0.5, 0.5]
    assert list(pit["coverage"]) == ["10", "20", "30", "40", "50", "60", "70", "80", "90", "95"]
    assert [pit["coverage"][level] for level in ("50", "80", "95")] == [
        pytest.approx(2 / 3),
        pytest.approx(2.5 / 3),  # [0.1, 0.9] holds half of [0.8, 1]
        pytest.approx(2.875 / 3),  # [0.025, 0.975] holds 0.875 of it
    ]


def test_scoring_error_interface():
    err = problems_of(evaluate, lines_of(["0.5", "x", "2"]), arr(1, 1, 1), predictions_path="p.txt")
    assert isinstance(err, ScoringError) and isinstance(err, Exception)
    assert err.total == 2
    assert [(p.path, p.line) for p in err.problems] == [("p.txt", 2), ("p.txt", 3)]
    assert err.lines == [str(p) for p in err.problems]
    assert str(err) == err.report() == "\n".join(err.lines)


def test_problems_of_both_files_in_one_error():
    err = problems_of(
        evaluate,
        lines_of(["1 0.5 1", "x", "1 2"]),
        lines_of(["1", "y"]),
        predictions_path="p.txt",
        targets_path="t.txt",
    )
    assert err.lines == [
        "t.txt:2: expected a number, found 'y'",
        "p.txt:2: expected a number, found 'x'",
        "p.txt:3: a Gaussian row '1 m v' has 3 numbers, found 2",  # guessed: regression
    ]
    assert err.total == 3 and err.exact
    assert [(p.path, p.line) for p in err.problems] == [("t.txt", 2), ("p.txt", 2), ("p.txt", 3)]
    assert str(err) == err.report() == "\n".join(err.lines)
    # Valid predictions: the targets' problems alone.
    err = problems_of(evaluate, lines_of(["0.5"]), lines_of(["1", "y"]), targets_path="t.txt")
    assert err.lines == ["t.txt:2: expected a number, found 'y'"]
