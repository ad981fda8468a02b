"""The non-randomised PIT of discrete predictive distributions (Czado, Gneiting & Held
2009): sample rows by their verification rank, point predictions by [1{t > m}, 1{t ≥ m}],
and the histogram, coverage and KS test built from the mean PIT CDF (scoring.pit)."""

import numpy as np
import pytest
from scipy import stats

from scoring import evaluate, gaussian_stats, pit_summary, quantile_stats, sample_stats
from scoring.decomposition import pit_uniformity_test
from scoring.distributions import Stats
from scoring.parse import read_regression
from scoring.pit import MeanPit, ks_distance

from .util import arr, lines_of


def _figures(s: Stats) -> tuple[dict, dict]:
    low, high = s.pit_bounds()
    return pit_summary(high, pit_low=low), pit_uniformity_test(high, pit_low=low)


def _ensemble(rng, n, k, spread=1.0):
    """Per row a normal of its own mean and scale; the outcome drawn from it and the k
    members from the same normal with ``spread`` times its scale (1: calibrated)."""
    mu, sd = rng.normal(0, 3, n), rng.uniform(0.2, 3.0, n)
    members = mu[:, None] + spread * sd[:, None] * rng.normal(size=(n, k))
    return members, mu + sd * rng.normal(size=n)


def _assert_flat(summary, n, within=0.06):
    counts = np.array([b["count"] for b in summary["bins"]], dtype=float)
    assert counts.sum() == pytest.approx(n, abs=0.01)
    assert np.abs(counts / (n / counts.size) - 1).max() < within, counts


# --- calibrated and over-confident ensembles -------------------------------------------------


@pytest.mark.parametrize("k", [10, 100])
def test_a_calibrated_ensemble_passes(k):
    # Issue 28: with the PIT j/K this gave [1821, 1748, 3645, 0, …], p = 1e-144 and a
    # 90 % coverage of 0.82 at K = 10 (p = 0.004 at K = 100).
    rng = np.random.default_rng(2800 + k)
    members, t = _ensemble(rng, 20000, k)
    summary, test = _figures(sample_stats(members, t))
    assert test["p_value"] > 0.01, test
    _assert_flat(summary, 20000)
    assert summary["coverage"]["90"] == pytest.approx(0.90, abs=0.01)
    assert summary["coverage"]["50"] == pytest.approx(0.50, abs=0.01)


@pytest.mark.parametrize("k", [10, 100])
def test_an_over_confident_ensemble_fails(k):
    rng = np.random.default_rng(2810 + k)
    members, t = _ensemble(rng, 20000, k, spread=0.5)
    summary, test = _figures(sample_stats(members, t))
    assert test["p_value"] < 1e-6, test
    counts = [b["count"] for b in summary["bins"]]
    assert counts[0] > 2 * counts[5] and counts[-1] > 2 * counts[5]  # U-shaped
    assert summary["coverage"]["90"] < 0.8


def test_an_ensemble_with_ties_is_calibrated():
    # Poisson counts, members and outcome iid per row: ties with members are common, and
    # with a mean down to 0.05 whole ensembles are often all 0 (issue 28's "ties").
    rng = np.random.default_rng(2820)
    lam = np.exp(rng.uniform(np.log(0.05), np.log(6.0), 20000))
    members = rng.poisson(lam[:, None], size=(20000, 10)).astype(float)
    t = rng.poisson(lam).astype(float)
    equal = members.min(axis=1) == members.max(axis=1)
    assert equal.mean() > 0.1
    s = sample_stats(members, t)
    summary, test = _figures(s)
    assert test["p_value"] > 0.01, test
    _assert_flat(summary, 20000)
    assert summary["coverage"]["90"] == pytest.approx(0.90, abs=0.01)
    # An over-dispersed outcome (a Poisson mixture) against the same members fails.
    wide = rng.poisson(lam * rng.gamma(0.5, 2.0, 20000)).astype(float)
    assert _figures(sample_stats(members, wide))[1]["p_value"] < 1e-6


