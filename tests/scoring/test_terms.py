"""Evaluation.terms(): the per-example terms behind nlp, 01l, brier, nlpd, crps and nmse
(spec §5 resamples them), from the statistics already held, in agreement with the losses."""

import io
import math

import numpy as np
import pytest

from scoring import (
    LOSSES,
    NmseNormaliser,
    ScoringOptions,
    Task,
    baseline,
    compute_terms,
    evaluate,
)
from scoring.plugins import is_plugin
from scoring.regression import variance

from .util import arr, lines_of, quantile_row

BASES = (math.e, 2.0, 10.0)
KEYS = {Task.CLASSIFICATION: {"nlp", "01l", "brier"}, Task.REGRESSION: {"nlpd", "se", "crps"}}


def _plugin_keys(task) -> list[str]:
    """The terms of the task's installed plug-in losses (spec §9), after the built-in ones."""
    return [
        loss.terms_key
        for loss in LOSSES.values()
        if loss.task == task and loss.terms is not None and is_plugin(loss)
    ]


def _agree(value, terms, targets, key, *, train=None) -> None:
    """``value`` is the mean of ``terms`` (nmse: mean(se)/var(t)) to 1e-12 relative."""
    n = targets.size
    assert terms.dtype == np.float64 and terms.shape == (n,)
    assert not np.isnan(terms).any()
    if key == "se":
        var = variance(targets if train is None else train)
        want = None if var == 0 else float(np.mean(terms)) / var
    else:
        want = float(np.mean(terms))
    if value is None or want is None:
        assert value is want, (key, value, want)
    elif math.isinf(value) or math.isinf(want):
        assert value == want, (key, value, want)
    else:
        assert math.isclose(value, want, rel_tol=1e-12, abs_tol=1e-300), (key, value, want)


def _check_against_scores(result, targets, *, train=None) -> None:
    terms = result.terms()
    levels = result.context.options.quantile_levels
    wis = {"wis"} if levels else set()  # (spec §8)
    assert set(terms) == KEYS[result.task] | wis | set(_plugin_keys(result.task))
    for loss in LOSSES.values():
        if loss.task != result.task or loss.terms is None:
            continue
        if not loss.applies_under(result.context.options):  # wis without levels
            assert loss.terms_key not in terms
            continue
        got = terms[loss.terms_key]
        if got is None:
            # No terms: the loss is n/a (nlpd with samples; a non-probabilistic file).
            assert result.scores[loss.name] is None, loss.name
            continue
        _agree(result.scores[loss.name], got, targets, loss.terms_key, train=train)


# --- random files of every row type, both tasks ---------------------------------------------


def _classification_file(rng, n: int, style: str) -> list[str]:
    if style == "soft":
        p = rng.uniform(0, 1, n)
    elif style == "edges":  # some p exactly 0 or 1: infinite nlp terms on a wrong side
        p = np.where(rng.random(n) < 0.2, rng.integers(0, 2, n), rng.random(n))
    else:  # hard: only 01l has terms
        p = rng.integers(0, 2, n).astype(np.float64)
    return [repr(float(x)) for x in p]


def _regression_row(rng, kind: str, target: float) -> str:
    if kind == "gaussian":
        return f"1 {float(rng.normal(target, 2))!r} {float(rng.uniform(0.01, 5))!r}"
    if kind == "point":
        return f"1 {float(rng.normal(target, 2))!r} 0"
    if kind == "quantiles":
        size = int(rng.integers(2, 9))
        a = np.sort(rng.uniform(0.01, 0.99, size))
        q = np.sort(rng.normal(target + rng.normal(0, 1), rng.uniform(0.2, 3), size))
        return quantile_row(a, q)
    size = int(rng.integers(1, 12))
    return "2 " + " ".join(repr(s) for s in rng.normal(target, 2, size).tolist())


REGRESSION_FILES = {
    "gaussian": ("gaussian",),
    "quantiles": ("quantiles",),
    "samples": ("sample",),
    "point": ("point",),
    "gaussian+point": ("gaussian", "point"),
    "mixed": ("gaussian", "quantiles", "sample"),
    "mixed without samples": ("gaussian", "quantiles"),
}


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("style", ["soft", "edges", "hard"])
def test_classification_terms_average_to_the_losses(seed, style):
    rng = np.random.default_rng([seed, 8001])
    n = int(rng.integers(1, 60))
    t = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    options = ScoringOptions(log_base=BASES[seed % 3])
    result = evaluate(
        lines_of(_classification_file(rng, n, style)),
        lines_of([f"{x:+g}" for x in t]),
        options=options,
    )
    assert result.task == Task.CLASSIFICATION
    _check_against_scores(result, t)


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("kinds", list(REGRESSION_FILES.values()), ids=list(REGRESSION_FILES))
def test_regression_terms_average_to_the_losses(seed, kinds):
    rng = np.random.default_rng([seed, 8002])
    n = int(rng.integers(1, 60))
    t = rng.normal(rng.normal(0, 10), rng.uniform(0.1, 10), n)
    lines = [_regression_row(rng, str(rng.choice(kinds)), float(x)) for x in t]
    # Odd seeds with spec §8's quantile levels: wis has terms too.
    levels = (0.05, 0.25, 0.5, 0.75, 0.95) if seed % 2 else None
    options = ScoringOptions(log_base=BASES[seed % 3], quantile_levels=levels)
    result = evaluate(lines_of(lines), lines_of([repr(float(x)) for x in t]), options=options)
    assert result.task == Task.REGRESSION
    _check_against_scores(result, t)


