"""Spec §8 against peers: scoringrules' quantile, interval and weighted interval scores
where they compute what ``wis`` computes, scipy's and numpy's quantiles, numerical
integration of §2's density, and brute force over every order of a tie for ``rauc`` and
``aurc``. Each peer checks both ``scoring`` (through ``scoring.evaluate``) and the exact
reference of tests/scoring/reference_selective.py.

scoringrules (test-only, pinned in requirements-test.txt) scores
QS'_α(q, y) = (1{y ≤ q} − α)(q − y), half of §8's QS_α; its interval score is
IS_α(l, u, y) = (u − l) + (2/α)(l − y)1{y < l} + (2/α)(y − u)1{y > u}, so that levels
α/2 and 1 − α/2 give wis = ½(QS_α/2(l) + QS_1−α/2(u)) = (α/2)·IS_α; and Bracher et al.'s
WIS over the median and K central intervals (weights ½ and α_k/2, divided by K + ½) is the
mean of the 2K + 1 quantile scores QS'·2, i.e. §8's ``wis`` for those 2K + 1 levels.
"""

from __future__ import annotations

import itertools
import math
import random
import statistics
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import scipy.stats
import scoringrules as sr

import scoring
from scoring import ScoringOptions

from . import reference_selective as ref

REL = 1e-9


def _close(got, want, rel=REL, abs_=1e-12) -> bool:
    return got is not None and (abs(got - want) <= rel * abs(want) or abs(got - want) <= abs_)


# --------------------------------------------------------------- scoringrules: QS, IS, WIS


def test_the_quantile_score_is_twice_scoringrules_pinball_loss():
    rng = random.Random(11)
    for _ in range(500):
        q, t = rng.gauss(0, 10), rng.gauss(0, 10)
        if rng.random() < 0.1:
            t = q
        alpha = rng.uniform(0.001, 0.999)
        want = 2 * float(sr.quantile_score(t, q, alpha))
        got = ref.quantile_score((Fraction(q), 0), alpha, t)
        assert _close(float(got), want, 1e-12), (q, t, alpha, got, want)


def _rows_file(rng: random.Random, n: int) -> tuple[list, list[float], bytes, bytes]:
    """Gaussian, quantile and sample rows of moderate magnitudes and their targets."""
    rows, targets, lines = [], [], []
    for _ in range(n):
        kind = rng.choice("gqs")
        m = rng.gauss(0, 5)
        if kind == "g":
            v = rng.uniform(0.1, 9)
            rows.append(("g", m, v))
            lines.append(f"1 {m!r} {v!r}")
        elif kind == "q":
            a = sorted({rng.uniform(0.02, 0.98) for _ in range(rng.randint(2, 6))})
            while len(a) < 2:
                a.append(min(a[0] + 0.1, 0.99))
                a.sort()
            q = [m]
            for _ in a[1:]:
                q.append(q[-1] + rng.uniform(0.2, 3))
            rows.append(("q", a, q))
            lines.append("0 " + " ".join(f"{x!r} {y!r}" for x, y in zip(a, q, strict=True)))
        else:
            s = [m + rng.gauss(0, 2) for _ in range(rng.randint(1, 15))]
            rows.append(("s", s))
            lines.append("2 " + " ".join(repr(x) for x in s))
        mean = float(ref.row_mean(rows[-1]))
        targets.append(mean + rng.gauss(0, 3))
    pred = ("\n".join(lines) + "\n").encode()
    target = ("\n".join(repr(t) for t in targets) + "\n").encode()
    return rows, targets, pred, target


def _peer_quantile(row, alpha: float) -> float:
    """Each row read at α by a peer: scipy's norm.ppf, numpy's quantile; a quantile row
    (no peer reads §2's distribution) by the reference, checked below against §2's CDF."""
    if row[0] == "g":
        return float(scipy.stats.norm.ppf(alpha, loc=row[1], scale=math.sqrt(row[2])))
    if row[0] == "s":
        return float(np.quantile(np.array(row[1]), alpha))
    base, offset = ref.read_at(row, alpha)
    return float(ref.mpf(base) + offset)