def test_rare_counts_with_all_zero_ensembles_are_calibrated():
    # Why a sample of equal values keeps its rank interval: with rare counts most
    # ensembles are all 0, and taken as point predictions, [1{t > m}, 1{t ≥ m}], the same
    # calibrated ensembles would fail.
    rng = np.random.default_rng(2825)
    lam = rng.uniform(0.05, 0.3, 20000)
    members = rng.poisson(lam[:, None], size=(20000, 10)).astype(float)
    t = rng.poisson(lam).astype(float)
    equal = members.min(axis=1) == members.max(axis=1)
    assert equal.mean() > 0.2
    s = sample_stats(members, t)
    assert _figures(s)[1]["p_value"] > 0.01
    m = members[:, 0]
    point_low = np.where(equal, (t > m) * 1.0, s.pit_low)
    point_high = np.where(equal, (t >= m) * 1.0, s.pit)
    assert pit_uniformity_test(point_high, pit_low=point_low)["p_value"] < 1e-6


def test_the_rank_interval_against_scipy_ranks():
    # [below/(K+1), (at_or_below+1)/(K+1)]: the outcome's lowest and highest rank among
    # the K + 1 values, 1-based, as scipy.stats.rankdata gives them, less one, over K + 1.
    rng = np.random.default_rng(2830)
    members = rng.integers(0, 6, (500, 7)).astype(float)
    t = rng.integers(0, 6, 500).astype(float)
    s = sample_stats(members, t)
    both = np.column_stack([t, members])
    lowest = stats.rankdata(both, method="min", axis=1)[:, 0]
    highest = stats.rankdata(both, method="max", axis=1)[:, 0]
    np.testing.assert_array_equal(s.pit_low, (lowest - 1) / 8)
    np.testing.assert_array_equal(s.pit, highest / 8)


def test_rank_intervals_by_hand():
    s = sample_stats(
        np.array([[1.0, 2.0, 2.0, 5.0]] * 4 + [[2.0, 2.0, 2.0, 2.0]] * 3),
        arr(0.0, 2.0, 3.0, 9.0, 1.0, 2.0, 3.0),
    )
    assert s.pit_low.tolist() == [0.0, 0.2, 0.6, 0.8, 0.0, 0.0, 0.8]
    assert s.pit.tolist() == [0.2, 0.8, 0.8, 1.0, 0.2, 1.0, 1.0]


# --- point predictions ------------------------------------------------------------------------


def test_point_predictions_are_atoms():
    s = gaussian_stats(arr(1.0, 1.0, 1.0), arr(0.0, 0.0, 0.0), arr(0.5, 1.0, 1.5))
    low, high = s.pit_bounds()
    assert low.tolist() == [0.0, 0.0, 1.0] and high.tolist() == [0.0, 1.0, 1.0]
    # A positive variance stays continuous: one value.
    g = gaussian_stats(arr(1.0), arr(4.0), arr(1.0))
    assert g.pit_low is None and g.pit_bounds() == (g.pit, g.pit)


def test_point_predictions_that_always_hit_are_uniform():
    m = np.random.default_rng(2840).normal(size=1000)
    summary, test = _figures(gaussian_stats(m, np.zeros(1000), m))
    assert [b["count"] for b in summary["bins"]] == [100] * 10
    assert summary["coverage"] == {
        key: pytest.approx(int(key) / 100, abs=1e-12) for key in summary["coverage"]
    }
    assert test["statistic"] == pytest.approx(0.0, abs=1e-12) and test["p_value"] == 1.0


def test_point_predictions_that_miss_fail():
    rng = np.random.default_rng(2841)
    m = rng.normal(size=2000)
    t = m + rng.normal(size=2000)  # a continuous outcome never hits the mark
    summary, test = _figures(gaussian_stats(m, np.zeros(2000), t))
    counts = [b["count"] for b in summary["bins"]]
    assert counts[1:9] == [0] * 8 and counts[0] + counts[9] == 2000
    assert all(value == 0 for value in summary["coverage"].values())
    assert test["p_value"] < 1e-6


