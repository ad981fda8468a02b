"""An exact reference for shared/spec/scoring.md §8 (selective prediction and quantile scores).

It is the judge of tests/scoring/test_differential_selective.py and
tests/scoring/test_peers_selective.py, written from the spec alone: it imports nothing
from the ``scoring`` package and shares no code with it nor with the other references.
It does not read files: the differential test builds each file from known doubles and
hands the same doubles here. Written for trust, not speed:

- every double is taken exactly (``Fraction(x)``); everything rational is exact: §2's
  quantile-distribution mean, §8's variance of every row type (the retention keys),
  the errors (t − m)², the retention sums E(k) with the tie rule, rauc and aurc, a row
  read at a level inside [q1, qN] or from a sample, the quantile scores there, coverage;
- what is irrational (a Gaussian's m + σΦ⁻¹(α), a quantile row's exponential tails
  q1 + b1·ln(α/a1) and qN + bN·ln((1 − aN)/(1 − α))) is kept as an exact rational base plus
  an mpmath offset at ``DPS`` digits, so that q − t never loses digits to cancellation
  (the base minus the target is exact) and 1{t < q} is decided at 40 digits;
- each result is rounded once to the nearest double (+inf past the largest double).

The retention keys are exact numbers, so a tie is exact equality: binary c = max(p, 1 − p)
with 1 − p unrounded (as the binary ``ece`` bins it), multiclass c the exact normalised and
member-averaged top probability (§7), regression the exact variance of §8. ``File`` holds one
file's per-row contributions and scores all its rows or any slice of them.

Rows are tuples: ``("g", m, v)`` a Gaussian (v = 0 a point prediction), ``("q", a, q)`` a
quantile row (lists of levels and values), ``("s", s)`` a sample.
"""

from __future__ import annotations

import bisect
import functools
import math
import statistics
from fractions import Fraction

import mpmath

DPS = 40
_MP = mpmath.MPContext()
_MP.dps = DPS
COVERAGE_TOLERANCE = Fraction(1, 10**9)  # §8: two levels "whose sum is 1 within 1e-9"


# ------------------------------------------------------------------------ conversions


def mpf(x) -> mpmath.mpf:
    """A double or Fraction as an mpf at DPS digits (a double is exact)."""
    if isinstance(x, Fraction):
        return _MP.mpf(x.numerator) / _MP.mpf(x.denominator)
    return _MP.mpf(x)


def to_float(x) -> float:
    """Round an exact value once to the nearest double; +inf/−inf past the largest one."""
    if x is None:
        return None
    if isinstance(x, Fraction):
        try:
            return float(x)  # Fraction.__float__ is correctly rounded (int / int)
        except OverflowError:
            return float("inf") if x > 0 else float("-inf")
    value = float(x)
    if abs(x) > mpf(1.7976931348623157e308) and abs(value) != float("inf"):
        return float("inf") if x > 0 else float("-inf")
    return value


# -------------------------------------------------------------- §2, §3, §8: row moments


def tails(a, q) -> tuple[Fraction, Fraction]:
    """b1 = a1/z1 and bN = (1 − aN)/zN of §2, z1 = (a2 − a1)/(q2 − q1), zN likewise."""
    return _moments(tuple(a), tuple(q))[:2]


def quantile_mean(a, q) -> Fraction:
    """§2: Σk (qk + qk+1)/2·(ak+1 − ak) + a1·(q1 − b1) + (1 − aN)·(qN + bN)."""
    return _moments(tuple(a), tuple(q))[2]


def quantile_variance(a, q) -> Fraction:
    """§8's variance of §2's distribution (by the fast exact form of ``_moments``; equal, as
    exact numbers, to §8's printed sum: tests/scoring/test_peers_selective.py)."""
    return _moments(tuple(a), tuple(q))[3]