@pytest.mark.parametrize("seed", range(6))
def test_wis_of_a_median_and_central_intervals_is_scoringrules_wis(seed):
    rng = random.Random(seed)
    halves = sorted({round(rng.uniform(0.01, 0.9), 3) for _ in range(rng.randint(1, 5))})
    lows = [h / 2 for h in halves]  # interval α_k: levels α_k/2 and 1 − α_k/2
    levels = tuple(lows) + (0.5,) + tuple(1 - x for x in reversed(lows))
    rows, targets, pred, target = _rows_file(rng, rng.randint(5, 30))
    obs = np.array(targets)
    median = np.array([_peer_quantile(row, 0.5) for row in rows])
    lower = np.array([[_peer_quantile(row, x) for x in lows] for row in rows])
    upper = np.array([[_peer_quantile(row, 1 - x) for x in lows] for row in rows])
    alpha = np.array(halves)
    # scoringrules 0.8.0 adds w_median·median where Bracher et al. add w_median·|y − median|:
    # hand it |y − median| as the "median" to get their WIS
    peer = sr.weighted_interval_score(obs, np.abs(obs - median), lower, upper, alpha)
    want = float(np.mean(peer))
    got = scoring.evaluate(
        pred, target, task="regression", options=ScoringOptions(quantile_levels=levels)
    )
    assert _close(got.scores["wis"], want), (got.scores["wis"], want)
    assert _close(float(ref.mean(ref.wis_terms(rows, targets, levels))), want)
    terms = got.terms()["wis"]
    assert all(_close(float(g), float(w)) for g, w in zip(terms, peer, strict=True))


def test_scoringrules_wis_adds_the_median_itself():
    # the reason for the |y − median| above: y = 1, median 0 and the interval [−1, 0.5] at
    # α = 0.5: Bracher et al. give (½·1 + ¼·3.5)/1.5 = 0.91666…; scoringrules 0.8.0 0.58333…
    peer = sr.weighted_interval_score(1.0, 0.0, np.array([-1.0]), np.array([0.5]), np.array([0.5]))
    assert math.isclose(float(peer), 0.875 / 1.5)


@pytest.mark.parametrize("seed", range(4))
def test_wis_of_one_central_interval_is_half_alpha_times_the_interval_score(seed):
    rng = random.Random(100 + seed)
    width = round(rng.uniform(0.05, 0.95), 2)
    low, high = (1 - width) / 2, 1 - (1 - width) / 2
    alpha = 1 - (high - low)  # the peer's α of the interval [q_low, q_high]
    rows, targets, pred, target = _rows_file(rng, rng.randint(3, 25))
    lower = np.array([_peer_quantile(row, low) for row in rows])
    upper = np.array([_peer_quantile(row, high) for row in rows])
    obs = np.array(targets)
    interval = sr.interval_score(obs, lower, upper, alpha)
    got = scoring.evaluate(
        pred, target, task="regression", options=ScoringOptions(quantile_levels=(low, high))
    )
    assert _close(got.scores["wis"], float(np.mean(alpha / 2 * interval)))
    name = f"cov{round(100 * (high - low))}"
    share = float(np.mean((lower <= obs) & (obs <= upper)))
    assert got.reported[name] == share  # (no target sits within rounding of a bound here)


# ------------------------------------------------------------- readings and moments


def test_gaussian_readings_are_scipys_norm_ppf():
    rng = random.Random(12)
    for _ in range(200):
        m, v = rng.gauss(0, 100), rng.uniform(1e-6, 1e4)
        alpha = rng.choice((rng.uniform(1e-12, 1 - 1e-9), 0.5, 0.025, 0.975))
        base, offset = ref.read_at(("g", m, v), alpha)
        want = scipy.stats.norm.ppf(alpha, loc=m, scale=math.sqrt(v))
        assert _close(float(ref.mpf(base) + offset), want, 1e-12, 1e-12 * math.sqrt(v))


def test_sample_readings_are_numpys_default_quantile():
    rng = random.Random(13)
    for _ in range(300):
        s = [
            float(rng.randint(-5, 5)) * rng.choice((1, 0.1, 1e50))
            for _ in range(rng.randint(1, 20))
        ]
        alpha = rng.uniform(0, 1)
        base, offset = ref.read_at(("s", s), alpha)
        want = float(np.quantile(np.array(s), alpha))
        assert offset == 0 and _close(float(base), want, 1e-14, 1e-14 * max(map(abs, s)))


def _cdf(a, q, y):
    """§2's CDF at y, at 40 digits, written out."""
    ma, mq = [mpmath.mpf(x) for x in a], [mpmath.mpf(x) for x in q]
    b1, bn = ref.tails(a, q)
    if y < mq[0]:
        return ma[0] * mpmath.exp(-(mq[0] - y) / ref.mpf(b1))
    if y >= mq[-1]:
        return 1 - (1 - ma[-1]) * mpmath.exp(-(y - mq[-1]) / ref.mpf(bn))
    k = max(i for i in range(len(mq)) if mq[i] <= y)
    return ma[k] + (y - mq[k]) * (ma[k + 1] - ma[k]) / (mq[k + 1] - mq[k])


