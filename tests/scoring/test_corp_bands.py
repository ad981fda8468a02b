"""scoring.corp_bands: CORP consistency bands and the intervals of MCB and DSC."""

import math

import numpy as np
import pytest

from scoring import corp_bands, corp_intervals, corp_pool, multiclass
from scoring.corp_bands import consistency_bands, decomposition_intervals, inside, pool
from scoring.decomposition import pav
from scoring.evaluate import evaluate

_erfc = np.vectorize(math.erfc)


def phi(z):
    """The standard normal CDF (by erfc: no cancellation in either tail)."""
    return 0.5 * _erfc(-np.asarray(z, dtype=np.float64) / math.sqrt(2))


def test_bands_by_hand():
    # Forecasts of exactly 0 and 1 always come true as forecast: a band of one point.
    sure = consistency_bands([0.0, 1.0, 0.0, 1.0], seed=3)
    assert sure["points"] == [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]
    assert sure["level"] == 0.9 and sure["resamples"] == 100
    # Four forecasts of 1/2 pool into one group whose refit is Binomial(4, 1/2)/4:
    # P(0) = 1/16 > 5 % and P(1) = 1/16 > 5 %, so the 90 % band is [0, 1].
    half = consistency_bands([0.5] * 4, seed=3, resamples=2000)
    assert half["points"] == [[0.5, 0.0, 1.0]]
    assert consistency_bands([], seed=3)["points"] == []


def test_bands_and_intervals_are_fixed_by_the_seed():
    rng = np.random.default_rng(8)
    p = rng.uniform(size=400)
    t = np.where(rng.uniform(size=p.size) < p, 1.0, -1.0)
    assert consistency_bands(p, seed=4) == consistency_bands(p, seed=4)
    assert consistency_bands(p, seed=4) != consistency_bands(p, seed=5)
    first = decomposition_intervals(p, t, seed=4, resamples=200)
    assert first == decomposition_intervals(p, t, seed=4, resamples=200)
    assert first != decomposition_intervals(p, t, seed=5, resamples=200)
    assert corp_bands.seed_for(400, "bands") != corp_bands.seed_for(401, "bands")


def test_a_large_split_is_banded_on_a_thinned_grid():
    p = np.random.default_rng(2).uniform(size=5000)
    points = np.array(consistency_bands(p, seed=1)["points"])
    assert len(points) <= corp_bands.BAND_POINTS
    assert points[0, 0] == p.min() and points[-1, 0] == p.max()
    assert (np.diff(points[:, 0]) > 0).all() and (points[:, 1] <= points[:, 2]).all()


def _band_share(rng, n, *, calibrated: bool, seed: int) -> float:
    z = rng.normal(size=n)
    x, truth = (phi(z), phi(z)) if calibrated else (phi(2 * z), phi(z))
    t = np.where(rng.uniform(size=n) < truth, 1.0, -1.0)
    return inside(consistency_bands(x, seed=seed), x, t)


def test_a_calibrated_curve_stays_in_its_band_a_miscalibrated_one_leaves_it():
    rng = np.random.default_rng(2021)
    calibrated = [_band_share(rng, 500, calibrated=True, seed=s) for s in range(20)]
    miscalibrated = [_band_share(rng, 500, calibrated=False, seed=s) for s in range(20)]
    # Pointwise 90 % bands: about 90 % of the points inside under calibration.
    assert 0.85 <= np.mean(calibrated) <= 0.95
    assert np.mean(miscalibrated) < 0.6 and max(miscalibrated) < min(calibrated)


def test_binary_plot_data_carries_bands_and_intervals():
    rng = np.random.default_rng(12)
    p = rng.uniform(size=300)
    t = np.where(rng.uniform(size=p.size) < p, 1.0, -1.0)
    lines = "".join(f"{float(v)!r}\n" for v in p).encode()
    data = evaluate(lines, t, task="classification").plot_data()
    bands = consistency_bands(p, seed=corp_bands.seed_for(300, "bands"))
    assert data["bands"] == {**bands, "inside": inside(bands, p, t)}
    assert 0.5 < data["bands"]["inside"] <= 1  # calibrated forecasts
    want = decomposition_intervals(p, t, seed=corp_bands.seed_for(300, "intervals"))
    assert data["decomposition_intervals"] == want
    for name in ("brier", "nlp"):
        lower, upper = want[name]["score"]
        assert lower <= data["decomposition"][name]["score"] <= upper


