"""Selective prediction (spec §8): rauc, aurc, their tie rule, their ordering keys per task
and the retention plot data.

Hand tables for small files; the tie rule against brute force (the mean over every order
of the tied examples, each order scored without ties in exact fractions); the ordering keys
against the spec's exact confidences; large files against exact fractions."""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

import numpy as np
import pytest

import scoring
from scoring import selective
from scoring.losses import find_loss
from scoring.multiclass_rows import SIDE_SCALE, ClassRows


def _ordered(errors: list[Fraction]) -> tuple[Fraction, Fraction]:
    """rauc and aurc of examples already in order, no ties: E(k) the first k's errors."""
    n = len(errors)
    accrued = list(itertools.accumulate(errors))
    return sum(accrued, Fraction(0)) / n / n, sum(
        (e / k for k, e in enumerate(accrued, 1)), Fraction(0)
    ) / n


def _brute(errors, keys, *, ascending: bool) -> tuple[Fraction, Fraction]:
    """The mean over every order of every run of equal keys of the untied values."""
    errors = [Fraction(float(e)) for e in errors]
    order = sorted(range(len(errors)), key=lambda i: keys[i], reverse=not ascending)
    runs = [list(group) for _, group in itertools.groupby(order, key=lambda i: keys[i])]
    total_r = total_a = Fraction(0)
    count = 0
    for arrangement in itertools.product(*(itertools.permutations(run) for run in runs)):
        flat = [errors[i] for run in arrangement for i in run]
        r, a = _ordered(flat)
        total_r += r
        total_a += a
        count += 1
    return total_r / count, total_a / count


def _evaluate(predictions: str, targets: str, **kw) -> scoring.Evaluation:
    return scoring.evaluate(predictions.encode(), targets.encode(), **kw)


# --- hand tables -----------------------------------------------------------------------


def test_binary_hand_table():
    # c: 0.9, 1 − 0.3 (a little above the double 0.7), 0.7, 0.5; errors 0, 1, 1, 1
    # (p = 0.5 predicts +1, wrong for −1). E = 0, 1, 2, 3.
    ev = _evaluate("0.9\n0.3\n0.7\n0.5\n", "1\n1\n-1\n-1\n", task="classification")
    assert ev.scores["rauc"] == pytest.approx(6 / 16, rel=1e-15)
    assert ev.scores["aurc"] == pytest.approx((1 / 2 + 2 / 3 + 3 / 4) / 4, rel=1e-15)


def test_binary_exact_confidence_orders_03_before_07():
    # 1 − 0.3 is 0.70000000000000001110 as a real number, the double 0.7 is
    # 0.69999999999999995559: no tie. The wrong p = 0.3 comes first: E = 1, 1.
    ev = _evaluate("0.3\n0.7\n", "1\n1\n", task="classification")
    assert ev.scores["rauc"] == 0.5
    assert ev.scores["aurc"] == pytest.approx(0.75, rel=1e-15)
    # Swapping which one is wrong: E = 0, 1.
    ev = _evaluate("0.3\n0.7\n", "-1\n-1\n", task="classification")
    assert ev.scores["rauc"] == 0.25
    assert ev.scores["aurc"] == 0.25


def test_binary_symmetric_confidences_tie():
    # p = 0.25 and 0.75 have the same confidence 0.75 exactly: one run, errors spread.
    ev = _evaluate("0.25\n0.75\n", "1\n1\n", task="classification")
    # E(1) = 1/2, E(2) = 1.
    assert ev.scores["rauc"] == 0.375
    assert ev.scores["aurc"] == 0.5


def test_tie_hand_table():
    # Keys 1, 1, 2 ascending; errors 1, 0, 1: the run {1, 0} gives E(1) = 1/2, E(2) = 1,
    # then E(3) = 2.
    found = selective.retention([1.0, 0.0, 1.0], [1.0, 1.0, 2.0], ascending=True)
    assert found.rauc() == pytest.approx(3.5 / 9, rel=1e-15)
    assert found.aurc() == pytest.approx((0.5 + 0.5 + 2 / 3) / 3, rel=1e-15)
    assert found.accrued().tolist() == [0.5, 1.0, 2.0]


