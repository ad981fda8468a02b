"""scoring.quantile_scores and spec §8's quantile scores end to end: ``wis`` with its terms
and the coverages ``covP`` at a dataset's levels, from hand tables and from scoringrules'
quantile, interval and weighted interval scores where they compute the same."""

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
import scoringrules as sr

from scoring import ScoringOptions, evaluate
from scoring.quantile_scores import (
    central_intervals,
    coverages,
    mean,
    nominal,
    quantile_scores,
    wis_terms,
)

from .util import arr, lines_of

LEVELS = (0.1, 0.5, 0.9)
Z90 = 1.2815515655446004  # Φ⁻¹(0.9)


def scored(rows, targets, levels=LEVELS, **options):
    return evaluate(
        lines_of(rows),
        arr(*targets),
        task="regression",
        options=ScoringOptions(quantile_levels=levels, **options),
    )


# --- Hand tables ---------------------------------------------------------------------


def test_quantile_score_by_hand_on_both_sides_and_at_the_quantile():
    q = np.array([[2.0, 2.0, 2.0], [5.0, 5.0, 5.0]])
    # t = 3 above q = 2: 2α(t − q); t = 5 on q: 0 (1{t < q} is 0 and q − t is 0).
    assert quantile_scores(q, arr(3.0, 5.0), LEVELS).tolist() == [
        [2 * 0.1 * 1, 2 * 0.5 * 1, 2 * 0.9 * 1],
        [0.0, 0.0, 0.0],
    ]
    # t = 1 below q = 2: 2(1 − α)(q − t).
    assert quantile_scores(np.array([[2.0, 2.0]]), arr(1.0), (0.25, 0.75)).tolist() == [[1.5, 0.5]]


def test_wis_of_every_row_type_by_hand():
    rows = [
        "1 2 0.25",  # Gaussian: 2 + 0.5·Φ⁻¹(α)
        "2 0 10",  # a sample of two: numpy's linear rule, 1, 5 and 9 at 0.1, 0.5, 0.9
        "0 0.25 -1 0.75 1",  # quantiles: the tails' inverse below 0.25 and above 0.75
    ]
    ev = scored(rows, [3.0, 4.0, 0.0])
    # t = 3 lies above all three of 2 ∓ 0.5·Φ⁻¹(0.9) and 2: 2α(t − q) each.
    gaussian = (2 * 0.1 * (1 + 0.5 * Z90) + 2 * 0.5 * 1 + 2 * 0.9 * (1 - 0.5 * Z90)) / 3
    sample = (2 * 0.1 * 3 + 2 * 0.5 * 1 + 2 * 0.1 * 5) / 3
    tail = 1 + math.log(2.5)  # b = 1 on both sides: q = ∓(1 + log(0.25/0.1))
    quantile = (2 * 0.1 * tail + 0 + 2 * 0.1 * tail) / 3
    terms = ev.terms()["wis"]
    assert terms == pytest.approx([gaussian, sample, quantile], rel=1e-13)
    assert ev.scores["wis"] == pytest.approx((gaussian + sample + quantile) / 3, rel=1e-13)
    # covP: only 0.1 and 0.9 sum to 1: the sample's [1, 9] and the quantiles' [−1.9, 1.9]
    # hold their targets, the Gaussian's [1.36, 2.64] does not hold 3.
    assert ev.reported == {"cov80": pytest.approx(2 / 3, rel=1e-15)}


def test_a_point_row_is_read_at_its_mean_and_a_point_file_has_neither_wis_nor_coverage():
    mixed = scored(["1 2 0", "1 0 1"], [3.0, 0.0])
    assert mixed.terms()["wis"][0] == pytest.approx((0.2 + 1.0 + 1.8) / 3, rel=1e-15)
    point = scored(["1 2 0", "1 0 0"], [3.0, 0.0])
    assert point.non_probabilistic
    assert point.scores["wis"] is None and point.terms()["wis"] is None
    assert point.reported == {}  # spec §3: only nmse is reported for it


def test_the_wis_of_symmetric_levels_with_the_median_is_bracher_et_al_s_by_hand():
    # Bracher et al. (2021): median 0, the 80 % interval [−1, 1] and the 50 % [−0.5, 0.5]
    # of a quantile row; y = 0.3. WIS = (|y − m|/2 + Σ α_k/2 · IS_α_k)/(K + 1/2) with
    # IS_0.2 = 2 and IS_0.5 = 1 (y inside both): (0.15 + 0.2 + 0.25)/2.5 = 0.24.
    rows = ["0 0.1 -1 0.25 -0.5 0.5 0 0.75 0.5 0.9 1"]
    ev = scored(rows, [0.3], levels=(0.1, 0.25, 0.5, 0.75, 0.9))
    assert ev.scores["wis"] == pytest.approx(0.24, rel=1e-14)
    assert list(ev.reported) == ["cov50", "cov80"]  # narrowest first
    assert ev.reported == {"cov50": 1.0, "cov80": 1.0}


