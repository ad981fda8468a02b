"""scoring.plots: reliability-diagram bins (classification), PIT histogram and coverage."""

import numpy as np
import pytest

from scoring import pit_summary, reliability

from .util import arr


def test_reliability_bins_by_hand():
    p = arr(0.0, 0.05, 0.1, 0.35, 0.38, 0.99, 1.0)
    t = arr(-1, 1, -1, 1, 1, -1, 1)
    bins = reliability(p, t)
    assert len(bins) == 10
    assert [(b["lower"], b["upper"]) for b in bins][:2] == [(0.0, 0.1), (0.1, 0.2)]
    assert bins[-1]["upper"] == 1.0
    assert [b["count"] for b in bins] == [2, 1, 0, 2, 0, 0, 0, 0, 0, 2]
    assert (
        bins[0]["mean_predicted"] == pytest.approx(0.025) and bins[0]["observed_frequency"] == 0.5
    )
    assert bins[1]["mean_predicted"] == 0.1 and bins[1]["observed_frequency"] == 0.0
    assert (
        bins[3]["mean_predicted"] == pytest.approx(0.365) and bins[3]["observed_frequency"] == 1.0
    )
    assert (
        bins[9]["mean_predicted"] == pytest.approx(0.995) and bins[9]["observed_frequency"] == 0.5
    )
    # Empty bins keep their place on the axis.
    assert bins[2] == {
        "lower": 0.2,
        "upper": 0.3,
        "count": 0,
        "mean_predicted": None,
        "observed_frequency": None,
    }
    assert sum(b["count"] for b in reliability(p, t, n_bins=4)) == 7


def test_reliability_counts_match_a_histogram():
    rng = np.random.default_rng(120)
    p = rng.uniform(0, 1, 5000)
    t = np.where(rng.uniform(size=p.size) < p, 1.0, -1.0)
    counts, _ = np.histogram(p, bins=10, range=(0, 1))
    assert [b["count"] for b in reliability(p, t)] == counts.tolist()


def test_reliability_bins_hold_exactly_the_values_between_their_edges():
    edges = [k / 10 for k in range(11)]
    probes = sorted({np.nextafter(e, d) for e in edges for d in (-1, 2)} | set(edges))
    probes = [x for x in probes if 0 <= x <= 1]
    for x in probes:
        bins = reliability(arr(x), arr(1))
        (hit,) = [b for b in bins if b["count"]]
        assert hit["lower"] <= x < hit["upper"] or (x == 1.0 and hit["upper"] == 1.0), x


def test_pit_summary_by_hand():
    pit = arr(0.0, 0.05, 0.1, 0.5, 0.5, 0.74, 0.9, 0.97, 1.0)
    s = pit_summary(pit)
    assert s["n"] == 9
    assert [b["count"] for b in s["bins"]] == [2, 1, 0, 0, 0, 2, 0, 1, 0, 3]
    assert (s["bins"][0]["lower"], s["bins"][0]["upper"], s["bins"][9]["upper"]) == (0.0, 0.1, 1.0)
    # Central intervals: 10 % is [0.45, 0.55], 50 % [0.25, 0.75], 80 % [0.1, 0.9],
    # 90 % [0.05, 0.95], 95 % [0.025, 0.975].
    inside = {"10": 2, "20": 2, "30": 2, "40": 2, "50": 3, "60": 3, "70": 3, "80": 5, "90": 6}
    assert s["coverage"] == {
        **{level: pytest.approx(k / 9) for level, k in inside.items()},
        "95": pytest.approx(7 / 9),
    }


def test_pit_of_calibrated_gaussians_is_uniform():
    from scoring import gaussian_stats

    rng = np.random.default_rng(121)
    m = rng.normal(0, 1, 20000)
    v = rng.uniform(0.5, 2, 20000)
    t = m + rng.normal(0, 1, 20000) * np.sqrt(v)
    s = pit_summary(gaussian_stats(m, v, t).pit)
    counts = np.array([b["count"] for b in s["bins"]])
    assert np.all(np.abs(counts - 2000) < 200)
    for level in ("50", "80", "95"):
        assert s["coverage"][level] == pytest.approx(int(level) / 100, abs=0.015)


def test_pit_summary_of_nothing():
    s = pit_summary(np.array([]))
    assert s["n"] == 0 and all(v is None for v in s["coverage"].values())
