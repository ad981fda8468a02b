"""scoring.corp_intervals: the bootstrap intervals of MCB, DSC, UNC and the score."""

import math

import numpy as np
import pytest

from scoring import corp_intervals, corp_pool
from scoring.corp_bands import decomposition_intervals
from scoring.decomposition import corp

_erfc = np.vectorize(math.erfc)


def phi(z):
    """The standard normal CDF (by erfc: no cancellation in either tail)."""
    return 0.5 * _erfc(-np.asarray(z, dtype=np.float64) / math.sqrt(2))


def test_intervals_by_hand():
    # p = (0.2, 0.8), t = (−1, +1): PAV gives (0, 1), so every resample has brier 0.04
    # and MCB 0.04 (its interval starts at 0: [0, 2·0.04 − 0.04]); one that draws a single example has c ∈ {0, 1}, UNC = DSC = 0, one
    # that draws both UNC = DSC = 1/4. Percentiles of {0, 1/4}: [0, 1/4]; DSC = 1/4 is
    # reflected about the estimate: [2·1/4 − 1/4, 2·1/4 − 0].
    got = decomposition_intervals([0.2, 0.8], [-1, 1], seed=7, resamples=400)
    brier = got["brier"]
    assert brier["score"] == pytest.approx([0.04, 0.04], abs=1e-15)
    assert brier["mcb"] == pytest.approx([0.0, 0.04], abs=1e-15)
    assert brier["unc"] == [0.0, 0.25] and brier["dsc"] == [0.25, 0.5]
    assert got["level"] == 0.95 and got["resamples"] == 400


def test_each_resample_is_the_decomposition_of_the_drawn_examples():
    rng = np.random.default_rng(5)
    p = np.round(rng.uniform(size=300), 2)  # ties within and across outcomes
    p[:3] = 0.0  # one true class at probability 0: nlp = +inf when drawn
    t = np.where(rng.uniform(size=p.size) < p**2, 1.0, -1.0)
    t[0] = 1.0
    o = (t == 1).astype(float)
    terms = {
        "brier": corp_intervals.classification.brier_terms(p, t),
        "nlp": corp_intervals.classification.nlp_terms(p, t, base=2),
    }
    groups = corp_intervals.Groups(p, o, terms)
    assert groups.exact  # 101 distinct forecasts: one group each
    zeros, ones = groups.draw(np.random.default_rng(9), 6)
    got = groups.parts(zeros, ones, None, 2)
    # A cell (tie group, outcome) holds equal examples: draw its first one k times.
    starts = groups.starts
    order = np.argsort(p, kind="stable")
    for b in range(6):
        drawn = []
        for g, start in enumerate(starts):
            members = order[start : start + int(groups.count[g])]
            for outcome, k in ((0.0, zeros[b, g]), (1.0, ones[b, g])):
                if k:
                    drawn += [members[o[members] == outcome][0]] * int(k)
        assert len(drawn) == p.size
        want = corp(p[drawn], t[drawn], log_base=2)
        for name in ("brier", "nlp"):
            for part in ("score", "mcb", "dsc", "unc"):
                assert got[name][part][b] == pytest.approx(want[name][part], abs=1e-12)


def _population():
    """MCB and DSC of x = Φ(2z) against outcomes of probability Φ(z), z ~ N(0, 1) (Gauss–
    Hermite): PAV's population limit is P(o = 1 | x) = Φ(z), since x is increasing in z."""
    z, w = np.polynomial.hermite_e.hermegauss(60)
    w = w / w.sum()
    x, p = phi(2 * z), phi(z)
    log_x, log_1x = np.log(phi(2 * z)), np.log(phi(-2 * z))
    entropy = -np.sum(w * (corp_intervals._xlogy(p, p) + corp_intervals._xlogy(1 - p, phi(-z))))
    return {
        "brier": {"mcb": np.sum(w * (x - p) ** 2), "dsc": 0.25 - np.sum(w * p * (1 - p))},
        "nlp": {
            "mcb": -np.sum(w * (p * log_x + (1 - p) * log_1x)) - entropy,
            "dsc": math.log(2) - entropy,
        },
    }


@pytest.mark.parametrize("limit", [corp_pool.GROUPS, 100])
def test_the_intervals_cover_the_population_mcb_and_dsc(limit):
    # limit = 100: the 1,000 distinct forecasts in groups of 10, reflected about the
    # grouped estimate.
    population = _population()
    rng = np.random.default_rng(77)
    replications, n = 50, 1000
    hits = {(name, part): 0 for name in population for part in ("mcb", "dsc")}
    for r in range(replications):
        z = rng.normal(size=n)
        x = phi(2 * z)
        t = np.where(rng.uniform(size=n) < phi(z), 1.0, -1.0)
        got = decomposition_intervals(x, t, seed=100 + r, resamples=400, limit=limit)
        for name, part in hits:
            lower, upper = got[name][part]
            hits[name, part] += lower <= population[name][part] <= upper
    coverage = {key: count / replications for key, count in hits.items()}
    assert min(coverage.values()) >= 0.85, coverage


def test_the_mcb_interval_covers_a_mild_miscalibration():
    # P(y = +1 | x) = x^1.25: PAV's nlp MCB is biased upward ~3× at n = 1,000, and the
    # reflected interval lay wholly above the true value in a quarter of samples; from
    # 0 to its reflected upper end it covers. True MCB by quadrature on x ~ U(0.02, 0.98).
    x_grid, w = np.polynomial.legendre.leggauss(200)
    x_grid = 0.5 + 0.48 * x_grid
    w = w / w.sum()
    c = x_grid**1.25
    ll = lambda q: -(c * np.log(q) + (1 - c) * np.log1p(-q))  # noqa: E731
    true_mcb = float(np.sum(w * (ll(x_grid) - ll(c))))
    rng = np.random.default_rng(125)
    hits, replications = 0, 40
    for r in range(replications):
        x = rng.uniform(0.02, 0.98, size=1000)
        t = np.where(rng.uniform(size=x.size) < x**1.25, 1.0, -1.0)
        lower, upper = decomposition_intervals(x, t, seed=r, resamples=300, log_base=math.e)["nlp"][
            "mcb"
        ]
        assert lower == 0.0
        hits += upper >= true_mcb
    assert hits / replications >= 0.9