def test_descending_keys_reverse_the_order():
    up = selective.retention([3.0, 1.0, 0.0], [3.0, 2.0, 1.0], ascending=True)
    down = selective.retention([3.0, 1.0, 0.0], [3.0, 2.0, 1.0], ascending=False)
    assert down.accrued().tolist() == [3.0, 4.0, 4.0]
    assert up.accrued().tolist() == [0.0, 1.0, 4.0]
    assert up.rauc() == pytest.approx(5 / 9) and down.rauc() == pytest.approx(11 / 9)


def test_regression_hand_table():
    # Variances 4, 0.25, 1: order rows 2, 3, 1. Errors (t − m)²: 9, 1, 0.25.
    preds = "1 0 4\n1 1 0.25\n1 2 1\n"
    ev = _evaluate(preds, "3\n0\n2.5\n", task="regression")
    # E = 1, 1.25, 10.25.
    assert ev.scores["rauc"] == pytest.approx((1 + 1.25 + 10.25) / 9, rel=1e-15)
    assert "aurc" not in ev.scores  # classification tasks only


def test_regression_quantile_and_sample_rows_use_their_variance():
    # A sample row (0, 2): population variance 1, mean 1; a Gaussian of variance 2 and a
    # quantile row whose §8 variance is far larger. Errors 1, 4, 0.
    preds = "2 0 2\n1 0 2\n0 0.1 -10 0.5 0 0.9 10\n"
    ev = _evaluate(preds, "0\n2\n0\n", task="regression")
    rows = ev.context.rows
    if not hasattr(rows, "predictive_variance"):
        pytest.skip("RegressionRows.predictive_variance not there yet (H1)")
    # Order: sample (1), Gaussian (4), quantile (0): E = 1, 5, 5.
    assert ev.scores["rauc"] == pytest.approx(11 / 9, rel=1e-12)


def test_multiclass_hand_table():
    # Confidences 0.8 (right), 0.6 (wrong), 0.5 (wrong: ŷ = 0 on the tie), 0.8 (wrong).
    preds = "0.8 0.1 0.1\n0.2 0.6 0.2\n0.5 0.5 0\n0.1 0.1 0.8\n"
    ev = _evaluate(preds, "0\n0\n1\n0\n", task="multiclass", options=scoring.ScoringOptions())
    # Run {0.8: errors 0, 1}: E(1) = 1/2, E(2) = 1; then 2, 3.
    assert ev.scores["rauc"] == pytest.approx((0.5 + 1 + 2 + 3) / 16, rel=1e-15)
    assert ev.scores["aurc"] == pytest.approx((0.5 + 0.5 + 2 / 3 + 3 / 4) / 4, rel=1e-15)


def test_multiclass_equal_doubles_ordered_by_exact_value():
    # Two rows with the same double confidence but exact values on either side of it: the
    # one above is surer (the side ClassRows keeps decides, as it does for ŷ and the bins).
    probs = np.array([[0.6, 0.4], [0.6, 0.4]])
    resid = np.zeros((2, 2), dtype=np.float32)
    resid[0, 0] = -1e-16 * SIDE_SCALE
    resid[1, 0] = 1e-16 * SIDE_SCALE
    rows = ClassRows(probs, np.ones(2, dtype=np.int32), np.full(2, np.nan), resid=resid)
    spec = scoring.get_task("multiclass")
    ctx = spec.context(np.array([1, 0]), scoring.ScoringOptions(classes=2), None, rows)
    # Row 2 (right) first, then row 1 (wrong): E = 0, 1.
    assert find_loss("multiclass", "rauc").compute(ctx) == 0.25
    # Without the sides they tie: E = 1/2, 1.
    plain = spec.context(
        np.array([1, 0]), scoring.ScoringOptions(classes=2), None, ClassRows.single(probs)
    )
    assert find_loss("multiclass", "rauc").compute(plain) == 0.375


# --- n/a, registry ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("task", "preds", "targets"),
    [
        ("classification", "1\n0\n1\n", "1\n1\n-1\n"),
        ("regression", "1 0 0\n1 2 0\n1 1 0\n", "0\n1\n2\n"),
        ("multiclass", "1 0\n0 1\n1 0\n", "0\n0\n1\n"),
    ],
)
def test_non_probabilistic_file_is_na(task, preds, targets):
    ev = _evaluate(preds, targets, task=task)
    assert ev.non_probabilistic
    assert ev.scores["rauc"] is None
    assert ev.scores.get("aurc") is None
    assert ev.plot_data()["retention"] is None