def quantile_variance_as_printed(a, q) -> Fraction:
    """§8, term by term: Σ over the uniform pieces of (a_(k+1) − a_k)·((q_k − m)² +
    (q_k − m)(q_(k+1) − m) + (q_(k+1) − m)²)/3 plus a1·((q1 − b1 − m)² + b1²) plus
    (1 − aN)·((qN + bN − m)² + bN²)."""
    fa, fq = [Fraction(x) for x in a], [Fraction(x) for x in q]
    b1, bn = tails(a, q)
    m = quantile_mean(a, q)
    total = Fraction(0)
    for k in range(len(fa) - 1):
        lo, hi = fq[k] - m, fq[k + 1] - m
        total += (fa[k + 1] - fa[k]) * (lo * lo + lo * hi + hi * hi) / 3
    total += fa[0] * ((fq[0] - b1 - m) ** 2 + b1 * b1)
    total += (1 - fa[-1]) * ((fq[-1] + bn - m) ** 2 + bn * bn)
    return total


# Every double is an integer times 2^−1074 (subnormals included): sums and products of
# doubles scaled by 2^SHIFT are exact Python integers, much faster than Fractions.
SHIFT = 1074
ONE = 1 << SHIFT


def _int(x: float) -> int:
    """x·2^SHIFT, exactly (the denominator of a double is a power of two ≤ 2^1074)."""
    num, den = x.as_integer_ratio()
    return num * (ONE // den)


@functools.lru_cache(maxsize=20000)
def _moments(a: tuple, q: tuple) -> tuple[Fraction, Fraction, Fraction, Fraction]:
    """(b1, bN, mean, variance) of §2's distribution, exactly: the uniform pieces' first and
    second moments as integer sums (Σ Δa·(q_k + q_k+1)/2 and Σ Δa·(q_k² + q_k·q_k+1 +
    q_k+1²)/3), the exponential tails' (an exponential of mean b below q1 has moments q1 − b1
    and (q1 − b1)² + b1²), variance = E[Y²] − m²."""
    A, Q = [_int(x) for x in a], [_int(x) for x in q]
    first = second = 0
    for k in range(len(A) - 1):
        da = A[k + 1] - A[k]
        first += da * (Q[k] + Q[k + 1])
        second += da * (Q[k] * Q[k] + Q[k] * Q[k + 1] + Q[k + 1] * Q[k + 1])
    a1, an = Fraction(A[0], ONE), Fraction(A[-1], ONE)
    q1, qn = Fraction(Q[0], ONE), Fraction(Q[-1], ONE)
    b1 = Fraction(A[0] * (Q[1] - Q[0]), (A[1] - A[0]) * ONE)
    bn = Fraction((ONE - A[-1]) * (Q[-1] - Q[-2]), (A[-1] - A[-2]) * ONE)
    mean = Fraction(first, 2 * ONE * ONE) + a1 * (q1 - b1) + (1 - an) * (qn + bn)
    square = (
        Fraction(second, 3 * ONE * ONE * ONE)
        + a1 * ((q1 - b1) ** 2 + b1 * b1)
        + (1 - an) * ((qn + bn) ** 2 + bn * bn)
    )
    return b1, bn, mean, square - mean * mean


@functools.lru_cache(maxsize=20000)
def _sample_moments(s: tuple) -> tuple[Fraction, Fraction]:
    """(mean, population variance) of a sample, exactly: (KΣx² − (Σx)²)/K²."""
    X = [_int(x) for x in s]
    total, k = sum(X), len(X)
    return Fraction(total, k * ONE), Fraction(
        k * sum(x * x for x in X) - total * total, k * k * ONE * ONE
    )


def row_mean(row) -> Fraction:
    """§3's m_i: the Gaussian's m, §2's mean, the sample's mean, all exact."""
    if row[0] == "g":
        return Fraction(row[1])
    if row[0] == "q":
        return quantile_mean(row[1], row[2])
    return _sample_moments(tuple(row[1]))[0]


def row_variance(row) -> Fraction:
    """§8's retention key in regression: v; the population variance; §8's formula."""
    if row[0] == "g":
        return Fraction(row[2])
    if row[0] == "q":
        return quantile_variance(row[1], row[2])
    return _sample_moments(tuple(row[1]))[1]


# ----------------------------------------------------------------------- §8 retention


def retention(errors, keys, *, ascending: bool) -> list[Fraction]:
    """E(1) … E(n): errors accrued by the first k examples, most certain first (keys
    increasing when ``ascending``, else decreasing); inside a run of equal keys the run's
    errors accrue evenly, j/r of the run's total after j of its r examples."""
    order = sorted(range(len(keys)), key=lambda i: keys[i], reverse=not ascending)
    accrued, out, start = Fraction(0), [], 0
    while start < len(order):
        stop = start
        while stop < len(order) and keys[order[stop]] == keys[order[start]]:
            stop += 1
        run = stop - start
        total = sum((Fraction(errors[i]) for i in order[start:stop]), Fraction(0))
        out += [accrued + total * j / run for j in range(1, run + 1)]
        accrued += total
        start = stop
    return out


def rauc(accrued: list[Fraction]) -> Fraction:
    """(1/n) Σ_{k=1..n} E(k)/n (Malinin et al. 2021)."""
    n = len(accrued)
    return sum(accrued, Fraction(0)) / (n * n)


def aurc(accrued: list[Fraction]) -> Fraction:
    """(1/n) Σ_{k=1..n} E(k)/k (Geifman et al. 2019)."""
    n = len(accrued)
    return sum((e / k for k, e in enumerate(accrued, 1)), Fraction(0)) / n


def binary_inputs(p, o) -> tuple[list[Fraction], list[Fraction]]:
    """Binary errors 1 − a_i and keys c_i = max(p, 1 − p), exact (1 − p unrounded)."""
    errors, keys = [], []
    for pi, oi in zip(p, o, strict=True):
        fp = Fraction(pi)
        correct = (pi >= 0.5 and oi == 1) or (pi < 0.5 and oi == 0)
        errors.append(Fraction(0 if correct else 1))
        keys.append(max(fp, 1 - fp))
    return errors, keys


def normalised(row: list[float], classes: int) -> list[Fraction]:
    """§7: each member divided by its own sum, the members averaged, exactly."""
    numerators, denominator = _normalised(tuple(row), classes)
    return [Fraction(x, denominator) for x in numerators]


def _normalised(row: tuple, classes: int) -> tuple[list[int], int]:
    """p_k = numerators[k] / denominator exactly: member m's values X_mk/S_m (integers
    scaled by 2^SHIFT and their sum) over the common denominator M·ΠS_m."""
    members = [[_int(x) for x in row[m : m + classes]] for m in range(0, len(row), classes)]
    sums = [sum(member) for member in members]
    common = math.prod(sums)
    numerators = [0] * classes
    for member, total in zip(members, sums, strict=True):
        factor = common // total
        numerators = [acc + x * factor for acc, x in zip(numerators, member, strict=True)]
    return numerators, common * len(members)


def multiclass_inputs(rows, y, classes) -> tuple[list[Fraction], list[Fraction]]:
    """Multiclass errors 1 − a_i and keys c_i = p_i,ŷ_i (ŷ the smallest argmax), exact."""
    errors, keys = [], []
    for row, label in zip(rows, y, strict=True):
        numerators, denominator = _normalised(tuple(row), classes)
        top = max(numerators)
        predicted = numerators.index(top)  # the first, i.e. the smallest k, on ties
        errors.append(Fraction(0 if predicted == label else 1))
        keys.append(Fraction(top, denominator))
    return errors, keys


def regression_inputs(rows, t) -> tuple[list[Fraction], list[Fraction]]:
    """Regression errors (t − m)² and keys the variance of §8, exact."""
    errors = [(Fraction(ti) - row_mean(row)) ** 2 for row, ti in zip(rows, t, strict=True)]
    return errors, [row_variance(row) for row in rows]


# ------------------------------------------------------------------ §8 quantile scores


@functools.lru_cache(maxsize=4096)
def probit(alpha: float) -> mpmath.mpf:
    """Φ⁻¹(α) at DPS digits: Newton on ncdf from the lower tail (accurate for tiny α)."""
    if alpha == 0.5:
        return _MP.mpf(0)
    if alpha > 0.5:
        return -_lower_probit(1 - Fraction(alpha))
    return _lower_probit(Fraction(alpha))


def _lower_probit(alpha: Fraction) -> mpmath.mpf:
    target = mpf(alpha)
    z = _MP.mpf(statistics.NormalDist().inv_cdf(max(float(alpha), 1e-300)))
    for _ in range(100):
        step = (_MP.ncdf(z) - target) / _MP.npdf(z)
        z -= step
        if abs(step) < _MP.mpf(10) ** (-DPS + 5) * (1 + abs(z)):
            return z
    raise ArithmeticError(f"Φ⁻¹({alpha}) did not converge")


def read_at(row, alpha: float) -> tuple[Fraction, mpmath.mpf | int]:
    """The row read at level α as (exact base, irrational offset): the quantile is base +
    offset. A Gaussian m + σΦ⁻¹(α) (a point gives m); a quantile row the inverse of §2's CDF
    (linear inside [a1, aN], the exponential's inverse in the tails); a sample numpy's
    default linear interpolation of the sorted sample at numpy's virtual index
    fl((K − 1)·α)."""
    return reader(row)(alpha)


def reader(row):
    """``read_at`` for one row at many levels (what does not depend on α done once;
    comparisons of doubles with doubles are exact, so floats order and search)."""
    if row[0] == "g":
        m, v = Fraction(row[1]), row[2]
        sigma = _MP.sqrt(mpf(v)) if v else None

        def gaussian(alpha):
            if sigma is None or alpha == 0.5:
                return m, 0
            return m, sigma * probit(alpha)

        return gaussian
    if row[0] == "q":
        a, q = row[1], row[2]
        b1, bn = tails(a, q)
        a1, an = Fraction(a[0]), Fraction(a[-1])

        def quantile(alpha):
            fa = Fraction(alpha)
            # (the logarithms as log1p of an exact ratio minus 1: levels a hair apart keep
            # their digits)
            if alpha < a[0]:
                return Fraction(q[0]), mpf(b1) * _MP.log1p(mpf((fa - a1) / a1))  # ln(α/a1)
            if alpha > a[-1]:
                above = (fa - an) / (1 - fa)  # (1 − aN)/(1 − α) − 1
                return Fraction(q[-1]), mpf(bn) * _MP.log1p(mpf(above))
            k = min(bisect.bisect_right(a, alpha) - 1, len(a) - 2)  # a[k] ≤ α ≤ a[k+1]
            fa0, fa1, fq0, fq1 = (Fraction(x) for x in (a[k], a[k + 1], q[k], q[k + 1]))
            return fq0 + (fa - fa0) * (fq1 - fq0) / (fa1 - fa0), 0

        return quantile
    s = sorted(row[1])

    def sample(alpha):
        # numpy's virtual index (n − 1)·α is a double (one rounding, as Python's float
        # product); which two values are interpolated, and whether the level falls exactly
        # on a value, is decided on it, as numpy's default decides. The interpolation
        # itself is exact.
        h = Fraction((len(s) - 1) * alpha)
        j = int(h)  # floor: h ≥ 0
        if j >= len(s) - 1:
            return Fraction(s[-1]), 0
        return Fraction(s[j]) + (h - j) * (Fraction(s[j + 1]) - Fraction(s[j])), 0

    return sample


def _difference(reading, target) -> tuple[Fraction | mpmath.mpf, int]:
    """q − t (exact when the reading is rational) and the sign of q − t, decided exactly
    or at DPS digits (an irrational q never equals a double t)."""
    base, offset = reading
    exact = base - Fraction(target)
    if isinstance(offset, int):
        return exact, (exact > 0) - (exact < 0)
    exact = mpf(exact)
    d = exact + offset
    scale = max(abs(exact), abs(offset))
    if abs(d) <= scale * _MP.mpf(10) ** (-DPS + 10):
        raise ArithmeticError("the sign of q − t is beyond the reference's precision")
    return d, 1 if d > 0 else -1


def quantile_score(reading, alpha: float, target):
    """QS_α(q, t) = 2(1{t < q} − α)(q − t), exact or at DPS digits (always ≥ 0)."""
    return _score(_difference(reading, target), alpha)


def _score(difference, alpha: float):
    d, sign = difference
    indicator = 1 if sign > 0 else 0
    if isinstance(d, Fraction):
        return 2 * (indicator - Fraction(alpha)) * d
    return 2 * (indicator - mpf(alpha)) * d


def _wis_term(differences, levels):
    """(1/K) Σ_k QS_α_k of one row from its q − t at every level."""
    scores = [_score(d, alpha) for d, alpha in zip(differences, levels, strict=True)]
    exact = sum((s for s in scores if isinstance(s, Fraction)), Fraction(0))
    rest = [s for s in scores if not isinstance(s, Fraction)]
    term = exact if not rest else mpf(exact) + _MP.fsum(rest)
    return term / len(levels)


def readings(rows, levels) -> list[list[tuple]]:
    """Every row read at every level (``read_at``)."""
    out = []
    for row in rows:
        read = reader(row)
        out.append([read(alpha) for alpha in levels])
    return out


def wis_terms(rows, t, levels) -> list:
    """Per-example (1/K) Σ_k QS_α_k(q_ik, t_i) (exact Fraction or mpf)."""
    return [
        _wis_term([_difference(r, ti) for r in row], levels)
        for row, ti in zip(readings(rows, levels), t, strict=True)
    ]


def mean(terms):
    """The mean of exact or mpf terms (each ≥ 0 here: no cancellation)."""
    exact = sum((x for x in terms if isinstance(x, Fraction)), Fraction(0))
    rest = [x for x in terms if not isinstance(x, Fraction)]
    if not rest:
        return exact / len(terms)
    return (mpf(exact) + _MP.fsum(rest)) / len(terms)


def interval_pairs(levels) -> dict[str, tuple[int, int]]:
    """``covP`` → (index of α_low, index of α_high) for every two levels whose sum is 1
    within 1e-9, P = round(100·(α_high − α_low)) (distinct levels: 0.5 alone is none)."""
    pairs = {}
    for i, low in enumerate(levels):
        for j in range(i + 1, len(levels)):
            high = levels[j]
            if abs(low + high - 1) > 1e-6:  # (a quick float test first: many levels)
                continue
            if abs(Fraction(low) + Fraction(high) - 1) <= COVERAGE_TOLERANCE:
                width = 100 * (Fraction(high) - Fraction(low))
                pairs[f"cov{round(width)}"] = (i, j)
    return pairs


# ------------------------------------------------------------------------- one file


class File:
    """One file's §8 scores on all its rows or any part of them (a slice): what each row
    contributes (error, key, wis term, which intervals cover its target) is computed once.

    ``rows``: binary p's, multiclass rows of L or M·L probabilities, or regression row
    tuples; ``targets``: ±1, class labels, or real targets; ``non_probabilistic`` is the
    whole file's (§3, §7), never re-decided on a part."""

    def __init__(self, task, rows, targets, *, classes=None, levels=None, non_probabilistic):
        self.task, self.levels, self.flat = task, levels, non_probabilistic
        if task == "classification":
            self.errors, self.keys = binary_inputs(rows, [1 if t == 1 else 0 for t in targets])
        elif task == "multiclass":
            self.errors, self.keys = multiclass_inputs(rows, targets, classes)
        else:
            self.errors, self.keys = regression_inputs(rows, targets)
        self.terms, self.inside, self.read = None, {}, None
        if task == "regression" and levels is not None:
            self.read = read = readings(rows, levels)
            # q − t and its sign for every row and level, once
            diffs = [[_difference(r, t) for r in row] for row, t in zip(read, targets, strict=True)]
            self.terms = [_wis_term(row, levels) for row in diffs]
            for name, (i, j) in interval_pairs(levels).items():
                self.inside[name] = [row[i][1] <= 0 <= row[j][1] for row in diffs]

    def scores(self, keep=None) -> dict:
        """{"scores": {rauc, aurc?, wis?}, "wis_terms": list | None, "reported": {covP}}
        of the rows ``keep`` (indices; all by default), as doubles, None where n/a."""
        keep = range(len(self.errors)) if keep is None else keep
        flat = self.flat
        accrued = retention(
            [self.errors[i] for i in keep],
            [self.keys[i] for i in keep],
            ascending=self.task == "regression",
        )
        scores = {"rauc": None if flat else to_float(rauc(accrued))}
        if self.task != "regression":
            scores["aurc"] = None if flat else to_float(aurc(accrued))
        out = {"scores": scores, "wis_terms": None, "reported": {}}
        if self.terms is not None:
            terms = [self.terms[i] for i in keep]
            scores["wis"] = None if flat else to_float(mean(terms))
            out["wis_terms"] = None if flat else [to_float(x) for x in terms]
            # §3: "only 01l / nmse are reported" for a non-probabilistic file: no coverage
            if not flat:
                out["reported"] = {
                    name: to_float(Fraction(sum(inside[i] for i in keep), len(keep)))
                    for name, inside in self.inside.items()
                }
        return out
