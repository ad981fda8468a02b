"""scoring.classification: nlp, 01l, brier, ece and lift (spec §3), by hand and against peers."""

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from sklearn.metrics import brier_score_loss, log_loss

from scoring.classification import ECE_BINS, brier, ece, is_point, lift, nlp, zero_one

from .util import arr

P = arr(0.9, 0.2, 0.5, 0.0)
T = arr(1, -1, -1, -1)


def test_nlp_by_hand_in_nats_bits_and_base_10():
    nats = -(math.log(0.9) + math.log(0.8) + math.log(0.5) + math.log(1.0)) / 4
    assert nlp(P, T) == pytest.approx(nats, rel=1e-15)
    assert nlp(P, T, base=10) == pytest.approx(nats / math.log(10), rel=1e-15)
    assert nlp(P, T, base=2) == pytest.approx(nats / math.log(2), rel=1e-15)
    # The uninformative p = 0.5 costs exactly one bit, log10(2) in base 10.
    half = np.full(6, 0.5)
    t = arr(1, -1, 1, 1, -1, -1)
    assert nlp(half, t, base=2) == 1.0
    assert nlp(half, t, base=10) == pytest.approx(math.log10(2), rel=1e-15)
    assert nlp(half, t) == pytest.approx(math.log(2), rel=1e-15)


def test_nlp_is_infinite_when_a_true_class_gets_probability_zero():
    assert nlp(arr(0.0, 0.5), arr(1, 1)) == math.inf
    assert nlp(arr(1.0, 0.5), arr(-1, 1)) == math.inf
    # Probability 0 on the wrong class costs nothing.
    assert nlp(arr(0.0, 1.0), arr(-1, 1)) == 0.0
    assert nlp(arr(1e-300), arr(1)) == pytest.approx(300 * math.log(10), rel=1e-12)


def test_zero_one_thresholds_at_one_half_counting_one_half_as_plus_one():
    assert zero_one(P, T) == 0.25  # only p = 0.5 on a -1 is wrong
    assert zero_one(arr(0.5, 0.5), arr(1, -1)) == 0.5
    assert zero_one(arr(0.5), arr(1)) == 0.0
    assert zero_one(arr(0.5), arr(-1)) == 1.0
    assert zero_one(arr(np.nextafter(0.5, 0)), arr(1)) == 1.0
    assert zero_one(arr(0.0, 1.0, 0.7, 0.3), arr(-1, 1, -1, 1)) == 0.5


def test_brier_by_hand():
    assert brier(P, T) == pytest.approx((0.01 + 0.04 + 0.25 + 0.0) / 4, rel=1e-15)
    assert brier(arr(1.0, 0.0), arr(-1, 1)) == 1.0
    assert brier(arr(1.0, 0.0), arr(1, -1)) == 0.0


def test_ece_by_hand():
    # Confidences 0.9, 0.8, 0.5, 1.0 fall in four different bins; correct: yes, yes, no, yes.
    assert ece(P, T) == pytest.approx((0.1 + 0.2 + 0.5 + 0.0) / 4, rel=1e-14)
    # One bin: accuracy 2/3 against mean confidence 0.7.
    assert ece(arr(0.7, 0.3, 0.7), arr(1, -1, -1)) == pytest.approx(abs(2 / 3 - 0.7), rel=1e-14)


def test_ece_bins_are_open_on_the_left_and_closed_on_the_right():
    # 0.6 = 9/15 is the top of bin (8/15, 9/15]; a hair above it starts the next bin.
    p = arr(0.6, 0.4, np.nextafter(0.6, 1))
    t = arr(1, 1, 1)  # correct, wrong (p < 0.5 says -1), correct
    split = (abs(1 - 1.2) + abs(1 - p[2])) / 3
    joined = abs(2 - (1.2 + p[2])) / 3
    assert ece(p, t) == pytest.approx(split, rel=1e-14)
    assert abs(split - joined) > 0.1
    # Likewise at 14/15 and at 1 (the last bin is (14/15, 1]).
    q = arr(14 / 15, np.nextafter(14 / 15, 1), 1.0)
    split = (14 / 15 + abs(2 - q[1] - 1.0)) / 3  # the first is wrong, alone in its bin
    joined = abs(2 - 14 / 15 - q[1] - 1.0) / 3
    assert ece(q, arr(-1, 1, 1)) == pytest.approx(split, rel=1e-13)
    assert abs(split - joined) > 0.01
    # Confidence 0.5 (p = 0.5) sits in (7/15, 8/15] and counts as correct on a +1.
    assert ece(arr(0.5), arr(1)) == 0.5
    assert ece(arr(0.5), arr(-1)) == 0.5