def test_quantile_row_readings_invert_section_2_cdf():
    rng = random.Random(14)
    with mpmath.workdps(40):
        for _ in range(100):
            a = sorted({rng.uniform(0.01, 0.99) for _ in range(rng.randint(2, 6))})
            if len(a) < 2:
                continue
            q = [rng.gauss(0, 3)]
            for _ in a[1:]:
                q.append(q[-1] + rng.uniform(0.01, 4))
            for alpha in (rng.uniform(1e-9, 1 - 1e-9), a[0], a[-1], a[0] / 3, (1 + a[-1]) / 2):
                base, offset = ref.read_at(("q", a, q), alpha)
                y = ref.mpf(base) + offset
                assert abs(_cdf(a, q, y) - alpha) < 1e-30, (a, q, alpha)


def test_quantile_mean_and_variance_are_section_2_moments_by_quadrature():
    rng = random.Random(15)
    with mpmath.workdps(40):
        for _ in range(8):
            a = sorted(rng.uniform(0.02, 0.98) for _ in range(rng.randint(2, 5)))
            q = [0.0]
            for _ in a[1:]:
                q.append(q[-1] + rng.uniform(0.1, 2))
            ma, mq = [mpmath.mpf(x) for x in a], [mpmath.mpf(x) for x in q]
            b1, bn = (ref.mpf(x) for x in ref.tails(a, q))

            def pdf(u, ma=ma, mq=mq, b1=b1, bn=bn):
                if u < mq[0]:
                    return ma[0] / b1 * mpmath.exp(-(mq[0] - u) / b1)
                if u >= mq[-1]:
                    return (1 - ma[-1]) / bn * mpmath.exp(-(u - mq[-1]) / bn)
                k = max(k for k in range(len(mq)) if mq[k] <= u)
                return (ma[k + 1] - ma[k]) / (mq[k + 1] - mq[k])

            pieces = [-mpmath.inf, *mq, mpmath.inf]
            mean = mpmath.quad(lambda u, pdf=pdf: u * pdf(u), pieces)
            variance = mpmath.quad(lambda u, pdf=pdf, mean=mean: (u - mean) ** 2 * pdf(u), pieces)
            assert abs(mean - ref.mpf(ref.quantile_mean(a, q))) < 1e-25
            assert abs(variance - ref.mpf(ref.quantile_variance(a, q))) < 1e-25 * variance


def test_sample_mean_and_variance_are_the_population_moments():
    # the standard library's pvariance of the exact values, itself exact
    rng = random.Random(16)
    for _ in range(200):
        s = [
            rng.choice((1.0, 1e-300, 1e90, 0.1)) * rng.randint(-9, 9)
            for _ in range(rng.randint(1, 30))
        ]
        exact = [Fraction(x) for x in s]
        assert ref.row_variance(("s", s)) == statistics.pvariance(exact)
        assert ref.row_mean(("s", s)) == statistics.mean(exact)


# ------------------------------------------------------------ every order of a tie


def _strict(errors: list[Fraction]) -> tuple[Fraction, Fraction]:
    """rauc and aurc of one strict order, no tie rule: E(k) = Σ of the first k errors."""
    accrued, total, n = Fraction(0), [], len(errors)
    for e in errors:
        accrued += e
        total.append(accrued)
    return sum(total) / (n * n), sum(e / k for k, e in enumerate(total, 1)) / n


def _brute_force(errors, keys, ascending: bool) -> tuple[Fraction, Fraction]:
    """The mean of rauc and aurc over every order that sorts the keys (most certain first):
    all permutations inside each run of equal keys, every combination of them."""
    runs = {}
    for i, key in enumerate(keys):
        runs.setdefault(key, []).append(i)
    ordered = [runs[key] for key in sorted(runs, reverse=not ascending)]
    totals, count = [Fraction(0), Fraction(0)], 0
    for choice in itertools.product(*(itertools.permutations(run) for run in ordered)):
        order = [i for run in choice for i in run]
        r, a = _strict([errors[i] for i in order])
        totals[0] += r
        totals[1] += a
        count += 1
    return totals[0] / count, totals[1] / count