@pytest.mark.parametrize("task", ["classification", "multiclass", "regression"])
def test_losses_have_no_terms(task):
    names = {loss.name: loss for loss in scoring.losses_for(task)}
    assert names["rauc"].terms is None and names["rauc"].probabilistic
    if task == "regression":
        assert "aurc" not in names
    else:
        assert names["aurc"].terms is None and names["aurc"].probabilistic


def test_no_order_of_lines_matters():
    rng = np.random.default_rng(7)
    p = rng.choice([0.1, 0.25, 0.5, 0.75, 0.9, 0.3, 0.7], size=60)
    t = np.where(rng.random(60) < 0.5, 1, -1)
    first = None
    for _ in range(5):
        perm = rng.permutation(60)
        text = "\n".join(map(repr, p[perm].tolist())) + "\n"
        targets = "\n".join(map(str, t[perm].tolist())) + "\n"
        ev = _evaluate(text, targets, task="classification")
        values = (ev.scores["rauc"], ev.scores["aurc"])
        first = first or values
        assert values[0] == pytest.approx(first[0], rel=1e-14)
        assert values[1] == pytest.approx(first[1], rel=1e-14)


# --- brute force over every order of a tie ---------------------------------------------


@pytest.mark.parametrize("seed", range(40))
def test_tie_rule_is_the_mean_over_every_order(seed):
    rng = random.Random(seed)
    n = rng.randint(1, 7)
    keys = [float(rng.randint(0, 2)) for _ in range(n)]
    if seed % 2:
        errors = [float(rng.randint(0, 1)) for _ in range(n)]
    else:
        errors = [rng.choice([0.0, 0.5, 1e-3, 7.25, 1e10]) for _ in range(n)]
    ascending = bool(seed % 3)
    want_r, want_a = _brute(errors, keys, ascending=ascending)
    found = selective.retention(errors, keys, ascending=ascending)
    assert found.rauc() == pytest.approx(float(want_r), rel=1e-14, abs=0)
    assert found.aurc() == pytest.approx(float(want_a), rel=1e-14, abs=0)


def test_tie_rule_on_files_against_brute_force():
    # Binary files with repeated p (and p, 1 − p pairs): the loss equals the mean over
    # every order of the tied lines.
    rng = random.Random(11)
    for _ in range(30):
        n = rng.randint(2, 7)
        p = [rng.choice([0.2, 0.8, 0.5, 0.6, 0.4, 1.0, 0.0]) for _ in range(n)]
        t = [rng.choice([1, -1]) for _ in range(n)]
        if all(x in (0.0, 1.0) for x in p):
            continue
        ev = _evaluate(
            "".join(f"{x!r}\n" for x in p), "".join(f"{x}\n" for x in t), task="classification"
        )
        conf = [max(Fraction(x), 1 - Fraction(x)) for x in p]
        err = [float((x >= 0.5) != (y == 1)) for x, y in zip(p, t, strict=True)]
        want_r, want_a = _brute(err, conf, ascending=False)
        assert ev.scores["rauc"] == pytest.approx(float(want_r), rel=1e-14)
        assert ev.scores["aurc"] == pytest.approx(float(want_a), rel=1e-14)


# --- exactness -------------------------------------------------------------------------


def test_large_file_against_exact_fractions():
    rng = np.random.default_rng(3)
    n = 20_000
    errors = rng.exponential(size=n) * 10.0 ** rng.integers(-8, 8, size=n)
    keys = rng.integers(0, 3000, size=n).astype(np.float64)  # many ties
    found = selective.retention(errors, keys, ascending=True)
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    runs = np.split(order, np.flatnonzero(np.diff(sorted_keys)) + 1)
    # E(k) at every k, in fractions: a run of L after s others adds R·j/L at k = s + j.
    total_r = total_a = before = Fraction(0)
    start = 0
    for run in runs:
        length = len(run)
        r = sum((Fraction(float(e)) for e in errors[run]), Fraction(0))
        for j in range(1, length + 1):
            e_k = before + r * j / length
            total_r += e_k
            total_a += e_k / (start + j)
        before += r
        start += length
    assert found.rauc() == pytest.approx(float(total_r / n / n), rel=1e-12)
    assert found.aurc() == pytest.approx(float(total_a / n), rel=1e-12)