# --- the mean PIT CDF, its histogram, coverage and KS distance by hand ------------------------

# Two intervals and two single values: A = [0, 0.5], B = 0.25, C = [0.6, 1], D = 1.
LOW, HIGH = arr(0.0, 0.25, 0.6, 1.0), arr(0.5, 0.25, 1.0, 1.0)


def test_mean_pit_cdf_by_hand():
    at, before = MeanPit.of(HIGH, LOW).counts(arr(0.0, 0.1, 0.25, 0.5, 0.7, 1.0))
    # n·F̄(u): A gives 2u up to 0.5, B 1 from 0.25, C (u − 0.6)/0.4 from 0.6, D 1 at 1.
    assert at.tolist() == pytest.approx([0.0, 0.2, 1.5, 2.0, 2.25, 4.0])
    assert before.tolist() == pytest.approx([0.0, 0.2, 0.5, 2.0, 2.25, 3.0])


def test_histogram_and_coverage_by_hand():
    s = pit_summary(HIGH, pit_low=LOW)
    assert s["n"] == 4
    # A spreads 0.2 over each of the bins 0–4, B falls in [0.2, 0.3), C gives 0.25 to
    # each of the bins 6–9 and D falls in the last bin, closed at 1.
    assert [b["count"] for b in s["bins"]] == [0.2, 0.2, 1.2, 0.2, 0.2, 0, 0.25, 0.25, 0.25, 1.25]
    # 50 %: [0.25, 0.75] holds half of A, B (on the end: inside) and 0.15/0.4 of C;
    # 80 %: [0.1, 0.9] 0.8 of A, B, 0.75 of C; 95 %: [0.025, 0.975] 0.95, 1, 0.9375.
    assert s["coverage"]["50"] == pytest.approx(1.875 / 4)
    assert s["coverage"]["80"] == pytest.approx(2.55 / 4)
    assert s["coverage"]["95"] == pytest.approx(2.8875 / 4)


def test_ks_distance_by_hand():
    # F̄ just below 1 is 3/4 (D's mass sits at 1 itself): D = 1/4.
    test = pit_uniformity_test(HIGH, pit_low=LOW)
    assert test["statistic"] == pytest.approx(0.25, abs=1e-15)
    root = 2.0
    assert test["p_value"] == pytest.approx(
        2
        * sum(
            (-1) ** (k - 1) * np.exp(-2 * k * k * ((root + 0.12 + 0.11 / root) * 0.25) ** 2)
            for k in range(1, 100)
        ),
        rel=1e-12,
    )


def _brute_force_distance(low, high, grid):
    """sup |F̄(u) − u| over a fine grid, F̄ summed directly (test only)."""
    best = 0.0
    width = high - low
    for chunk in np.array_split(grid, 40):
        u = chunk[:, None]
        safe = np.where(width > 0, width, 1.0)
        each = np.where(width > 0, np.clip((u - low) / safe, 0.0, 1.0), (u >= high) * 1.0)
        best = max(best, float(np.abs(each.mean(axis=1) - chunk).max()))
    return best


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ks_distance_against_a_fine_grid(seed):
    rng = np.random.default_rng(2850 + seed)
    n = 200
    low = rng.uniform(0, 0.95, n) ** (1 + seed)  # (skewed: a far from uniform F̄ too)
    high = np.minimum(low + rng.uniform(0.05, 0.5, n), 1.0)
    single = rng.random(n) < 0.3
    high[single] = low[single]
    d = ks_distance(MeanPit.of(high, low))
    grid = np.linspace(0.0, 1.0, 400001)
    h = grid[1]
    slope = 1 + np.mean(1 / (high - low)[~single])
    brute = _brute_force_distance(low, high, grid)
    # The grid misses the sup by at most one step of F̄ − u (jumps are approached from
    # either side within a step).
    assert brute <= d + 1e-12 and d - brute <= 2 * h * slope, (d, brute)


