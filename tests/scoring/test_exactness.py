"""Spec §3 exactness: no NaN, no overflow or cancellation, no warnings, for any valid file.

Valid files reach ±1e100 (variances 1e200) and go down to subnormal widths; each
case is checked against an exact reference (tests/scoring/exact.py) with numpy's
floating-point errors and Python's warnings raised as exceptions (an underflow to
0 is a correct result and stays quiet).
"""

import math
import os
import warnings
from decimal import Decimal, localcontext

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoring import ScoringOptions, evaluate, gaussian_stats, quantile_stats, sample_stats
from scoring.regression import nmse

from . import exact
from .util import lines_of, quantile_row

TINY = 5e-324


@pytest.fixture(autouse=True)
def loud():
    """Any numpy overflow, division by zero or invalid operation fails the test."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(over="raise", divide="raise", invalid="raise", under="ignore"):
            yield


def check_quantile_row(a, q, targets):
    t = np.asarray(targets, dtype=float)
    s = quantile_stats(np.tile(a, (t.size, 1)), np.tile(q, (t.size, 1)), t)
    for i, target in enumerate(t):
        want = exact.quantile(a, q, target)
        for name in ("crps", "logpdf", "pit"):
            got = getattr(s, name)[i]
            assert exact.close(got, want[name]), (name, a, q, target, got, float(want[name]))
    assert not np.isnan(s.mean).any()
    return s


def _around(q):
    """Targets at, just beside and far from the quantile values, within ±1e100."""
    q1, qn = q[0], q[-1]
    return [
        -1e100,
        max(np.nextafter(q1, -np.inf), -1e100),
        q1,
        0.5 * q1 + 0.5 * qn,
        qn,
        min(np.nextafter(qn, np.inf), 1e100),
        1e100,
    ]


# --- quantile rows ---------------------------------------------------------------------------


def test_the_issue_row_a_tiny_first_level_gap_and_a_huge_value_gap():
    # Issue 10: b1 = a1·(q2 − q1)/(a2 − a1) with Δa = 1.4e-17; a target below q1 gave inf·0.
    a, q = [0.1, 0.1000000000000001], [-1e99, 1e100]
    check_quantile_row(a, q, _around(q))


def test_tiny_top_levels_make_an_upper_tail_beyond_the_largest_double():
    # bN = (1 − aN)·Δq/Δa = 2e100/1e-300: the exact CRPS and mean exceed 1.8e308, so +inf
    # is right; a target on or above qN gave inf·0 = nan.
    a, q = [1e-300, 2e-300], [-1e100, 1e100]
    s = check_quantile_row(a, q, _around(q))
    assert np.isposinf(s.crps).all() and np.isposinf(s.mean).all()
    assert np.isfinite(s.logpdf).all()


@pytest.mark.parametrize(
    "a, q",
    [
        ([0.1, 0.9], [-1e100, 1e100]),
        ([0.1, 0.999999, 0.9999995], [0.0, 1.0, 1e100]),  # right of t: (1 − F)² near 0
        ([5e-7, 1e-6, 0.9], [-1e100, -1.0, 1.0]),  # left of t: F² near 0
        ([0.2, 0.8], [0.0, 1e-320]),  # a subnormal bin
        ([TINY, 0.5], [-1.0, 1.0]),  # a subnormal first level: b1 = 2e-323
        ([0.5, 1 - 2**-53], [-1.0, 1.0]),  # the last level a rounding error below 1
        ([0.3, 0.3000000000000001, 0.7], [-1e100, -1e100 + 2e84, 1e100]),
        ([1e-300, 0.5, 0.6], [-1e-300, 0.0, TINY]),
    ],
)
def test_extreme_quantile_rows_against_exact_arithmetic(a, q):
    check_quantile_row(a, q, _around(q) + [q[1], np.nextafter(q[1], -np.inf), 1e-300, -1e-300])


def test_far_tail_targets_below_a_subnormal_scale():
    # r = below/b1 = 1e-300/2e-323 = 5e22 scale lengths into the tail: CDF 0, NLPD huge.
    s = check_quantile_row([TINY, 0.5], [-1.0, 1.0], [-1.0 - 1e-15, -1e100])
    assert (s.pit == 0).all()


# --- sample rows -----------------------------------------------------------------------------


def _ulps_from(x, k):
    """x and the next k − 1 doubles above it."""
    out = [x]
    for _ in range(k - 1):
        out.append(np.nextafter(out[-1], np.inf))
    return out


@pytest.mark.parametrize(
    "sample",
    [
        _ulps_from(1e100, 1000),  # a weighted sum of raw values cancels to garbage
        _ulps_from(-1e100, 7) + [1e100],
        [-1e100, 1e100],
        [TINY, -TINY, 0.0],
        [1e100] * 999 + [-1e100],
    ],
)
def test_sample_crps_against_exact_fractions(sample):
    targets = [-1e100, sample[0], sample[len(sample) // 2], np.nextafter(sample[-1], 0), 1e100, 0.0]
    s = np.tile(sample, (len(targets), 1))
    got = sample_stats(s, np.array(targets, dtype=float))
    for i, t in enumerate(targets):
        assert exact.close(got.crps[i], exact.sample_crps(sample, t)), (i, t, got.crps[i])
    assert np.isfinite(got.mean).all()


# --- Gaussian rows ---------------------------------------------------------------------------


def test_a_subnormal_variance_far_from_its_target():
    # σ = 2.2e-162: CRPS tends to |t − m|; the NLPD (~1e523) exceeds the largest double.
    s = gaussian_stats([0.0, 1e100, -1e100], [TINY] * 3, [1e100, -1e100, -1e100])
    assert s.crps.tolist() == pytest.approx([1e100, 2e100, 0.0], rel=1e-12, abs=1e-150)
    assert s.logpdf[0] == -np.inf and s.logpdf[1] == -np.inf
    assert s.pit.tolist() == [1.0, 0.0, 0.5]


def test_the_widest_gaussian():
    s = gaussian_stats([1e100, -1e100], [1e200, 1e200], [-1e100, 1e100])
    for i in range(2):
        nlpd = exact.gaussian_nlpd([1e100, -1e100][i], 1e200, [-1e100, 1e100][i])
        assert exact.close(-s.logpdf[i], nlpd)
    assert np.isfinite(s.crps).all() and (s.crps > 0).all()


def test_nlpd_of_two_huge_but_finite_terms_does_not_overflow():
    # Each −log p is ½z² = 9.8e307 (z = 1e100/7.1e-55): their sum overflows, their mean not.
    rows = ["1 0 5.1e-109", "1 0 5.1e-109"]
    t = np.array([1e100, -1e100])
    result = evaluate(lines_of(rows), t, task="regression")
    want = exact.gaussian_nlpd(0, 5.1e-109, 1e100)
    assert 1.7e308 < 2 * want < 2e308
    assert exact.close(result.scores["nlpd"], want)


# --- nlpd of a row whose −log p overflows --------------------------------------------------
# A Gaussian of variance v > 0 has a positive density: its term ½log(2πv) + ½(t − m)²/v may
# exceed the largest double while the mean over the rows does not (spec §3: +inf only where
# the exact value does).


def exact_nlpd(rows, targets, base=math.e):
    """The exact mean −log_b p of rows ("g", m, v) or ("q", levels, values), to 80 digits."""
    with localcontext() as ctx:
        ctx.prec = exact.DIGITS
        terms = [
            exact.gaussian_nlpd(row[1], row[2], t)
            if row[0] == "g"
            else -exact.quantile(row[1], row[2], t)["logpdf"]
            for row, t in zip(rows, targets, strict=True)
        ]
        log_base = Decimal(1) if base == math.e else Decimal(base).ln()
        return sum(terms) / len(terms) / log_base


def file_of(rows) -> bytes:
    return lines_of(
        [f"1 {r[1]!r} {r[2]!r}" if r[0] == "g" else quantile_row(r[1], r[2]) for r in rows]
    )


def nlpd_of(rows, targets, base=math.e) -> float:
    options = ScoringOptions(log_base=base)
    result = evaluate(file_of(rows), np.array(targets), task="regression", options=options)
    return result.scores["nlpd"]


@pytest.mark.parametrize("base", [math.e, 2.0, 10.0, 0.5])
def test_a_finite_nlpd_whose_row_term_overflows(base):
    # ½ln(2π·1e-300) + (2e4)²/(2·1e-300) = 2e308 − 344, and ½ln(2π): the mean is 1e308.
    rows, targets = [("g", 0.0, 1e-300), ("g", 0.0, 1.0)], [2e4, 0.0]
    want = exact_nlpd(rows, targets, base)
    assert abs(want) < Decimal(1.7976931348623157e308)
    got = nlpd_of(rows, targets, base)
    assert math.isfinite(got) and exact.close(got, want, rel=1e-12), (got, want)


@pytest.mark.parametrize(
    "target, base, finite",
    [(3e4, math.e, False), (2.4e4, math.e, True), (2.4e4, 2.0, False), (2.4e4, 10.0, True)],
)
def test_nlpd_is_infinite_only_where_the_exact_mean_exceeds_the_largest_double(
    target, base, finite
):
    # Terms 4.5e308 (mean 2.25e308: inf) and 2.88e308 (mean 1.44e308 nats, 2.08e308 bits).
    rows, targets = [("g", 0.0, 1e-300), ("g", 0.0, 1.0)], [target, 0.0]
    want = exact_nlpd(rows, targets, base)
    assert (want < Decimal(1.7976931348623157e308)) == finite
    got = nlpd_of(rows, targets, base)
    assert math.isfinite(got) == finite and exact.close(got, want, rel=1e-12), (got, want)


def test_nlpd_of_a_subnormal_variance_whose_term_overflows():
    # v = 1e-310 (subnormal): 0.2²/(2v) = 2e307·10 = 2e308 overflows; the mean is 1e308.
    rows, targets = [("g", 0.0, 1e-310), ("g", 0.0, 1.0)], [0.2, 0.0]
    want = exact_nlpd(rows, targets)
    assert Decimal(9e307) < want < Decimal(1.1e308)
    assert exact.close(nlpd_of(rows, targets), want, rel=1e-12)


def test_nlpd_of_an_overflowing_row_among_quantile_and_gaussian_rows():
    rows = [
        ("g", 0.0, 1e-300),
        ("q", [0.25, 0.75], [-1.0, 1.0]),
        ("q", [0.1, 0.9], [-1.0, 1.0]),  # a target far in the lower tail: large, finite
        ("g", 1.0, 1e-300),  # another overflowing row
        ("g", 3.0, 2.0),
        ("g", 5e-324, 5e-324),  # a density above 1: a negative term
    ]
    targets = [2e4, 0.5, -1e100, -2.5e4, 1.0, 0.0]
    largest = Decimal(1.7976931348623157e308)
    assert exact_nlpd(rows[3:4], targets[3:4]) > largest  # (and the first row's, 2e308)
    assert Decimal(8e307) < exact_nlpd(rows, targets) < Decimal(9e307)
    for base in (math.e, 2.0):
        assert exact.close(nlpd_of(rows, targets, base), exact_nlpd(rows, targets, base))


def test_nlpd_of_an_overflowing_row_is_infinite_beside_a_zero_variance_or_a_huge_term():
    rows = [("g", 0.0, 1e-300), ("g", 0.0, 0.0)]
    assert nlpd_of(rows, [2e4, 1.0]) == math.inf  # zero density at a target
    rows = [("g", 0.0, 5e-324), ("g", 0.0, 1.0)]
    assert exact_nlpd(rows, [1e100, 0.0]) > Decimal("1e520")
    assert nlpd_of(rows, [1e100, 0.0]) == math.inf
    # The per-example term itself is beyond the largest double: +inf.
    result = evaluate(file_of(rows[:1] * 2), np.array([1e100, 0.0]), task="regression")
    assert result.terms()["nlpd"][0] == math.inf


# --- nmse ------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [0.1, 0.3, 7.7, 1e100 / 3])
def test_equal_targets_have_no_variance(value):
    # numpy's mean of n copies of 0.1 is not 0.1: var came out 1.9e-34 and nmse 1e33.
    for n in (3, 7, 1000):
        assert nmse(np.zeros(n), np.full(n, value)) is None


def test_nmse_at_the_extremes():
    t = np.array([1e100, -1e100, 0.0])
    assert exact.close(nmse(np.zeros(3), t), 1)  # predicting the mean: exactly 1
    tiny = np.array([TINY, 0.0, 0.0])
    # var = 2/9 · TINY² underflows, the ratio does not: Σ(t − m)²/(n·var) = (1/3)/(2/9).
    assert exact.close(nmse(np.zeros(3), tiny), 1.5)


# --- whole files: never nan, never a warning -------------------------------------------------

EXTREMES = [0.0, TINY, -TINY, 1e-300, 1.0, -1.0, 1e99, -1e99, 1e100, -1e100, 0.1, 2e-308]
LEVELS = [TINY, 1e-300, 2e-300, 0.1, 0.1000000000000001, 0.5, 0.9, 1 - 2**-52, 1 - 2**-53]
VARIANCES = [0.0, TINY, 1e-300, 1e-108, 1.0, 1e200]

extreme = st.sampled_from(EXTREMES) | st.floats(-1e100, 1e100)


@st.composite
def rows(draw):
    kind = draw(st.sampled_from(["gaussian", "quantiles", "sample"]))
    if kind == "gaussian":
        var = draw(st.sampled_from(VARIANCES) | st.floats(0, 1e200))
        return f"1 {draw(extreme)!r} {var!r}"
    if kind == "sample":
        values = draw(st.lists(extreme, min_size=1, max_size=12))
        return "2 " + " ".join(repr(v) for v in values)
    levels = sorted(set(draw(st.lists(st.sampled_from(LEVELS) | st.floats(0, 1), min_size=2))))
    levels = [x for x in levels if 0 < x < 1][:200]
    values = sorted(set(draw(st.lists(extreme, min_size=len(levels), max_size=len(levels)))))
    n = min(len(levels), len(values))
    if n < 2:
        return f"1 0 {draw(st.sampled_from(VARIANCES))!r}"
    return quantile_row(levels[:n], values[:n])


@settings(
    max_examples=int(os.environ.get("SCORING_HYPOTHESIS_EXAMPLES", "300")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(file=st.lists(rows(), min_size=1, max_size=8), data=st.data())
def test_extreme_valid_files_never_give_nan_or_warnings(file, data):
    targets = np.array(data.draw(st.lists(extreme, min_size=len(file), max_size=len(file))))
    result = evaluate(lines_of(file), targets, task="regression")
    for name, value in result.scores.items():
        assert value is None or not math.isnan(value), name
        assert value is None or value >= 0 or name == "nlpd", name
    stats = result.context.rows.stats
    assert not np.isnan(stats.crps).any() and (stats.crps >= 0).all()
    assert not np.isnan(stats.mean).any()
    assert ((stats.pit >= 0) & (stats.pit <= 1)).all()


@st.composite
def quantile_rows(draw):
    """Levels and values of a valid row, 2 to 6 pairs, from the extremes and anywhere."""
    n = draw(st.integers(2, 6))
    levels = draw(
        st.lists(
            st.sampled_from(LEVELS) | st.floats(0, 1, exclude_min=True, exclude_max=True),
            min_size=n,
            max_size=n,
            unique=True,
        )
    )
    values = draw(st.lists(extreme, min_size=n, max_size=n, unique=True))
    return sorted(levels), sorted(values)


@settings(
    max_examples=int(os.environ.get("SCORING_HYPOTHESIS_EXAMPLES", "300")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(row=quantile_rows(), target=extreme)
def test_extreme_quantile_rows_are_exact(row, target):
    a, q = row
    check_quantile_row(a, q, [target, q[0], q[-1]])


@settings(
    max_examples=int(os.environ.get("SCORING_HYPOTHESIS_EXAMPLES", "300")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(sample=st.lists(extreme, min_size=1, max_size=30), target=extreme)
def test_extreme_sample_rows_are_exact(sample, target):
    got = sample_stats(np.array([sample]), np.array([target])).crps[0]
    assert exact.close(got, exact.sample_crps(sample, target))