def test_huge_and_tiny_errors_do_not_cancel():
    errors = [1e200, 1e-200, 0.0, 3.0]
    found = selective.retention(errors, [0.0, 1.0, 2.0, 3.0], ascending=True)
    want_r, want_a = _brute(errors, [0.0, 1.0, 2.0, 3.0], ascending=True)
    assert found.rauc() == pytest.approx(float(want_r), rel=1e-15)
    assert found.aurc() == pytest.approx(float(want_a), rel=1e-15)


def test_squares_beyond_the_largest_double_give_a_finite_area():
    # r² = 2.25e308 overflows, but rauc = (2.25e308 + 2.25e308)/4 and
    # aurc = (2.25e308 + 2.25e308/2)/2 do not.
    errors, unit = selective.squared([1.5e154, 0.0])
    found = selective.retention(errors, [0.0, 1.0], ascending=True, unit=unit)
    with np.errstate(over="raise"):
        assert found.rauc() == pytest.approx(1.125e308, rel=1e-15)
        assert found.aurc() == pytest.approx(1.6875e308, rel=1e-15)
        curves = found.curves()
    assert curves["model"] == pytest.approx([1.125e308, 1.125e308], rel=1e-15)
    assert curves["risk_model"][0] == math.inf  # E(1)/1 is 2.25e308 itself


def test_an_infinite_residual_gives_inf_never_nan():
    errors, unit = selective.squared([math.inf, 1.0])
    found = selective.retention(errors, [0.0, 1.0], ascending=True, unit=unit)
    with np.errstate(all="raise"):
        assert found.rauc() == math.inf and found.aurc() == math.inf
        assert not any(math.isnan(x) for x in found.curves()["model"])


def test_a_quantile_row_with_a_far_tail():
    # Its mean is about 1e300 (the upper tail holds nearly all the mass, with scale 1e300),
    # so its squared error is about 1e600: the area's exact value exceeds the largest
    # double and is +inf (spec §3), computed without a warning or a NaN.
    ev = _evaluate("1 0 1\n0 5e-324 0 1e-300 1\n", "0\n0\n", task="regression")
    assert ev.context.rows.stats.mean[1] > 1e299
    assert ev.scores["rauc"] == math.inf


def test_negative_zero_and_zero_are_one_run():
    found = selective.retention([1.0, 0.0], [-0.0, 0.0], ascending=True)
    assert found.accrued().tolist() == [0.5, 1.0]


# --- bad input -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("errors", "keys", "message"),
    [
        ([], [], "at least one"),
        ([1.0, 2.0], [1.0], "expected n errors"),
        ([-1.0], [1.0], "non-negative"),
        ([math.nan], [1.0], "non-negative"),
        ([1.0], [math.nan], "NaN"),
    ],
)
def test_bad_input(errors, keys, message):
    with pytest.raises(ValueError, match=message):
        selective.retention(errors, keys, ascending=True)


# --- plot data -------------------------------------------------------------------------


def test_curves_of_a_small_file_have_every_k():
    found = selective.retention([1.0, 0.0, 1.0, 0.0], [4.0, 3.0, 2.0, 1.0], ascending=True)
    curves = found.curves()
    assert curves["coverage"] == [0.25, 0.5, 0.75, 1.0]
    assert curves["model"] == [0.0, 0.25, 0.25, 0.5]
    assert curves["oracle"] == [0.0, 0.0, 0.25, 0.5]
    assert curves["random"] == [0.125, 0.25, 0.375, 0.5]
    assert curves["risk_model"] == [0.0, 0.5, 1 / 3, 0.5]
    assert curves["risk_oracle"] == [0.0, 0.0, 1 / 3, 0.5]
    assert curves["risk_random"] == [0.5] * 4
    assert curves["rauc"]["model"] == found.rauc() == 1 / 16 * (0 + 1 + 1 + 2)
    assert curves["rauc"]["oracle"] == pytest.approx(3 / 16)
    assert curves["rauc"]["random"] == pytest.approx(2 * 5 / 32)
    assert curves["aurc"]["random"] == 0.5
    assert curves["aurc"]["oracle"] == pytest.approx((1 / 3 + 1 / 2) / 4)