def test_coverage_counts_the_interval_s_ends_as_inside():
    q = np.array([[1.0, 2.0, 3.0]] * 4)
    assert coverages(q, arr(1.0, 3.0, 0.999, 3.001), LEVELS) == {"cov80": 0.5}


def test_no_sum_overflows_before_its_division():
    # QS_0.1 = 2·0.9·1.2e308 alone exceeds the largest double; the term, their mean over
    # the two levels, is 1.2e308 exactly.
    q = np.array([[1.2e308, 1.2e308]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert wis_terms(q, arr(0.0), (0.1, 0.9)).tolist() == [pytest.approx(1.2e308, rel=1e-15)]
        assert mean(np.array([1.5e308, 1.7e308])) == pytest.approx(1.6e308, rel=1e-15)
        assert mean(np.array([1.0, math.inf])) == math.inf
        assert quantile_scores(q, arr(0.0), (0.1, 0.9))[0, 0] == math.inf  # 2.16e308


def test_infinite_quantiles_score_inf_never_nan():
    # a tail reading past the largest double is ±inf (scoring.row_quantiles): its QS is
    # +inf on either side of the target, the interval still covers what lies inside it
    q = np.array([[1.0, math.inf, math.inf], [-math.inf, 0.0, 1e308]])
    t = np.array([2.0, -1e308])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scores = quantile_scores(q, t, (0.05, 0.5, 0.95))
        terms = wis_terms(q, t, (0.05, 0.5, 0.95))
        assert not np.isnan(scores).any()
        assert scores[0, 1:].tolist() == [math.inf, math.inf] and scores[1, 0] == math.inf
        assert terms.tolist() == [math.inf, math.inf] and mean(terms) == math.inf
        assert coverages(q, t, (0.05, 0.5, 0.95)) == {"cov90": 1.0}


# --- Which levels form a central interval, and its name -------------------------------


def test_central_intervals_pair_levels_summing_to_one_within_1e_9():
    assert central_intervals((0.05, 0.25, 0.5, 0.75, 0.95)) == [(50, 1, 3), (90, 0, 4)]
    assert central_intervals((0.5,)) == []  # the median alone is no interval
    assert central_intervals((0.1, 0.2, 0.3)) == []
    # Within 1e-9 (the decimal, compared exactly): in; 2e-9 off: out.
    assert central_intervals((0.1, 0.9 + 1e-9 - 1e-12)) == [(80, 0, 1)]
    assert central_intervals((0.1, 0.9 + 2e-9)) == []
    # A level pairs with any that fits: 0.3 with 0.7, 0.25 with 0.75.
    assert central_intervals((0.25, 0.3, 0.7, 0.75)) == [(40, 1, 2), (50, 0, 3)]


def test_p_is_the_rounded_exact_width_in_percent():
    assert central_intervals((0.025, 0.975)) == [(95, 0, 1)]
    assert central_intervals((0.005, 0.995)) == [(99, 0, 1)]
    assert central_intervals((0.49, 0.51)) == [(2, 0, 1)]
    assert central_intervals((0.4999, 0.5001)) == [(0, 0, 1)]  # 0.02 % rounds to 0
    # 0.0455 and 0.9545 (±2σ): 90.9 % → 91.
    assert central_intervals((0.0455, 0.9545)) == [(91, 0, 1)]
    width = Fraction(0.9545) - Fraction(0.0455)
    assert round(100 * width) == 91


def test_two_pairs_of_one_width_give_one_name_the_wider():
    levels = (0.05, 0.05 + 1e-10, 0.95)
    assert central_intervals(levels) == [(90, 0, 2)]


def test_nominal_reads_the_name():
    assert nominal("cov90") == 0.9 and nominal("cov5") == 0.05
    assert nominal("tu") is None and nominal("cov") is None and nominal("covx") is None


# --- Peers: scoringrules 0.8.0 --------------------------------------------------------


def _random_rows(rng, n):
    """Every row type, mixed: Gaussians (points included), quantile rows, samples."""
    rows = []
    for _ in range(n):
        kind = rng.integers(3)
        if kind == 0:
            v = 0.0 if rng.random() < 0.1 else float(rng.gamma(2.0))
            rows.append(f"1 {float(rng.normal())!r} {v!r}")
        elif kind == 1:
            a = np.sort(rng.choice(np.arange(1, 20), size=rng.integers(2, 6), replace=False)) / 20
            q = np.cumsum(rng.gamma(1.0, size=a.size)) - 2
            pairs = zip(a.tolist(), q.tolist(), strict=True)
            rows.append("0 " + " ".join(f"{x!r} {y!r}" for x, y in pairs))
        else:
            s = rng.normal(size=rng.integers(1, 8))
            rows.append("2 " + " ".join(repr(float(x)) for x in s))
    return rows


@pytest.mark.parametrize("seed", range(5))
def test_quantile_scores_agree_with_scoringrules_quantile_score(seed):
    rng = np.random.default_rng(seed)
    levels = tuple(np.sort(rng.choice(np.arange(1, 100), size=7, replace=False)) / 100)
    rows = _random_rows(rng, 60)
    t = rng.normal(size=60)
    ev = scored(rows, list(t), levels=levels)
    q = ev.context.rows.quantiles(levels)
    mine = quantile_scores(q, t, levels)
    # scoringrules' S_α has no factor 2 and puts y = q on the left (zero either way).
    peer = np.column_stack(
        [sr.quantile_score(t, q[:, k], a, backend="numpy") for k, a in enumerate(levels)]
    )
    np.testing.assert_allclose(mine, 2 * peer, rtol=1e-12, atol=1e-15)
    if not ev.non_probabilistic:
        np.testing.assert_allclose(ev.terms()["wis"], (2 * peer).mean(axis=1), rtol=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_wis_agrees_with_scoringrules_interval_scores(seed):
    rng = np.random.default_rng(100 + seed)
    outside = np.array([0.1, 0.2, 0.5])  # scoringrules' α: the intervals' outside mass
    levels = (0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95)
    rows = _random_rows(rng, 80)
    t = rng.normal(size=80)
    ev = scored(rows, list(t), levels=levels)
    if ev.non_probabilistic:
        pytest.skip("every row a point prediction")
    q = ev.context.rows.quantiles(levels)
    lower, median, upper = q[:, [0, 1, 2]], q[:, 3], q[:, [6, 5, 4]]
    # Bracher et al.'s WIS, the median weighted 1/2 and each interval α/2 (scoringrules'
    # defaults): our wis over the 2K + 1 levels. scoringrules 0.8.0 adds w_median·median
    # where the paper has w_median·|y − median| (scoringrules/core/interval.py), so it is
    # handed |y − median| as the median to compute the paper's score.
    peer = sr.weighted_interval_score(
        t, np.abs(t - median), lower, upper, outside, w_median=0.5, backend="numpy"
    )
    np.testing.assert_allclose(ev.terms()["wis"], peer, rtol=1e-12, atol=1e-15)
    # And interval by interval: α/2·IS_α is the mean of its ends' QS.
    for k, a in enumerate(outside):
        interval = sr.interval_score(t, lower[:, k], upper[:, k], a, backend="numpy")
        ends = quantile_scores(q[:, [k, 6 - k]], t, (levels[k], levels[6 - k]))
        np.testing.assert_allclose(a / 2 * interval, ends.sum(axis=1) / 2, rtol=1e-12)
    # Coverage: the share inside each central interval, counted directly.
    for p, low, high in ((50, 2, 4), (80, 1, 5), (90, 0, 6)):
        inside = np.mean((q[:, low] <= t) & (t <= q[:, high]))
        assert ev.reported[f"cov{p}"] == inside


def test_wis_is_a_mean_of_terms_and_follows_subsets():
    rng = np.random.default_rng(7)
    rows = _random_rows(rng, 40)
    t = rng.normal(size=40)
    ev = scored(rows + ["1 0 1"], [*t, 0.0])
    terms = ev.terms()["wis"]
    assert ev.scores["wis"] == pytest.approx(terms.mean(), rel=1e-15)
    mask = np.arange(41) % 3 == 0
    part = ev.subset(mask)
    np.testing.assert_array_equal(part.terms()["wis"], terms[mask])
    q = ev.context.rows.quantiles(LEVELS)[mask]
    assert part.reported == coverages(q, ev.context.targets[mask], LEVELS)
    np.testing.assert_array_equal(wis_terms(q, ev.context.targets[mask], LEVELS), terms[mask])