def test_ece_against_a_direct_loop():
    rng = np.random.default_rng(40)
    p = np.round(rng.uniform(0, 1, 3000), 2)  # many values exactly on bin edges
    t = np.where(rng.uniform(size=3000) < p, 1.0, -1.0)
    total = 0.0
    conf = np.maximum(p, 1 - p)
    correct = (p >= 0.5) == (t == 1)
    for m in range(15):
        inside = (conf > m / 15) & (conf <= (m + 1) / 15)
        if inside.any():
            total += inside.sum() / p.size * abs(correct[inside].mean() - conf[inside].mean())
    assert ece(p, t) == pytest.approx(total, rel=1e-12)


# --- LIFT -----------------------------------------------------------------------------------


def lift_from_order(order_targets, n_pos):
    """Eqs. (13)-(16) for one fixed ordering of the targets (best first)."""
    n = len(order_targets)
    frac = n_pos / n
    cum = np.cumsum(np.asarray(order_targets) == 1)
    area = np.mean((1 / frac) * cum / np.arange(1, n + 1))
    ideal = 1 + 0.5 * (1 / frac - 1) * (frac + 1)
    return (ideal - area) / (ideal - 1)


def lift_brute_force(p, t):
    """Average over every ordering that sorts p decreasingly (ties in every order).

    The loss is linear in the positives counted so far, so averaging the loss over
    the tie orders is the same as letting the positives of a tie accrue evenly.
    """
    n_pos = int(np.sum(np.asarray(t) == 1))
    values = []
    for perm in itertools.permutations(range(len(p))):
        ps = [p[i] for i in perm]
        if all(ps[i] >= ps[i + 1] for i in range(len(ps) - 1)):
            values.append(lift_from_order([t[i] for i in perm], n_pos))
    return float(np.mean(values))


def test_lift_of_a_perfect_ranking_by_hand():
    # n = 4, two positives ranked first: l = 2, 2, 4/3, 1; A = 19/12; A_I = 1 + ½·1·1.5 = 7/4.
    assert lift(arr(0.9, 0.8, 0.3, 0.1), arr(1, 1, -1, -1)) == pytest.approx(2 / 9, rel=1e-14)
    # P above: ranking +, -, -, -; n̄₊ = 1/4, l = 4, 2, 4/3, 1; A = 25/12; A_I = 23/8.
    assert lift(P, T) == pytest.approx((23 / 8 - 25 / 12) / (23 / 8 - 1), rel=1e-14)


def test_lift_of_the_worst_ranking_by_hand():
    # Positives last: l = 0, 0, 2/3, 1; A = 5/12; A_I = 7/4: L = (7/4 - 5/12)/(3/4) = 16/9.
    assert lift(arr(0.9, 0.8, 0.3, 0.1), arr(-1, -1, 1, 1)) == pytest.approx(16 / 9, rel=1e-14)


def test_lift_of_constant_predictions_is_exactly_one():
    # All tied: positives accrue evenly, l(k/n) = 1 for every k, A = 1: a random predictor.
    for t in (arr(1, -1, -1), arr(1, 1, -1, -1, -1, 1, -1), arr(-1, -1, -1, -1, 1)):
        assert lift(np.full(t.size, 0.3), t) == pytest.approx(1.0, rel=1e-14)


def test_lift_ties_broken_in_expectation_by_hand():
    # p = 0.8, 0.5, 0.5 with targets -, +, -: the tie holds one positive in two places:
    # counts 0, ½, 1 (in expectation); n̄₊ = 1/3: l = 0, 3/4, 1; A = 7/12; A_I = 1 + ½·2·4/3 = 7/3.
    got = lift(arr(0.8, 0.5, 0.5), arr(-1, 1, -1))
    assert got == pytest.approx((7 / 3 - 7 / 12) / (7 / 3 - 1), rel=1e-14)
    # Neither the order of the input nor which tied example is positive matters.
    assert lift(arr(0.5, 0.5, 0.8), arr(-1, 1, -1)) == pytest.approx(got, rel=1e-14)
    assert lift(arr(0.5, 0.8, 0.5), arr(1, -1, -1)) == pytest.approx(got, rel=1e-14)