def test_nmse_normalised_by_the_training_targets():
    rng = np.random.default_rng(8003)
    t, train = rng.normal(0, 2, 30), rng.normal(1, 3, 50)
    lines = [_regression_row(rng, "gaussian", float(x)) for x in t]
    options = ScoringOptions(nmse_normaliser=NmseNormaliser.TRAINING)
    result = evaluate(lines_of(lines), t, options=options, train_targets=train)
    _check_against_scores(result, t, train=train)


def test_baselines_have_terms_too():
    rng = np.random.default_rng(8004)
    t, train = rng.normal(0, 2, 20), rng.normal(1, 3, 40)
    _check_against_scores(baseline(train, t, task="regression"), t)
    labels, train_labels = np.where(t > 0, 1.0, -1.0), np.where(train > 0, 1.0, -1.0)
    _check_against_scores(baseline(train_labels, labels, task="classification"), labels)


# --- by hand ----------------------------------------------------------------------------------


def test_classification_terms_by_hand():
    result = evaluate(lines_of(["0.9", "0.2", "0.5", "0"]), arr(1, -1, -1, 1))
    terms = result.terms()
    assert list(terms) == ["nlp", "01l", "brier", *_plugin_keys(Task.CLASSIFICATION)]
    assert terms["nlp"][:3] == pytest.approx(
        [-math.log(0.9), -math.log(0.8), -math.log(0.5)], rel=1e-15
    )
    assert terms["nlp"][3] == math.inf  # a true class of probability 0
    assert terms["01l"].tolist() == [0.0, 0.0, 1.0, 1.0]
    assert terms["brier"] == pytest.approx([0.01, 0.04, 0.25, 1.0], rel=1e-15)
    # The options' log base: -log2(0.5) = 1 bit.
    bits = evaluate(lines_of(["0.5", "0.5"]), arr(1, -1), options=ScoringOptions(log_base=2))
    assert bits.terms()["nlp"].tolist() == [1.0, 1.0]
    # A certain, right prediction costs exactly 0 (not -0.0).
    zero = evaluate(lines_of(["1", "0.5"]), arr(1, -1)).terms()["nlp"]
    assert math.copysign(1.0, zero[0]) == 1.0 and zero[0] == 0.0


def test_regression_terms_by_hand():
    # A Gaussian on its target, and a quantile row whose middle bin holds the target:
    # density 0.5/2, mean 0 (both tails: a1(q1 - b1) = -0.5, (1 - aN)(qN + bN) = 0.5).
    result = evaluate(lines_of(["1 0 1", "0 0.25 -1 0.75 1"]), arr(0.0, 0.5))
    terms = result.terms()
    assert list(terms) == ["nlpd", "se", "crps"]
    assert terms["nlpd"] == pytest.approx([0.5 * math.log(2 * math.pi), math.log(4)], rel=1e-15)
    assert terms["se"] == pytest.approx([0.0, 0.25], abs=1e-15)
    assert terms["crps"][0] == pytest.approx((2 - math.sqrt(2)) / math.sqrt(2 * math.pi), rel=1e-14)
    # A sample row: crps = (1/K)Σ|s - t| - (1/2K²)ΣΣ|s_j - s_k| = 1 - 0.5; nlpd has no terms.
    result = evaluate(lines_of(["2 1 3", "1 5 0"]), arr(2.0, 3.0))
    terms = result.terms()
    assert terms["nlpd"] is None and result.scores["nlpd"] is None
    assert terms["crps"].tolist() == [0.5, 2.0]  # a point prediction: |t - m|
    assert terms["se"].tolist() == [0.0, 4.0]
    # A zero-variance row among others: an infinite nlpd term, the rest finite.
    terms = evaluate(lines_of(["1 0 0", "1 0 1"]), arr(1.0, 0.0)).terms()
    assert terms["nlpd"][0] == math.inf and np.isfinite(terms["nlpd"][1])


def test_non_probabilistic_files_have_only_point_terms():
    hard = evaluate(lines_of(["1", "0", "0"]), arr(1, 1, -1))
    assert hard.non_probabilistic
    terms = hard.terms()
    assert terms["nlp"] is None and terms["brier"] is None
    assert terms["01l"].tolist() == [0.0, 1.0, 0.0]
    point = evaluate(lines_of(["1 0 0", "1 3 0"]), arr(1.0, 1.0))
    terms = point.terms()
    assert terms["nlpd"] is None and terms["crps"] is None
    assert terms["se"].tolist() == [1.0, 4.0]
    assert point.scores["nmse"] is None  # var(t) = 0: the terms stay, nmse is n/a


def test_terms_come_from_what_evaluate_kept_not_from_the_file():
    rng = np.random.default_rng(8005)
    t = rng.normal(0, 1, 25)
    lines = [_regression_row(rng, "quantiles", float(x)) for x in t]
    source = io.BytesIO(lines_of(lines))
    targets = io.BytesIO(lines_of([repr(float(x)) for x in t]))
    result = evaluate(source, targets)
    source.close()
    targets.close()
    with pytest.raises(ValueError):  # the files cannot be read again ...
        evaluate(source, targets)
    terms = result.terms()  # ... and need not be
    _check_against_scores(result, t)
    assert terms["crps"].tolist() == result.context.rows.stats.crps.tolist()
    # A fresh copy each time: changing one leaves the evaluation as it was.
    terms["crps"][:] = 0
    assert result.terms()["crps"].tolist() == result.context.rows.stats.crps.tolist()


def test_compute_terms_on_a_context():
    result = evaluate(lines_of(["0.25", "0.75"]), arr(-1, 1))
    terms = compute_terms(result.context)
    assert terms["brier"].tolist() == [0.0625, 0.0625]