def test_the_multiclass_top_label_gets_its_corp_curve_and_band():
    rng = np.random.default_rng(40)
    logits = rng.normal(size=(600, 4))
    probs = np.exp(2 * logits) / np.exp(2 * logits).sum(axis=1, keepdims=True)
    y = (rng.uniform(size=(600, 1)) > np.cumsum(probs, axis=1)).sum(axis=1)
    got = multiclass.plot_data(probs, y)["top_label"]["corp"]
    confidence, correct = probs.max(axis=1), probs.argmax(axis=1) == y
    bands = consistency_bands(confidence, seed=corp_bands.seed_for(600, "top-label"))
    targets = np.where(correct, 1.0, -1.0)
    assert got["bands"] == {**bands, "inside": inside(bands, confidence, targets)}
    assert got["bands"]["inside"] > 0.8  # y drawn from probs: calibrated
    # The same y under the softmax of doubled logits: overconfident, out of its band.
    sharper = np.exp(4 * logits) / np.exp(4 * logits).sum(axis=1, keepdims=True)
    assert multiclass.plot_data(sharper, y)["top_label"]["corp"]["bands"]["inside"] < 0.5
    ends = [x for x, _ in got["curve"]]
    assert ends[0] == confidence.min() and ends[-1] == confidence.max()
    # The curve is the PAV fit of correctness on confidence, read at each block's ends.
    fit = pav(confidence, correct.astype(float))
    fitted = dict(zip(confidence.tolist(), fit.tolist(), strict=True))
    assert all(fitted[x] == pytest.approx(value, abs=1e-15) for x, value in got["curve"])


def _tanh_case(n, seed):
    """x = (1 + tanh z)/2 against outcomes of probability (1 + tanh 0.7z)/2: overconfident."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=n)
    x = 0.5 * (1 + np.tanh(z))
    return x, np.where(rng.uniform(size=n) < 0.5 * (1 + np.tanh(0.7 * z)), 1.0, -1.0)


def test_the_resampled_pav_runs_on_at_most_groups_values_whatever_n(monkeypatch):
    # The cost bound: every PAV input (all B rows end to end) has ≤ B·(GROUPS + 2) values,
    # and the resamples are drawn per group, never as B × n counts.
    sizes = []

    def spy(count, total, first):
        sizes.append(np.asarray(count).size)
        return pool(count, total, first)

    monkeypatch.setattr(corp_bands, "pool", spy)
    monkeypatch.setattr(corp_intervals, "pool", spy)
    x, t = _tanh_case(200_000, 1)
    bands = consistency_bands(x, seed=1)
    assert max(sizes) <= bands["resamples"] * (corp_pool.GROUPS + 2)
    sizes.clear()
    decomposition_intervals(x, t, seed=1, resamples=300)
    assert sizes and max(sizes) <= corp_intervals.CHUNK * (corp_pool.GROUPS + 2)
    o = (t == 1).astype(float)
    groups = corp_intervals.Groups(x, o, {"brier": (x - o) ** 2})
    assert not groups.exact and groups.count.size <= corp_pool.GROUPS + 2
    zeros, ones = groups.draw(np.random.default_rng(0), 5)
    assert zeros.shape == ones.shape == (5, groups.count.size)
    assert ((zeros + ones).sum(axis=1) == x.size).all()


def test_grouped_bands_and_intervals_agree_with_the_exact_ones():
    x, t = _tanh_case(20_000, 3)
    exact = decomposition_intervals(x, t, seed=2, resamples=200, limit=x.size)
    grouped = decomposition_intervals(x, t, seed=2, resamples=200, limit=200)
    assert grouped == decomposition_intervals(x, t, seed=2, resamples=200, limit=200)
    assert grouped != decomposition_intervals(x, t, seed=3, resamples=200, limit=200)
    # Different draws: an endpoint's Monte Carlo error with B = 200 is ≈ 5 % of the
    # width (the 2.5 % quantile's standard error 0.19σ against a width of 3.9σ), the
    # grouping's change of MCB and DSC far below that; 25 % is ≈ 3.5 standard errors.
    for name in ("brier", "nlp"):
        for part in ("score", "mcb", "dsc"):
            (a, b), (c, d) = exact[name][part], grouped[name][part]
            assert abs(a - c) <= 0.25 * (b - a) and abs(b - d) <= 0.25 * (b - a), (name, part)
    want = np.array(consistency_bands(x, seed=2, resamples=200, limit=x.size)["points"])
    got = np.array(consistency_bands(x, seed=2, resamples=200, limit=200)["points"])
    np.testing.assert_array_equal(got[:, 0], want[:, 0])  # the same forecasts
    # Pointwise Monte Carlo noise of a 90 % band from 200 refits, and at the two ends
    # (where a block is one group) the grouped fit moves in steps of 1/(n/limit) = 0.01.
    gap = np.abs(got[:, 1:] - want[:, 1:])
    assert gap.max() <= 0.02 and gap.mean() <= 0.1 * np.mean(want[:, 2] - want[:, 1])