@pytest.mark.parametrize("seed", range(6))
def test_lift_against_brute_force_over_tie_orders(seed):
    rng = np.random.default_rng(50 + seed)
    n = int(rng.integers(2, 8))
    p = rng.choice([0.1, 0.3, 0.5, 0.7, 0.9], n)  # plenty of ties
    t = rng.choice([-1.0, 1.0], n)
    t[0], t[1] = 1.0, -1.0  # both classes
    assert lift(p, t) == pytest.approx(lift_brute_force(list(p), list(t)), rel=1e-12)


def test_lift_without_ties_matches_the_plain_formula_on_large_data():
    rng = np.random.default_rng(60)
    p = rng.permutation(np.linspace(0.001, 0.999, 5000))
    t = np.where(rng.uniform(size=p.size) < p, 1.0, -1.0)
    order = np.argsort(-p)
    assert lift(p, t) == pytest.approx(lift_from_order(t[order], int((t == 1).sum())), rel=1e-11)


def test_lift_is_not_available_for_one_class():
    assert lift(arr(0.2, 0.9, 0.4), arr(1, 1, 1)) is None
    assert lift(arr(0.2, 0.9, 0.4), arr(-1, -1, -1)) is None
    assert lift(arr(0.2), arr(1)) is None


# --- peers and input checks -----------------------------------------------------------------


def test_agreement_with_scikit_learn():
    rng = np.random.default_rng(70)
    for n in (1, 10, 1000, 20000):
        p = rng.uniform(0.001, 0.999, n)
        t = rng.choice([-1.0, 1.0], n)
        o = (t == 1).astype(int)
        assert nlp(p, t) == pytest.approx(log_loss(o, p, labels=[0, 1]), rel=1e-12)
        assert brier(p, t) == pytest.approx(brier_score_loss(o, p, pos_label=1), rel=1e-12)


@pytest.mark.parametrize(
    "p, t",
    [
        (arr(0.5, 0.5), arr(1)),  # lengths differ
        (arr(0.5), arr(0)),  # not ±1
        (arr(1.5), arr(1)),  # not a probability
        (arr(-0.1), arr(1)),
        (np.full((2, 2), 0.5), np.ones((2, 2))),  # not 1-D
    ],
)
def test_functions_check_their_inputs(p, t):
    for f in (nlp, zero_one, brier, ece, lift):
        with pytest.raises(ValueError):
            f(p, t)


def test_is_point():
    assert is_point(arr(0, 1, 1, 0))
    assert is_point(arr(1.0))
    assert not is_point(arr(0, 1, 0.5))
    assert not is_point(arr(1e-12, 1))


@pytest.mark.parametrize("m", range(8, 15))
def test_ece_bins_the_exact_confidence_next_to_every_edge(m):
    """c = 1 − p is compared as the real number: rounded, it could sit on the edge below it."""
    edges = [Fraction(k / 15) for k in range(16)]  # the doubles k/15, exactly

    def bin_of(c: Fraction) -> int:
        return next(k for k in range(15) if edges[k] < c <= edges[k + 1])

    e = m / 15
    p = 1.0 - e
    for _ in range(4):
        p = np.nextafter(p, 0.0)  # 1 − p creeps above the edge e
    for step in range(8):
        p1 = float(np.nextafter(p, 1.0)) if step else p
        p = p1
        c1 = 1 - Fraction(p1)
        same = bin_of(c1) == bin_of(Fraction(e))
        # example 1: p1 < 0.5 on a +1 target (wrong); example 2: p = e on +1 (right)
        if same:
            want = abs(Fraction(1, 2) - (c1 + Fraction(e)) / 2)
        else:
            want = (c1 + abs(1 - Fraction(e))) / 2
        got = ece(np.array([p1, e]), np.array([1.0, 1.0]))
        assert abs(got - float(want)) <= 1e-15, (m, p1, got, float(want))