def test_curves_of_a_large_file_are_thinned():
    rng = np.random.default_rng(5)
    n = 10_007
    errors = rng.random(n)
    found = selective.retention(errors, rng.random(n), ascending=True)
    curves = found.curves()
    assert len(curves["coverage"]) <= selective.CURVE_POINTS
    for key in ("model", "oracle", "random", "risk_model", "risk_oracle", "risk_random"):
        assert len(curves[key]) == len(curves["coverage"])
    assert curves["coverage"][-1] == 1.0
    assert curves["model"][-1] == pytest.approx(errors.sum() / n)
    assert np.all(np.diff(curves["coverage"]) > 0)
    # The oracle does no worse than the model anywhere.
    assert np.all(np.array(curves["oracle"]) <= np.array(curves["model"]) + 1e-12)


@pytest.mark.parametrize(
    ("task", "preds", "targets"),
    [
        ("classification", "0.9\n0.2\n0.6\n", "1\n1\n-1\n"),
        ("regression", "1 0 1\n1 2 3\n1 1 0.5\n", "0\n1\n2\n"),
        ("multiclass", "0.7 0.3\n0.4 0.6\n0.5 0.5\n", "0\n0\n1\n"),
    ],
)
def test_every_task_has_retention_plot_data(task, preds, targets):
    ev = _evaluate(preds, targets, task=task)
    data = ev.plot_data()["retention"]
    assert set(data) >= {
        "coverage",
        "model",
        "oracle",
        "random",
        "risk_model",
        "risk_oracle",
        "risk_random",
    }
    assert data["rauc"]["model"] == ev.scores["rauc"]
    assert all(isinstance(x, float) for x in data["model"] + data["risk_model"])


@pytest.mark.parametrize("seed", range(12))
def test_the_kernel_and_numpy_find_the_same_runs_and_areas(seed, no_native):
    """sorted_runs (a radix sort of the first key, the second only inside ties, Σ E(k)/k
    summed in C) against numpy's stable sorts: the same runs, totals and areas."""
    rng = np.random.default_rng([seed, 8])
    n = int(rng.integers(1, 5000))
    first = np.round(rng.random(n), int(rng.integers(0, 3)))
    first[rng.random(n) < 0.1] = -0.0
    keys = first if seed % 2 else np.column_stack([first, np.round(rng.normal(size=n), 1)])
    errors = rng.integers(0, 3, n).astype(np.float64) * rng.random(n)
    if seed % 5 == 4:
        errors[rng.integers(0, n)] = np.inf
    ascending = bool(seed % 3)
    fast = selective.retention(errors, keys, ascending=ascending)
    with no_native():
        plain = selective.retention(errors, keys, ascending=ascending)
    assert np.array_equal(fast.starts, plain.starts)
    np.testing.assert_allclose(fast.totals, plain.totals, rtol=1e-13)
    for area in ("rauc", "aurc"):
        assert getattr(fast, area)() == pytest.approx(getattr(plain, area)(), rel=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_runs_kept_from_the_areas_pass_equal_runs_found_again(seed, monkeypatch):
    """Up to RUNS_KEPT_UP_TO examples the kernel's pass that sums the areas keeps the runs
    too; above it the curves find them again: the same runs, areas and curves either way."""
    if selective._accel.native() is None:
        pytest.skip("the C kernel is not built")
    rng = np.random.default_rng([seed, 9])
    n = int(rng.integers(1, 3000))
    keys = np.round(rng.random(n), int(rng.integers(0, 3)))
    errors = rng.integers(0, 3, n).astype(np.float64) * rng.random(n)
    ascending = bool(seed % 2)
    kept = selective.retention(errors, keys, ascending=ascending)
    assert kept._runs is not None  # found in the same pass
    monkeypatch.setattr(selective, "RUNS_KEPT_UP_TO", n - 1)
    again = selective.retention(errors, keys, ascending=ascending)
    assert again._runs is None
    assert kept.curves() == again.curves()  # (finds them: the same floats, bit for bit)
    for got, expected in zip(kept._runs, again._runs, strict=True):
        assert got.tobytes() == expected.tobytes()