def _tied_case(rng: random.Random, task: str):
    n = rng.randint(2, 7)
    if task == "classification":
        p = [rng.choice((0.2, 0.5, 0.8, 0.25, 0.75, 0.0, 1.0)) for _ in range(n)]
        t = [rng.choice((1, -1)) for _ in range(n)]
        pred = "".join(f"{x!r}\n" for x in p)
        return p, t, pred, "".join(f"{y}\n" for y in t), ScoringOptions()
    if task == "multiclass":
        rows = []
        for _ in range(n):
            row = rng.choice(
                ([0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.5, 0.5, 0.0], [0.0, 0.0, 1.0])
            )
            if rng.random() < 0.3:  # an ensemble whose mean is one of the rows above
                row = [0.75, 0.0, 0.25, 0.25, 0.5, 0.25]
            rows.append(row)
        y = [rng.randrange(3) for _ in range(n)]
        pred = "".join(" ".join(map(repr, row)) + "\n" for row in rows)
        return rows, y, pred, "".join(f"{k}\n" for k in y), ScoringOptions(classes=3)
    rows, lines = [], []
    for _ in range(n):
        kind = rng.choice(("v1", "v4", "v0", "s1", "s0", "q"))
        m = float(rng.randint(-3, 3))
        if kind in ("v1", "v4", "v0"):
            rows.append(("g", m, {"v1": 1.0, "v4": 4.0, "v0": 0.0}[kind]))
            lines.append(f"1 {m!r} {rows[-1][2]!r}")
        elif kind == "s1":  # population variance 1, as the v = 1 Gaussians
            rows.append(("s", [m - 1, m + 1]))
            lines.append(f"2 {m - 1!r} {m + 1!r}")
        elif kind == "s0":  # one value: variance 0, as the points
            rows.append(("s", [m] * rng.randint(1, 3)))
            lines.append("2 " + " ".join([repr(m)] * len(rows[-1][1])))
        else:  # §8's variance 8/3 for every shift
            rows.append(("q", [0.25, 0.75], [m - 1.25, m + 0.75]))
            lines.append(f"0 0.25 {m - 1.25!r} 0.75 {m + 0.75!r}")
    t = [float(rng.randint(-4, 4)) for _ in range(n)]
    pred = "\n".join(lines) + "\n"
    return rows, t, pred, "".join(f"{x!r}\n" for x in t), ScoringOptions()


@pytest.mark.parametrize("task", ["classification", "multiclass", "regression"])
def test_the_tie_rule_is_the_mean_over_every_order_of_a_tie(task):
    rng = random.Random(f"ties {task}")
    checked = 0
    for _ in range(60):
        rows, t, pred, target, options = _tied_case(rng, task)
        if task == "classification":
            errors, keys = ref.binary_inputs(rows, [1 if y == 1 else 0 for y in t])
        elif task == "multiclass":
            errors, keys = ref.multiclass_inputs(rows, t, 3)
        else:
            errors, keys = ref.regression_inputs(rows, t)
        ascending = task == "regression"
        want_rauc, want_aurc = _brute_force(errors, keys, ascending)
        accrued = ref.retention(errors, keys, ascending=ascending)
        assert ref.rauc(accrued) == want_rauc and ref.aurc(accrued) == want_aurc
        got = scoring.evaluate(pred.encode(), target.encode(), task=task, options=options)
        if got.non_probabilistic:
            assert got.scores["rauc"] is None
            continue
        checked += 1
        assert _close(got.scores["rauc"], float(want_rauc)), (pred, target, got.scores)
        if task != "regression":
            assert _close(got.scores["aurc"], float(want_aurc)), (pred, target, got.scores)
        # and no order of the lines matters
        order = list(range(len(t)))
        rng.shuffle(order)
        lines_p, lines_t = pred.splitlines(), target.splitlines()
        shuffled = scoring.evaluate(
            "".join(lines_p[i] + "\n" for i in order).encode(),
            "".join(lines_t[i] + "\n" for i in order).encode(),
            task=task,
            options=options,
        )
        assert _close(shuffled.scores["rauc"], float(want_rauc))
    assert checked >= 30


def test_the_fast_exact_variance_is_section_8_printed_sum():
    """reference_selective computes §8's variance as E[Y²] − m² over integer sums; as exact
    numbers it must equal §8's printed sum term by term, for every kind of row."""
    rng = random.Random(17)
    for _ in range(100):
        count = rng.randint(2, 8)
        a = sorted(
            {
                rng.uniform(1e-9, 1 - 1e-9) if rng.random() < 0.8 else 10 ** -rng.uniform(1, 300)
                for _ in range(count)
            }
        )
        q = sorted({rng.gauss(0, 1) * 10 ** rng.uniform(-100, 99) for _ in range(len(a))})
        if len(a) < 2 or len(q) != len(a):
            continue
        assert ref.quantile_variance(a, q) == ref.quantile_variance_as_printed(a, q)