def _summary_cases():
    rng = np.random.default_rng(2026)
    for n in (1, 7, 1023, 1024, 1025, 5000):
        p = rng.uniform(0, 1, n)
        yield p, np.where(rng.uniform(size=n) < p, 1.0, -1.0)
    edges = np.arange(16) / 15
    near = np.concatenate([np.nextafter(1 - edges, k) for k in (0.0, 1.0)] + [edges, 1 - edges])
    near = near[(near >= 0) & (near <= 1)]
    yield near, np.where(np.arange(near.size) % 3 == 0, 1.0, -1.0)
    yield np.array([0.0, 1.0, 0.5, 0.5]), np.array([-1.0, 1.0, 1.0, -1.0])  # point and ties
    yield np.array([0.0, 0.3]), np.array([1.0, -1.0])  # a true class got 0: nlp inf


@pytest.mark.parametrize("case", range(9))
def test_one_pass_summary_agrees_with_every_loss_function(case):
    """The C kernel behind the scores against the plain numpy losses, to rounding."""
    from scoring.classification import summarize, summarize_numpy

    p, t = list(_summary_cases())[case]
    got, numpy_sums = summarize(p, t), summarize_numpy(p, t)
    assert got.n_pos == numpy_sums.n_pos == int((t == 1).sum())
    assert got.errors == numpy_sums.errors
    assert got.point == numpy_sums.point == is_point(p)
    for base in (2, math.e, 10):
        want = nlp(p, t, base=base)
        assert got.nlp(base) == pytest.approx(want, rel=1e-12) or got.nlp(base) == want == math.inf
    assert got.zero_one() == zero_one(p, t)
    assert got.brier_score() == pytest.approx(brier(p, t), rel=1e-12, abs=1e-15)
    assert got.ece() == pytest.approx(ece(p, t), rel=1e-9, abs=1e-14)
    # the keys the one pass wrote give lift as lift(p, t) does
    from scoring.classification import lift_of

    want_lift = lift(p, t)
    assert lift_of(got, p, t) == pytest.approx(want_lift, rel=1e-12) or want_lift is None
    assert lift_of(numpy_sums, p, t) == want_lift


@pytest.mark.parametrize("n_bins", [1, 2, 10, 16, 100])
def test_both_paths_of_the_summary_honour_the_count_of_ece_bins(n_bins, no_native):
    """The C kernel takes the count of bins from its caller, as numpy does: its ECE at
    another count than ECE_BINS agrees with the numpy loss and with an exact loop over
    the bins (m/B, (m+1)/B] (the doubles m/B; the confidence 1 − p as the real number),
    values on and next to the edges included."""
    from scoring.classification import summarize

    rng = np.random.default_rng(n_bins)
    edges = np.arange(n_bins + 1) / n_bins
    p = np.concatenate(
        [np.round(rng.uniform(0, 1, 2000), 2), edges, 1 - edges, np.nextafter(edges, 1)]
    )
    p = p[(p >= 0) & (p <= 1)]
    t = np.where(rng.uniform(size=p.size) < p, 1.0, -1.0)
    exact_edges = [Fraction(edge) for edge in edges.tolist()]
    count, right, conf = [0] * n_bins, [0] * n_bins, [Fraction(0)] * n_bins
    for x, y in zip(p.tolist(), t.tolist(), strict=True):
        c = Fraction(x) if x >= 0.5 else 1 - Fraction(x)
        m = next(m for m in range(n_bins) if exact_edges[m] < c <= exact_edges[m + 1])
        count[m] += 1
        right[m] += (x >= 0.5) == (y == 1)
        conf[m] += c
    total = float(sum(abs(right[m] - conf[m]) for m in range(n_bins)) / p.size)
    compiled = summarize(p, t, n_bins=n_bins)
    with no_native():
        numpy_path = summarize(p, t, n_bins=n_bins)
    assert compiled.keys is not None and numpy_path.keys is None  # each path taken
    assert compiled.ece() == pytest.approx(total, rel=1e-12, abs=1e-15)
    assert numpy_path.ece() == pytest.approx(total, rel=1e-12, abs=1e-15)
    assert ece(p, t, n_bins=n_bins) == pytest.approx(total, rel=1e-12, abs=1e-15)
    if n_bins != ECE_BINS:
        assert compiled.ece() != pytest.approx(summarize(p, t).ece(), rel=1e-6)


