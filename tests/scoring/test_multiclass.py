"""scoring.multiclass: the losses of spec §7 by hand, against peers (scikit-learn, scipy),
against the binary task at L = 2, and on both paths (the C kernel and numpy)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.stats
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss, log_loss

from scoring import classification
from scoring import multiclass as mc
from scoring.classification import ECE_BINS, bin_index

# --- a table by hand: 4 examples, L = 3 ---------------------------------------------------

PROBS = np.array(
    [
        [0.7, 0.2, 0.1],  # y = 0: predicted 0, right, c = 0.7
        [0.1, 0.8, 0.1],  # y = 2: predicted 1, wrong, c = 0.8
        [0.25, 0.25, 0.5],  # y = 2: predicted 2, right, c = 0.5
        [0.7, 0.2, 0.1],  # y = 1: predicted 0, wrong, c = 0.7
    ]
)
Y = np.array([0, 2, 2, 1])

# nlp = −(ln 0.7 + ln 0.1 + ln 0.5 + ln 0.2)/4 = −ln(0.007)/4.
NLP = -math.log(0.007) / 4
# brier rows: 0.3² + 0.2² + 0.1² = 0.14; 0.1² + 0.8² + 0.9² = 1.46;
# 0.25² + 0.25² + 0.5² = 0.375; 0.7² + 0.8² + 0.1² = 1.14: mean 3.115/4.
BRIER_ROWS = [0.14, 1.46, 0.375, 1.14]
# Confidence bins (m/15, (m+1)/15]: 0.7 → 10 (twice: a = 1 and 0), 0.8 = 12/15 → 11 (the
# edge belongs to the bin below), 0.5 → 7. ECE = (|1 − 1.4| + |0 − 0.8| + |1 − 0.5|)/4.
ECE = (0.4 + 0.8 + 0.5) / 4
RMSCE = math.sqrt((0.4**2 / 2 + 0.8**2 + 0.5**2) / 4)
# SCE, class by class, Σ_m |hits − Σ p| over the bins of p_k:
#   class 0: p = .7 .1 .25 .7 → bin 10 {r0 y=0, r3}: |1 − 1.4|; bin 1: |0 − .1|; bin 3: |0 − .25|
#            = 0.75
#   class 1: p = .2 .8 .25 .2 → bin 2 (0.2 = 3/15 is an edge) {r0, r3 y=1}: |1 − .4|;
#            bin 11: |0 − .8|; bin 3: |0 − .25| = 1.65
#   class 2: p = .1 .1 .5 .1 → bin 1 {r0, r1 y=2, r3}: |1 − .3|; bin 7 {r2 y=2}: |1 − .5| = 1.2
# SCE = (0.75 + 1.65 + 1.2)/(n·L) = 3.6/12.
SCE = 3.6 / 12
# ACE: n = 4 < 15, so R = 4 ranges of one example each: (1/(4·3)) Σ_i Σ_k |1{y_i = k} − p_ik|,
# each row's L1 distance to its one-hot target: 0.6 + 1.8 + 1.0 + 1.6 = 5.0.
ACE = 5.0 / 12


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15)


@pytest.mark.parametrize("compiled", [True, False])
def test_the_table_by_hand_on_both_paths(compiled, no_native):
    context = no_native() if not compiled else _nothing()
    with context:
        s = mc.summarize(PROBS, Y)
        assert _close(s.nlp(), NLP) and _close(s.nlp(10), NLP / math.log(10))
        assert _close(s.brier_score(), 3.115 / 4)
        assert s.zero_one() == 0.5 and s.errors == 2
        assert _close(s.ece(), ECE) and _close(s.rmsce(), RMSCE) and _close(s.sce(), SCE)
        assert _close(mc.ace(PROBS, Y), ACE)
        assert _close(mc.ace(PROBS, Y, summary=s), ACE)
        assert s.predicted.tolist() == [0, 1, 2, 0] and not s.point
        np.testing.assert_allclose(s.brier_rows, BRIER_ROWS, rtol=1e-14)
        np.testing.assert_allclose(s.nlp_terms(math.e), -np.log([0.7, 0.1, 0.5, 0.2]), rtol=1e-15)
        assert s.zero_one_terms().tolist() == [0.0, 1.0, 0.0, 1.0]
        assert s.brier_terms() is s.brier_rows
        # The bins behind ece: counts, Σ c and Σ a per bin.
        assert {m: tuple(s.top[m]) for m in np.flatnonzero(s.top[:, 0])} == {
            7: (1.0, 0.5, 1.0),
            10: (2.0, 1.4, 1.0),
            11: (1.0, 0.8, 0.0),
        }
        assert s.classwise[1, 2].tolist() == [2.0, 0.4, 1.0]  # class 1, bin 2: r0 and r3


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_the_per_example_functions_by_hand():
    assert mc.nlp_terms(PROBS, Y, base=2) == pytest.approx(-np.log2([0.7, 0.1, 0.5, 0.2]))
    assert mc.brier_terms(PROBS, Y) == pytest.approx(BRIER_ROWS, rel=1e-14)
    assert mc.zero_one_terms(PROBS, Y).tolist() == [0.0, 1.0, 0.0, 1.0]
    assert mc.predicted_class(PROBS).tolist() == [0, 1, 2, 0]
    # Labels as MATLAB writes them (floats holding integers) are the same labels.
    assert mc.brier_terms(PROBS, Y.astype(float)).tolist() == mc.brier_terms(PROBS, Y).tolist()


def test_ties_predict_the_smallest_class():
    probs = np.array([[0.4, 0.4, 0.2], [0.2, 0.4, 0.4], [0.5, 0.5, 0.0], [1 / 3, 1 / 3, 1 / 3]])
    assert mc.predicted_class(probs).tolist() == [0, 1, 0, 0]
    s = mc.summarize(probs, [1, 2, 1, 2])
    assert s.predicted.tolist() == [0, 1, 0, 0] and s.errors == 4
    # L = 2: (0.5, 0.5) predicts class 0, where the binary task's p = 0.5 predicts +1.
    assert mc.zero_one_terms([[0.5, 0.5]], [1]).tolist() == [1.0]
    assert classification.zero_one_terms([0.5], [1]).tolist() == [0.0]


def test_nlp_is_infinite_only_where_a_true_class_got_zero():
    probs = np.array([[0.0, 1.0], [0.5, 0.5], [1.0, 0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert mc.nlp_terms(probs, [1, 0, 0]).tolist() == [0.0, math.log(2), 0.0]
        assert math.copysign(1.0, mc.nlp_terms(probs, [1, 0, 0])[0]) == 1.0  # not −0.0
        terms = mc.nlp_terms(probs, [0, 1, 0])
        assert terms[0] == math.inf and terms[2] == 0.0
        assert mc.summarize(probs, [0, 1, 0]).nlp() == math.inf
        assert mc.summarize(probs, [1, 1, 0]).nlp(2) == pytest.approx(1 / 3)


def test_a_subnormal_true_probability_gives_a_large_finite_nlp(no_native):
    probs = np.array([[5e-324, 1.0 - 5e-324], [0.5, 0.5]])
    expected = -math.log(5e-324)
    for context in (_nothing(), no_native()):
        with context:
            s = mc.summarize(probs, [0, 1])
            assert s.nll_terms[0] == expected and s.nlp() == pytest.approx(
                (expected + math.log(2)) / 2
            )


def test_one_hot_files_and_rows():
    assert mc.is_one_hot([[0, 1, 0], [1, 0, 0]])
    assert not mc.is_one_hot([[0, 1, 0], [0.5, 0.5, 0]])
    assert not mc.is_one_hot([[0.0, 0.0, 0.0]])  # (no 1: not a prediction of a class)
    assert mc.summarize([[0, 1, 0], [1, 0, 0]], [1, 2]).point
    assert not mc.summarize([[0, 1, 0], [0.5, 0.5, 0]], [1, 2]).point


def test_a_single_class_among_the_targets(no_native):
    rng = np.random.default_rng(11)
    probs = rng.dirichlet(np.ones(4), size=50)
    y = np.zeros(50, dtype=int)
    for context in (_nothing(), no_native()):
        with context:
            s = mc.summarize(probs, y)
            assert _close(s.nlp(), -np.mean(np.log(probs[:, 0])))
            assert _close(s.zero_one(), np.mean(probs.argmax(axis=1) != 0))
            assert s.classwise[1:, :, 2].sum() == 0 and s.classwise[0, :, 2].sum() == 50
            assert _close(mc.ace(probs, y), _ace_by_definition(probs, y))
    assert mc.class_frequencies(y, 4).tolist() == [1.0, 0.0, 0.0, 0.0]


def test_class_frequencies_are_the_baseline():
    assert mc.class_frequencies([2, 0, 2, 2], 4).tolist() == [0.25, 0.0, 0.75, 0.0]
    assert mc.class_frequencies(np.array([1.0, 1.0]), 2).tolist() == [0.0, 1.0]
    with pytest.raises(ValueError, match=r"class indices in 0\.\.3"):
        mc.class_frequencies([4], 4)
    with pytest.raises(ValueError, match="at least one"):
        mc.class_frequencies([], 4)


@pytest.mark.parametrize(
    "probs, y, message",
    [
        (PROBS, [0, 1, 3, 0], r"class indices in 0\.\.2"),
        (PROBS, [0, 1, 2.5, 0], r"class indices in 0\.\.2"),
        (PROBS, [0, 1, math.nan, 0], r"class indices in 0\.\.2"),
        (PROBS, [0, 1, -1, 0], r"class indices in 0\.\.2"),
        (PROBS, [0, 1, 2], "4 rows but there are 3 labels"),
        (PROBS * 2, Y, r"lie in \[0, 1\]"),
        (np.where(PROBS == 0.5, math.nan, PROBS), Y, r"lie in \[0, 1\]"),
        (PROBS[0], [0, 1, 2], "n × L"),
    ],
)
def test_bad_input_is_refused_on_both_paths(probs, y, message, no_native):
    for call in (mc.summarize, mc.nlp_terms, mc.brier_terms, mc.zero_one_terms, mc.ace):
        with pytest.raises(ValueError, match=message):
            call(probs, y)
        with no_native(), pytest.raises(ValueError, match=message):
            call(probs, y)


# --- bins: the edges are the doubles m/15 -------------------------------------------------


def test_values_on_an_edge_fall_in_the_bin_below(no_native):
    edges = np.arange(16) / 15
    assert bin_index(edges).tolist() == [0, *range(14)] + [14]
    above = np.nextafter(edges[:-1], 2.0)
    assert bin_index(above).tolist() == list(range(15))
    # Every p_k of a row on an edge: class-wise and top-label bins agree on both paths.
    rows = np.array([[m / 15, 1 - m / 15] for m in range(16)])
    y = np.arange(16) % 2
    for context in (_nothing(), no_native()):
        with context:
            s = mc.summarize(rows, y)
            counts = np.zeros((2, 15))
            for k in range(2):
                np.add.at(counts[k], bin_index(rows[:, k]), 1)
            assert s.classwise[:, :, 0].tolist() == counts.tolist()
            conf = rows.max(axis=1)
            assert s.top[:, 0].tolist() == np.bincount(bin_index(conf), minlength=15).tolist()


# --- the C kernel and numpy agree ----------------------------------------------------------


def _random_case(rng, n: int, n_classes: int, style: str):
    if style == "dirichlet":
        probs = rng.dirichlet(np.full(n_classes, rng.choice([0.1, 1.0, 5.0])), size=n)
    elif style == "rounded":  # ties everywhere, many values on or near the edges
        probs = np.round(rng.dirichlet(np.ones(n_classes), size=n) * 15) / 15
        probs /= probs.sum(axis=1, keepdims=True)
        probs[~np.isfinite(probs).all(axis=1)] = 1.0 / n_classes
    else:  # one-hot rows, some of them
        probs = rng.dirichlet(np.ones(n_classes), size=n)
        hard = rng.random(n) < 0.5
        probs[hard] = np.eye(n_classes)[rng.integers(0, n_classes, hard.sum())]
    return probs, rng.integers(0, n_classes, n)


@pytest.mark.parametrize("seed", range(30))
def test_the_kernel_and_numpy_agree(seed, no_native):
    rng = np.random.default_rng([seed, 26])
    n = int(rng.integers(1, 3000))
    n_classes = int(rng.choice([2, 3, 10, 57]))
    probs, y = _random_case(rng, n, n_classes, ("dirichlet", "rounded", "hard")[seed % 3])
    compiled = mc.summarize(probs, y)
    with no_native():
        plain = mc.summarize(probs, y)
    assert compiled.point == plain.point and compiled.errors == plain.errors
    assert compiled.predicted.tolist() == plain.predicted.tolist()
    for a, b in ((compiled.top, plain.top), (compiled.classwise, plain.classwise)):
        assert np.array_equal(a[..., 0], b[..., 0]) and np.array_equal(a[..., 2], b[..., 2])
        np.testing.assert_allclose(a[..., 1], b[..., 1], rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(compiled.nll_terms, plain.nll_terms, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(compiled.brier_rows, plain.brier_rows, rtol=1e-13, atol=1e-16)
    for name in ("nlp", "brier_score", "zero_one", "ece", "rmsce", "sce"):
        assert _close(getattr(compiled, name)(), getattr(plain, name)()), name
    # And both are the definitions, written out row by row.
    with np.errstate(divide="ignore"):  # (a one-hot row may give its true class 0: inf)
        assert _close(compiled.nlp(), -np.mean(np.log(probs[np.arange(n), y])))
    assert _close(compiled.brier_score(), np.mean(np.sum((probs - np.eye(n_classes)[y]) ** 2, 1)))
    assert _close(compiled.ece(), _ece_by_definition(probs, y))
    assert _close(compiled.sce(), _sce_by_definition(probs, y))


def _ece_by_definition(probs, y) -> float:
    conf = probs.max(axis=1)
    right = probs.argmax(axis=1) == y
    total = 0.0
    for m in range(ECE_BINS):
        low, high = m / ECE_BINS, (m + 1) / ECE_BINS
        inside = (conf > low) & (conf <= high)
        if inside.any():
            total += inside.sum() / y.size * abs(right[inside].mean() - conf[inside].mean())
    return total


def _sce_by_definition(probs, y) -> float:
    n, n_classes = probs.shape
    total = 0.0
    for k in range(n_classes):
        for m in range(ECE_BINS):
            low, high = m / ECE_BINS, (m + 1) / ECE_BINS
            p = probs[:, k]
            inside = ((p > low) | (m == 0)) & (p <= high)
            if inside.any():
                gap = abs(np.mean(y[inside] == k) - p[inside].mean())
                total += inside.sum() / n * gap
    return total / n_classes


def _ace_by_definition(probs, y) -> float:
    n, n_classes = probs.shape
    parts = []
    for k in range(n_classes):
        order = np.argsort(probs[:, k], kind="stable")
        for r in np.array_split(order, min(n, ECE_BINS)):
            parts.append(abs(np.mean(y[r] == k) - np.mean(probs[r, k])))
    return math.fsum(parts) / len(parts)


def test_a_thousand_classes(no_native):
    rng = np.random.default_rng(1000)
    probs = rng.dirichlet(np.full(1000, 0.05), size=400)
    y = rng.integers(0, 1000, 400)
    for context in (_nothing(), no_native()):
        with context:
            s = mc.summarize(probs, y)
            assert _close(s.sce(), _sce_by_definition(probs, y))
            assert _close(s.ece(), _ece_by_definition(probs, y))
            assert _close(mc.ace(probs, y), _ace_by_definition(probs, y))
            assert s.classwise.shape == (1000, 15, 3) and s.classwise[:, :, 0].sum() == 400_000


# --- L = 2 against the binary task ----------------------------------------------------------


def test_two_classes_against_the_binary_task():
    rng = np.random.default_rng(2)
    p = rng.uniform(0.01, 0.99, 500)  # p(class 1), never 0.5
    t = np.where(rng.random(500) < p, 1.0, -1.0)
    probs, y = np.column_stack([1.0 - p, p]), (t == 1).astype(int)
    s = mc.summarize(probs, y)
    assert _close(s.brier_score(), 2 * classification.brier(p, t))
    assert _close(s.nlp(), classification.nlp(p, t))
    assert s.zero_one() == classification.zero_one(p, t)
    assert _close(s.ece(), classification.ece(p, t))
    np.testing.assert_allclose(mc.brier_terms(probs, y), 2 * classification.brier_terms(p, t))


# --- peers: scikit-learn and scipy ----------------------------------------------------------


@pytest.mark.parametrize("n_classes", [2, 5, 40])
def test_log_loss_and_brier_agree_with_scikit_learn(n_classes):
    rng = np.random.default_rng(n_classes)
    probs = rng.dirichlet(np.ones(n_classes), size=300)
    y = rng.integers(0, n_classes, 300)
    s = mc.summarize(probs, y)
    assert _close(s.nlp(), log_loss(y, probs, labels=range(n_classes)))
    per_class = sum(brier_score_loss(y == k, probs[:, k]) for k in range(n_classes))
    assert _close(s.brier_score(), per_class)


def test_bins_agree_with_scikit_learns_calibration_curve():
    """calibration_curve(strategy="uniform") puts p in bin searchsorted(inner edges, p), so p
    on an inner edge goes to the bin below and 0 to the first: §7's convention. Its edges
    are np.linspace(0, 1, 16), i·(1/15), which may differ from m/15 by an ulp; no value of
    random data lies within an ulp of an edge, so the bins hold the same examples here.
    It lists the non-empty bins only: their mean outcome and mean prediction."""
    rng = np.random.default_rng(15)
    probs = rng.dirichlet(np.full(4, 0.7), size=2000)
    y = rng.integers(0, 4, 2000)
    s = mc.summarize(probs, y)
    conf, right = probs.max(axis=1), probs.argmax(axis=1) == y
    accuracy, confidence = calibration_curve(right, conf, n_bins=15, strategy="uniform")
    count, conf_sum, correct = s.top[s.top[:, 0] > 0].T
    np.testing.assert_allclose(accuracy, correct / count, rtol=1e-12)
    np.testing.assert_allclose(confidence, conf_sum / count, rtol=1e-12)
    for k in range(4):
        frequency, mean = calibration_curve(y == k, probs[:, k], n_bins=15, strategy="uniform")
        cells = s.classwise[k][s.classwise[k][:, 0] > 0]
        np.testing.assert_allclose(frequency, cells[:, 2] / cells[:, 0], rtol=1e-12)
        np.testing.assert_allclose(mean, cells[:, 1] / cells[:, 0], rtol=1e-12)


def test_entropy_against_scipy():
    rng = np.random.default_rng(3)
    q = rng.dirichlet(np.full(6, 0.3), size=(4, 5))
    q[0, 0] = [0.5, 0.5, 0, 0, 0, 0]
    np.testing.assert_allclose(mc.entropy(q), scipy.stats.entropy(q, axis=-1), rtol=1e-13)
    assert mc.entropy(np.eye(3)).tolist() == [0.0, 0.0, 0.0]  # 0·ln 0 = 0, never NaN
    assert mc.entropy(np.full(8, 1 / 8)) == pytest.approx(math.log(8), rel=1e-15)
    assert mc.entropy(np.zeros((0, 3))).shape == (0,)


def test_ensemble_uncertainty_by_definition():
    """Two ensemble rows and a single row: TU, DU and MI over the ensemble rows only."""
    rng = np.random.default_rng(4)
    members = [rng.dirichlet(np.ones(3), size=m) for m in (2, 5)]
    single = np.array([[0.2, 0.3, 0.5]])
    probs = np.vstack([m.mean(axis=0) for m in members] + [single])
    member_entropy = np.array([scipy.stats.entropy(m, axis=1).mean() for m in members] + [np.nan])
    counts = np.array([2, 5, 1])
    for base in (math.e, 2.0, 10.0):
        tu, du, mi, examples = mc.ensemble_uncertainty(probs, counts, member_entropy, base=base)
        want_tu = np.mean([scipy.stats.entropy(m.mean(axis=0), base=base) for m in members])
        want_du = np.mean([scipy.stats.entropy(m, axis=1, base=base).mean() for m in members])
        assert examples == 2
        assert tu == pytest.approx(want_tu, rel=1e-13) and du == pytest.approx(want_du, rel=1e-13)
        assert mi == pytest.approx(want_tu - want_du, rel=1e-10) and mi > 0
    # Identical members carry no information about the label: MI is 0, never negative.
    same = np.array([[0.1, 0.2, 0.7]])
    h = float(mc.entropy(same[0]))
    assert mc.ensemble_uncertainty(same, [3], [h])[2] == 0.0
    with pytest.raises(ValueError, match="some above 1"):
        mc.ensemble_uncertainty(single, [1], [np.nan])


def test_the_unchecked_entropy_equals_the_masked_one_bit_for_bit_zeros_included():
    rng = np.random.default_rng(7)
    q = rng.dirichlet(np.full(6, 0.3), size=2000)
    q[rng.random(q.shape) < 0.2] = 0.0  # (0 · ln 0 = 0)
    q[0] = [1, 0, 0, 0, 0, 0]
    q[1] = [5e-324, 0, 0, 0, 0, 1 - 5e-324]
    logs = np.zeros_like(q)
    np.log(q, out=logs, where=q > 0)
    masked = -np.einsum("...k,...k->...", q, logs) + 0.0
    assert np.array_equal(mc.entropy_of_checked(q), masked)
    assert mc.entropy_of_checked(q)[0] == 0.0
    assert np.array_equal(mc.entropy(q), masked)


def test_ensemble_uncertainty_still_refuses_values_outside_the_unit_interval():
    for bad in (1.5, -0.1, np.nan):
        probs = np.array([[0.5, 0.5], [bad, 0.2]])
        with pytest.raises(ValueError, match=r"\[0, 1\]"):
            mc.ensemble_uncertainty(probs, np.array([2, 2]), np.array([0.1, 0.1]))