def test_single_values_give_scipys_ks_statistic():
    pit = np.random.default_rng(2860).beta(1.2, 1.0, 3000)
    assert (
        pit_uniformity_test(pit, pit_low=pit)["statistic"] == stats.kstest(pit, "uniform").statistic
    )


@pytest.mark.parametrize("seed", range(40))
def test_single_values_with_ties_and_atoms_at_0_and_1_give_scipys_ks_statistic(seed):
    """ks_distance's shortcut for single values (the runs of the sorted values) against
    scipy and against F̄ evaluated at its breakpoints."""
    rng = np.random.default_rng(2870 + seed)
    n = int(rng.integers(1, 400))
    pit = np.round(rng.beta(0.7, 1.3, n), int(rng.integers(1, 4)))  # ties; 0 and 1 too
    pit[rng.random(n) < 0.05] = 1.0
    mean_pit = MeanPit.of(pit)
    x = mean_pit.breakpoints()
    at, before = mean_pit.counts(x)
    at_breakpoints = max(np.max(np.abs(at / n - x)), np.max(np.abs(before / n - x)))
    assert ks_distance(mean_pit) == at_breakpoints
    assert ks_distance(mean_pit) == pytest.approx(stats.kstest(pit, "uniform").statistic, abs=1e-15)


def test_the_mean_of_randomised_pit_histograms():
    # F̄ is the randomised PIT's distribution averaged over its randomisation: the mean
    # of many randomised histograms (each np.histogram of uniform draws on [l, u]).
    rng = np.random.default_rng(2870)
    members = rng.poisson(2.0, (60, 5)).astype(float)
    s = sample_stats(members, rng.poisson(2.0, 60).astype(float))
    low, high = s.pit_bounds()
    draws = low + (high - low) * rng.random((50000, 60))
    randomised = np.histogram(draws, bins=10, range=(0, 1))[0] / 50000
    ours = [b["count"] for b in pit_summary(high, pit_low=low)["bins"]]
    np.testing.assert_allclose(ours, randomised, atol=0.05)


# --- through the reader, evaluate, subsets ----------------------------------------------------


def test_mixed_file_carries_each_rows_interval():
    rows = read_regression(
        lines_of(["1 0 1", "1 2 0", "0 0.2 -2 0.3 -1 0.8 1 0.9 3", "2 1 2 3 4", "1 5 0"]),
        path="p",
        targets=arr(0.0, 2.0, 0.0, 2.0, 4.0),
    )
    low, high = rows.stats.pit_bounds()
    q = quantile_stats([[0.2, 0.3, 0.8, 0.9]], [[-2.0, -1.0, 1.0, 3.0]], arr(0.0)).pit[0]
    assert low.tolist() == [0.5, 0.0, q, 0.2, 0.0]
    assert high.tolist() == [0.5, 1.0, q, 0.6, 0.0]
    part = rows.subset(np.array([3, 1]))
    assert part.stats.pit_bounds()[0].tolist() == [0.2, 0.0]
    assert part.stats.pit_bounds()[1].tolist() == [0.6, 1.0]


def test_evaluate_and_its_subset_use_the_rank_pit():
    rng = np.random.default_rng(2880)
    members, t = _ensemble(rng, 3000, 10)
    lines = ["2 " + " ".join(map(repr, row)) for row in members.tolist()]
    ev = evaluate(lines_of(lines), t, task="regression")
    data = ev.plot_data()
    assert data["calibration_test"]["p_value"] > 0.01
    assert any(isinstance(b["count"], float) for b in data["pit"]["bins"])
    _assert_flat(data["pit"], 3000, within=0.15)
    mask = rng.random(3000) < 0.4
    alone = evaluate(
        lines_of([x for x, keep in zip(lines, mask, strict=True) if keep]),
        t[mask],
        task="regression",
    )
    assert ev.subset(mask).plot_data()["pit"] == alone.plot_data()["pit"]
    assert ev.subset(mask).plot_data()["calibration_test"] == alone.plot_data()["calibration_test"]