def test_summary_of_bad_input_raises_like_the_losses():
    from scoring.classification import summarize

    with pytest.raises(ValueError, match="targets must be"):
        summarize(np.array([0.5]), np.array([0.0]))
    with pytest.raises(ValueError, match="probabilities"):
        summarize(np.array([1.5]), np.array([1.0]))
    with pytest.raises(ValueError, match="probabilities"):
        summarize(np.array([np.nan]), np.array([1.0]))


@pytest.mark.parametrize("ties", ["none", "rounded", "long runs", "one value"])
def test_lift_c_pass_and_numpy_parts_agree_with_a_plain_sum(no_native, ties):
    """Both ways of summing cum(k)/k (runs across the numpy parts' boundaries too)
    against the plain definition: positives accrue evenly inside a run of equal p."""

    from scoring import classification as c

    rng = np.random.default_rng(7)
    n = 3 * c._LIFT_CHUNK + 17
    p = rng.uniform(0, 1, n)
    if ties == "rounded":
        p = np.round(p, 3)
    elif ties == "long runs":
        p = np.where(p < 0.6, 0.25, np.round(p, 1))
    elif ties == "one value":
        p[:] = 0.5
    t = np.where(rng.uniform(size=n) < p, 1.0, -1.0)
    t[:2] = [1.0, -1.0]  # both classes
    order = np.argsort(-p, kind="stable")
    ps, os_ = p[order], (t[order] == 1)
    # cum(k) at every position from the runs, then Σ cum(k)/k: terms of one or two
    # roundings each, all positive, summed exactly by math.fsum.
    starts = np.flatnonzero(np.r_[True, ps[1:] != ps[:-1]])
    lengths = np.diff(np.r_[starts, n])
    pos = np.add.reduceat(os_.astype(np.int64), starts)
    before = np.cumsum(pos) - pos
    run = np.repeat(np.arange(starts.size), lengths)
    k = np.arange(1, n + 1, dtype=np.float64)
    cum = before[run] + pos[run] * (k - starts[run]) / lengths[run]
    total = math.fsum((cum / k).tolist())
    n_pos = int((t == 1).sum())
    frac = n_pos / n
    area = total / n / frac
    ideal = 1 + 0.5 * (1 / frac - 1) * (frac + 1)
    want = (ideal - area) / (ideal - 1)
    assert lift(p, t) == pytest.approx(want, rel=1e-12)
    with no_native():
        assert lift(p, t) == pytest.approx(want, rel=1e-12)


def test_each_log_of_the_one_pass_is_within_an_ulp_of_the_exact_value():
    """The kernel's own vectorized logarithm (fdlibm's) against -ln p in exact arithmetic,
    at the values where a logarithm goes wrong first: next to 1, next to sqrt(2)/2 (where
    the mantissa is halved), at powers of two, near the smallest normal double and
    below it (the C library's log takes over there)."""
    import mpmath

    from scoring import _native

    rng = np.random.default_rng(11)
    values = np.concatenate(
        [
            rng.uniform(0, 1, 400),
            np.exp(rng.uniform(-700, 0, 400)),
            1 - rng.uniform(0, 1e-12, 100),
            np.nextafter(1.0, 0.0) - np.arange(40) * 2.0**-53,
            [float(np.nextafter(math.sqrt(0.5), d)) for d in (0.0, 1.0)],
            [math.sqrt(0.5), 0.5, 0.25, 2.0**-1021, 2.0**-1022, 2.0**-1030, 5e-324, 1.0],
        ]
    )
    values = values[(values > 0) & (values <= 1)]
    one, keys = np.ones(1), np.empty(1, dtype=np.uint64)
    mpmath.mp.prec = 200
    for p in values.tolist():
        got = _native.classification_sums(np.array([p]), one, keys, ECE_BINS)[1]
        exact = -mpmath.log(mpmath.mpf(p))
        if exact == 0:
            assert got == 0.0
            continue
        assert abs(mpmath.mpf(got) - exact) <= math.ulp(float(exact)), p
