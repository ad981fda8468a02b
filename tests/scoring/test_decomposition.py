"""scoring.decomposition: PAV, the CORP decomposition (spec §6), the KS test of PIT values."""

import math

import numpy as np
import pytest
from scipy import special, stats
from sklearn.isotonic import IsotonicRegression

from scoring import ScoringOptions, classification, evaluate, gaussian_stats, pit_summary
from scoring.decomposition import (
    MAX_CURVE_POINTS,
    corp,
    kolmogorov_tail,
    pav,
    pit_uniformity_test,
    recalibration,
)
from scoring.plots import COVERAGE_LEVELS

from .util import arr

PARTS = ("score", "mcb", "dsc", "unc")


def _random_case(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Predictions and ±1 targets of many shapes: continuous, ties, 0/1 with matching
    outcomes, one class, badly calibrated."""
    n = int(rng.integers(1, 300))
    kind = rng.integers(0, 6)
    if kind == 0:
        p = rng.uniform(size=n)
    elif kind == 1:  # a coarse grid: many ties
        p = rng.integers(0, 11, n) / 10
    elif kind == 2:
        p = rng.beta(0.3, 0.3, n)
    else:
        p = rng.uniform(size=n) ** rng.uniform(0.2, 5)
    o = rng.uniform(size=n) < np.clip(p + rng.normal(0, 0.2, n), 0, 1)
    if kind == 4:  # p exactly 0 or 1 on some examples, with matching outcomes
        hard = rng.uniform(size=n) < 0.3
        p = np.where(hard, o.astype(float), p)
    o = np.where(p == 0, False, np.where(p == 1, True, o))  # nlp stays finite
    if kind == 5:  # one class
        o = np.full(n, bool(rng.integers(0, 2)))
        p = np.where(o, np.maximum(p, 1e-3), np.minimum(p, 1 - 1e-3))
    return p, np.where(o, 1.0, -1.0)


@pytest.mark.parametrize("base", [math.e, 2.0, 10.0])
def test_identity_and_signs_over_many_random_cases(base):
    rng = np.random.default_rng(600 + round(base))
    for _ in range(400):
        p, t = _random_case(rng)
        d = corp(p, t, log_base=base)
        assert d["brier"]["score"] == classification.brier(p, t)
        assert d["nlp"]["score"] == classification.nlp(p, t, base=base)
        for name in ("brier", "nlp"):
            score, mcb, dsc, unc = (d[name][k] for k in PARTS)
            assert math.isfinite(score), (name, p, t)
            assert abs(score - (mcb - dsc + unc)) <= 1e-12 * max(1.0, abs(score))
            assert mcb >= 0 and dsc >= 0 and unc >= 0


def test_hand_computed_case():
    p = arr(0.1, 0.3, 0.3, 0.6, 0.8, 0.9)
    t = arr(-1, 1, -1, -1, 1, 1)
    # Sorted by p the outcomes are 0 | 1 0 (tie) | 0 | 1 | 1: PAV pools 0.3, 0.3, 0.6.
    assert pav(p, t == 1).tolist() == pytest.approx([0, 1 / 3, 1 / 3, 1 / 3, 1, 1], abs=1e-15)
    d = corp(p, t)
    # brier: S(p) = (0.01 + 0.49 + 0.09 + 0.36 + 0.04 + 0.01)/6, S(p̂) = (2/3)/6, S(c) = 1/4.
    assert d["brier"] == {
        "score": pytest.approx(1 / 6, abs=1e-15),
        "mcb": pytest.approx(1 / 6 - 1 / 9, abs=1e-15),
        "dsc": pytest.approx(1 / 4 - 1 / 9, abs=1e-15),
        "unc": pytest.approx(1 / 4, abs=1e-15),
    }
    score = -sum(map(math.log, (0.9, 0.3, 0.7, 0.4, 0.8, 0.9))) / 6
    recalibrated = (math.log(3) + 2 * math.log(3 / 2)) / 6
    assert d["nlp"] == {
        "score": pytest.approx(score, abs=1e-14),
        "mcb": pytest.approx(score - recalibrated, abs=1e-14),
        "dsc": pytest.approx(math.log(2) - recalibrated, abs=1e-14),
        "unc": pytest.approx(math.log(2), abs=1e-14),
    }
    d2 = corp(p, t, log_base=2)
    for part in PARTS:
        assert d2["nlp"][part] == pytest.approx(d["nlp"][part] / math.log(2), rel=1e-13)
    curve = recalibration(p, t)["curve"]
    expected = [[0.1, 0], [0.1, 0], [0.3, 1 / 3], [0.6, 1 / 3], [0.8, 1], [0.9, 1]]
    assert np.allclose(curve, expected, rtol=0, atol=1e-15)


@pytest.mark.parametrize("ties", [False, True])
def test_pav_agrees_with_scikit_learn(ties):
    rng = np.random.default_rng(610 + ties)
    for _ in range(200):
        n = int(rng.integers(1, 400))
        p = rng.integers(0, rng.integers(1, 30), n) / 7 if ties else rng.normal(size=n)
        o = (rng.uniform(size=n) < 1 / (1 + np.exp(-rng.normal(1, 1) * p))).astype(float)
        expected = IsotonicRegression(increasing=True).fit_transform(p, o)
        assert np.allclose(pav(p, o), expected, rtol=0, atol=1e-12)


def test_pav_on_a_long_run_that_pools_one_block_at_a_time():
    # Frequencies 0.1, …, 0.9 rising, then a heavy group of zeros that pools them all.
    p = np.repeat(np.arange(1, 11) / 10, [10] * 9 + [1000])
    o = np.concatenate([np.arange(10) < k for k in range(1, 10)] + [np.zeros(1000, bool)])
    expected = IsotonicRegression().fit_transform(p, o.astype(float))
    assert np.allclose(pav(p, o), expected, rtol=0, atol=1e-12)
    assert np.all(pav(p, o) == o.sum() / o.size)


def test_pav_properties():
    rng = np.random.default_rng(611)
    p = rng.integers(0, 50, 5000) / 49
    o = rng.uniform(size=p.size) < p**2
    fitted = pav(p, o)
    order = np.argsort(p, kind="stable")
    assert np.all(np.diff(fitted[order]) >= 0)
    for value in np.unique(p):  # ties get one value
        assert np.unique(fitted[p == value]).size == 1
    assert fitted.mean() == pytest.approx(o.mean(), abs=1e-12)
    # Pure blocks are exactly 0 or 1: a recalibrated nlp is finite.
    pure = pav(arr(0.2, 0.1, 0.9, 0.7), arr(0, 0, 1, 1))
    assert pure.tolist() == [0.0, 0.0, 1.0, 1.0]
    assert pav(np.array([]), np.array([])).size == 0


def test_calibrated_groups_have_no_miscalibration():
    rng = np.random.default_rng(612)
    for _ in range(50):
        groups = int(rng.integers(1, 12))
        sizes = rng.integers(1, 40, groups)
        positives = [int(rng.integers(0, s + 1)) for s in sizes]
        p = np.concatenate([np.full(s, k / s) for s, k in zip(sizes, positives, strict=True)])
        o = np.concatenate([np.arange(s) < k for s, k in zip(sizes, positives, strict=True)])
        d = corp(p, np.where(o, 1.0, -1.0))
        for name in ("brier", "nlp"):
            assert d[name]["mcb"] == pytest.approx(0, abs=1e-12)


@pytest.mark.parametrize("cls", [1.0, -1.0])
def test_one_class_has_no_uncertainty_and_no_discrimination(cls):
    p = np.random.default_rng(613).uniform(0.01, 0.99, 50)
    d = corp(p, np.full(p.size, cls))
    for name in ("brier", "nlp"):
        assert d[name]["unc"] == 0 and d[name]["dsc"] == 0
        assert d[name]["mcb"] == d[name]["score"] > 0


def test_a_true_class_given_zero_makes_miscalibration_infinite():
    p, t = arr(0.0, 0.2, 0.7, 0.9), arr(1, -1, 1, -1)
    d = corp(p, t)
    assert d["nlp"]["score"] == math.inf and d["nlp"]["mcb"] == math.inf
    assert math.isfinite(d["nlp"]["dsc"]) and d["nlp"]["unc"] == pytest.approx(math.log(2))
    assert math.isfinite(d["brier"]["mcb"])


def test_non_probabilistic_predictions_are_decomposed_too():
    p, t = arr(0, 1, 1, 0), arr(-1, 1, 1, 1)
    d = corp(p, t)
    assert d["brier"]["score"] == 0.25 and d["nlp"]["mcb"] == math.inf
    assert corp([], [])["brier"] == dict.fromkeys(PARTS)


def test_recalibration_curve_stays_small_and_keeps_its_ends():
    rng = np.random.default_rng(614)
    p = rng.uniform(size=200_000)
    t = np.where(rng.uniform(size=p.size) < p, 1.0, -1.0)
    r = recalibration(p, t)
    curve = np.array(r["curve"])
    assert 2 <= len(curve) <= MAX_CURVE_POINTS and len(curve) % 2 == 0
    assert np.all(np.diff(curve[:, 0]) >= 0) and np.all(np.diff(curve[:, 1]) >= 0)
    fitted = pav(p, t == 1)
    assert curve[0].tolist() == [p.min(), fitted[p.argmin()]]
    assert curve[-1].tolist() == [p.max(), fitted[p.argmax()]]
    hist = r["histogram"]
    assert len(hist) == 20 and sum(b["count"] for b in hist) == p.size
    assert (hist[0]["lower"], hist[-1]["upper"]) == (0.0, 1.0)
    assert recalibration(arr(1.0, 0.0), arr(1, -1))["histogram"][-1]["count"] == 1


def test_kolmogorov_tail_matches_scipy():
    for lam in np.linspace(0, 3, 301):
        assert kolmogorov_tail(lam) == pytest.approx(special.kolmogorov(lam), abs=1e-10)
    assert kolmogorov_tail(1.358) == pytest.approx(0.05, abs=5e-4)


@pytest.mark.parametrize("n", [100, 150, 1000])
def test_stephens_formula_against_the_exact_distribution(n):
    d = np.linspace(0.001, 0.5, 2000)
    root = math.sqrt(n)
    ours = np.array([kolmogorov_tail((root + 0.12 + 0.11 / root) * x) for x in d])
    exact = stats.kstwo.sf(d, n)
    error = np.abs(ours - exact)
    assert error[exact < 0.5].max() < 0.01 and error[exact < 0.05].max() < 5e-4
    assert error.max() < (0.012 if n < 150 else 0.01)


@pytest.mark.parametrize("n", [100, 300, 1000, 5000])
def test_ks_test_agrees_with_scipy(n):
    rng = np.random.default_rng(620 + n)
    for shape in (1.0, 1.05, 1.15, 1.4):
        pit = rng.beta(shape, 1.0, n)
        ours = pit_uniformity_test(pit)
        theirs = stats.kstest(pit, "uniform")
        assert ours["statistic"] == theirs.statistic
        # Stephens' formula against scipy's exact distribution: within 0.01 for p < 0.5
        # (where decisions are made) from n = 100 on, and everywhere from n = 150 on; at
        # n = 100 its largest error is 0.0115, near p = 0.75.
        tolerance = 0.01 if n >= 150 or theirs.pvalue < 0.5 else 0.012
        assert ours["p_value"] == pytest.approx(theirs.pvalue, abs=tolerance)
        assert ours["test"] == "Kolmogorov–Smirnov"


def test_ks_test_of_nothing_and_of_calibrated_gaussians():
    assert pit_uniformity_test([]) == {
        "statistic": None,
        "p_value": None,
        "test": "Kolmogorov–Smirnov",
    }
    rng = np.random.default_rng(621)
    m, v = rng.normal(size=2000), rng.uniform(0.5, 2, 2000)
    t = m + rng.normal(size=2000) * np.sqrt(v)
    assert pit_uniformity_test(gaussian_stats(m, v, t).pit)["p_value"] > 0.01
    assert pit_uniformity_test(gaussian_stats(m, v / 4, t).pit)["p_value"] < 1e-6


def test_coverage_levels_ten_to_ninety_and_ninety_five():
    assert COVERAGE_LEVELS == (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
    rng = np.random.default_rng(622)
    m, v = rng.normal(size=20000), rng.uniform(0.5, 2, 20000)
    t = m + rng.normal(size=20000) * np.sqrt(v)
    coverage = pit_summary(gaussian_stats(m, v, t).pit)["coverage"]
    assert list(coverage) == ["10", "20", "30", "40", "50", "60", "70", "80", "90", "95"]
    for level, value in coverage.items():
        assert value == pytest.approx(int(level) / 100, abs=0.015)


def _lines(values) -> bytes:
    return "".join(f"{float(v)!r}\n" for v in values).encode()


def test_plot_data_carries_the_decomposition_and_the_calibration_test():
    rng = np.random.default_rng(623)
    p = rng.uniform(size=500)
    t = np.where(rng.uniform(size=p.size) < p, 1.0, -1.0)
    result = evaluate(_lines(p), t, options=ScoringOptions(log_base=2))
    data = result.plot_data()
    assert set(data) == {
        "reliability",
        "decomposition",
        "decomposition_intervals",
        "recalibration",
        "bands",
        "retention",
    }
    for name in ("brier", "nlp"):
        assert data["decomposition"][name]["score"] == pytest.approx(result.scores[name], rel=1e-12)
    assert data["decomposition"] == corp(p, t, log_base=2)
    assert data["recalibration"] == recalibration(p, t)
    m = rng.normal(size=200)
    rows = "".join(f"1 {float(x)!r} 1\n" for x in m).encode()
    data = evaluate(rows, m + rng.normal(size=200)).plot_data()
    assert set(data) == {"pit", "calibration_test", "retention"}
    assert 0 <= data["calibration_test"]["p_value"] <= 1
