"""A plain, row-by-row reference implementation of shared/spec/scoring.md §1-§3.

It is the judge of tests/scoring/test_differential.py and shares no code with the
``scoring`` package (it does not import it). It is written for trust, not speed:

- files are read line by line following §1 literally;
- every double is taken exactly (``Fraction(x)``); everything rational (means, the
  Brier score, 01l, lift with ties in expectation, ECE, nmse, point and sample CRPS,
  the linear pieces of the quantile CRPS) is computed exactly with Fractions;
- log, exp, erf, φ and √ (nlp, nlpd, Gaussian CRPS, the exponential tails of the
  quantile distribution) are computed with mpmath at ``DPS`` significant digits;
- each result is rounded once to the nearest double at the end (+inf when the exact
  value exceeds the largest double).

``evaluate(pred, target, task, log_base=e, allow_samples=True, min_quantile_gap=0)``
returns ``Result(task, scores, non_probabilistic)`` or raises :class:`Invalid`.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from fractions import Fraction

import mpmath

DPS = 60
BOUND = 1e100  # §1: every number within ±1e100
VAR_BOUND = 1e200  # §1: a Gaussian variance within [0, 1e200]
MAX_QUANTILES = 200
MAX_SAMPLES = 1000
ECE_BINS = 15  # §3, written here on its own: an oracle shares nothing with scoring
CLASSIFICATION_LOSSES = ("nlp", "01l", "lift", "brier", "ece")
REGRESSION_LOSSES = ("nlpd", "nmse", "crps")

_BLANKS = " \t"
_MP = mpmath.MPContext()
_MP.dps = DPS


class Invalid(Exception):
    """The file breaks §1 (the reference's judgement; no message format is implied)."""


@dataclass
class Result:
    task: str
    scores: dict
    non_probabilistic: bool


# ---------------------------------------------------------------------------- §1 files


def _split_tokens(line: str) -> list[str]:
    tokens, current = [], ""
    for ch in line:
        if ch in _BLANKS:
            if current:
                tokens.append(current)
            current = ""
        else:
            current += ch
    if current:
        tokens.append(current)
    return tokens


def _number(token: str) -> float:
    if "nan" in token.lower() or "inf" in token.lower():
        raise Invalid(f"not a number: {token!r}")
    try:
        value = float(token)
    except ValueError:
        raise Invalid(f"not a number: {token!r}") from None
    if value != value or value in (math.inf, -math.inf):  # float() spellings of nan/inf
        raise Invalid(f"not a number: {token!r}")
    return value


def read_numbers(data: bytes) -> list[list[float]]:
    """Spec §1: one list of numbers per example line."""
    if not data:
        raise Invalid("empty file")
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        raise Invalid("not ASCII") from None
    pieces = text.split("\n")
    terminated = [True] * (len(pieces) - 1) + [False]
    if pieces[-1] == "":  # the file ends with LF: nothing follows it
        pieces.pop()
        terminated.pop()
    lines = []
    for piece, ends_in_lf in zip(pieces, terminated, strict=True):
        if ends_in_lf and piece.endswith("\r"):
            piece = piece[:-1]  # CRLF
        if "\r" in piece:
            raise Invalid("CR not directly before LF")
        for ch in piece:
            if ch not in _BLANKS and not (" " < ch < "\x7f"):
                raise Invalid(f"control character {ch!r}")
        lines.append(_split_tokens(piece))
    while lines and not lines[-1]:  # blank lines at the end of the file are ignored
        lines.pop()
    if not lines:
        raise Invalid("no example")
    if any(not tokens for tokens in lines):
        raise Invalid("blank line before the last example")
    return [[_number(tok) for tok in tokens] for tokens in lines]


def _in_bound(x: float) -> bool:
    return -BOUND <= x <= BOUND


def read_targets(data: bytes) -> list[float]:
    rows = read_numbers(data)
    out = []
    for row in rows:
        if len(row) != 1 or not _in_bound(row[0]):
            raise Invalid("a target line holds one number within ±1e100")
        out.append(row[0])
    return out


def _classification_rows(rows) -> list[float]:
    out = []
    for row in rows:
        if len(row) != 1:
            raise Invalid("one probability per line")
        p = row[0]
        if not (0.0 <= p <= 1.0):
            raise Invalid("probability outside [0, 1]")
        out.append(p)
    return out


def _strictly_increasing(xs) -> bool:
    return all(a < b for a, b in zip(xs[:-1], xs[1:], strict=True))


def _regression_rows(rows, allow_samples: bool, min_gap: float) -> list[tuple]:
    out = []
    for row in rows:
        flag, rest = row[0], row[1:]
        if flag == 1:
            if len(rest) != 2:
                raise Invalid("Gaussian row: 1 m v")
            m, v = rest
            if not _in_bound(m) or not (0.0 <= v <= VAR_BOUND):
                raise Invalid("Gaussian mean or variance out of bounds")
            out.append(("g", m, v))
        elif flag == 0:
            if len(rest) % 2 or not (2 <= len(rest) // 2 <= MAX_QUANTILES):
                raise Invalid("quantile row: 0 a1 q1 ... aN qN, 2 <= N <= 200")
            if not all(_in_bound(x) for x in rest):
                raise Invalid("value out of bounds")
            levels, values = list(rest[0::2]), list(rest[1::2])
            if not (levels[0] > 0.0 and levels[-1] < 1.0 and _strictly_increasing(levels)):
                raise Invalid("quantile levels must increase strictly inside (0, 1)")
            if not _strictly_increasing(values):
                raise Invalid("quantile values must increase strictly")
            if min_gap > 0 and any(
                Fraction(b) - Fraction(a) < Fraction(min_gap)
                for a, b in zip(values[:-1], values[1:], strict=True)
            ):
                raise Invalid("quantile gap below the minimum")
            out.append(("q", levels, values))
        elif flag == 2:
            if not allow_samples:
                raise Invalid("sample rows are not allowed")
            if not (1 <= len(rest) <= MAX_SAMPLES):
                raise Invalid("sample row: 1 to 1000 values")
            if not all(_in_bound(x) for x in rest):
                raise Invalid("value out of bounds")
            out.append(("s", list(rest)))
        else:
            raise Invalid("unknown flag")
    return out


# ------------------------------------------------------------------ exact helpers


def _mpf(x) -> mpmath.mpf:
    if isinstance(x, Fraction):
        return _MP.mpf(x.numerator) / x.denominator
    return _MP.mpf(x)


def _to_float(x) -> float:
    """Round an exact value (Fraction or mpf) once to the nearest double; inf past the top."""
    if isinstance(x, Fraction):
        try:
            return float(x)
        except OverflowError:
            return math.inf if x > 0 else -math.inf
    if _MP.isinf(x):
        return math.inf if x > 0 else -math.inf
    if abs(x) > _MP.mpf(sys.float_info.max):
        # past the largest double (by more than its rounding half-ulp, or exactly on it)
        top = _MP.mpf(sys.float_info.max)
        half_ulp = _MP.ldexp(1, 1024 - 54)
        if abs(x) >= top + half_ulp:
            return math.inf if x > 0 else -math.inf
    return float(x)


def _ln(x) -> mpmath.mpf:
    return _MP.log(_mpf(x))


# --------------------------------------------------------------- classification §3


def classification(p: list[float], t: list[float], log_base: float) -> dict:
    n = len(p)
    o = [1 if ti == 1 else 0 for ti in t]
    fp = [Fraction(x) for x in p]
    errors = sum(1 for pi, oi in zip(p, o, strict=True) if (oi == 1) != (pi >= 0.5))
    scores = {"01l": Fraction(errors, n)}
    if all(x in (0.0, 1.0) for x in p):  # non-probabilistic
        scores.update(nlp=None, lift=None, brier=None, ece=None)
        return scores

    # nlp: −(1/n) Σ log_b(p if o else 1 − p)
    truth = [pi if oi else 1 - pi for pi, oi in zip(fp, o, strict=True)]
    if any(x == 0 for x in truth):
        scores["nlp"] = math.inf
    else:
        total = _MP.fsum(_ln(x) for x in truth)
        scores["nlp"] = -total / (n * _ln(log_base))

    # brier
    scores["brier"] = sum(((pi - oi) ** 2 for pi, oi in zip(fp, o, strict=True)), Fraction(0)) / n

    # lift, eq. (13)-(16), ties in p broken in expectation
    n_pos = sum(o)
    if n_pos in (0, n):
        scores["lift"] = None
    else:
        frac_pos = Fraction(n_pos, n)
        groups: dict[float, list[int]] = {}
        for pi, oi in zip(p, o, strict=True):
            groups.setdefault(pi, []).append(oi)
        area_sum = Fraction(0)  # Σ_k l(k/n)
        k, positives = 0, Fraction(0)
        for value in sorted(groups, reverse=True):
            members = groups[value]
            r, pos_in_run = len(members), sum(members)
            for j in range(1, r + 1):
                cum = positives + Fraction(pos_in_run * j, r)  # positives accrue evenly
                area_sum += cum / ((k + j) * frac_pos)
            k += r
            positives += pos_in_run
        area = area_sum / n
        ideal = 1 + Fraction(1, 2) * (1 / frac_pos - 1) * (frac_pos + 1)
        scores["lift"] = (ideal - area) / (ideal - 1)

    # ece: 15 bins (m/15, (m+1)/15] with the doubles m/15 as edges
    edges = [Fraction(m / ECE_BINS) for m in range(ECE_BINS + 1)]
    counts = [0] * ECE_BINS
    correct = [0] * ECE_BINS
    conf = [Fraction(0)] * ECE_BINS
    for pi, fpi, oi in zip(p, fp, o, strict=True):
        c = max(fpi, 1 - fpi)
        (m,) = [m for m in range(ECE_BINS) if edges[m] < c <= edges[m + 1]]
        counts[m] += 1
        correct[m] += 1 if ((pi >= 0.5 and oi == 1) or (pi < 0.5 and oi == 0)) else 0
        conf[m] += c
    ece = Fraction(0)
    for m in range(ECE_BINS):
        if counts[m]:
            ece += Fraction(counts[m], n) * abs(
                Fraction(correct[m], counts[m]) - conf[m] / counts[m]
            )
    scores["ece"] = ece
    return scores


# --------------------------------------------------------- regression rows §2 / §3


def _tail_parameters(levels, values):
    a = [Fraction(x) for x in levels]
    q = [Fraction(x) for x in values]
    z1 = (a[1] - a[0]) / (q[1] - q[0])
    zn = (a[-1] - a[-2]) / (q[-1] - q[-2])
    b1 = a[0] / z1
    bn = (1 - a[-1]) / zn
    return a, q, z1, b1, zn, bn


def quantile_mean(levels, values) -> Fraction:
    """∫ y dF: uniform pieces at their midpoints, exponential tails at q1 − b1 and qN + bN."""
    a, q, _, b1, _, bn = _tail_parameters(levels, values)
    mean = a[0] * (q[0] - b1) + (1 - a[-1]) * (q[-1] + bn)
    for k in range(len(a) - 1):
        mean += (q[k] + q[k + 1]) / 2 * (a[k + 1] - a[k])
    return mean


def quantile_nll(levels, values, target) -> mpmath.mpf:
    """−ln density at the target (natural log)."""
    a, q, z1, b1, zn, bn = _tail_parameters(levels, values)
    t = Fraction(target)
    if t < q[0]:
        return -_ln(z1) + _mpf((q[0] - t) / b1)
    if t >= q[-1]:
        return -_ln(zn) + _mpf((t - q[-1]) / bn)
    for k in range(len(q) - 1):
        if q[k] <= t < q[k + 1]:  # half-open bins
            return -_ln((a[k + 1] - a[k]) / (q[k + 1] - q[k]))
    raise AssertionError("unreachable")


def _linear_square(width, g0, g1) -> Fraction:
    """∫ g² over an interval of the given width where g is linear from g0 to g1."""
    return width * (g0 * g0 + g0 * g1 + g1 * g1) / 3


def quantile_crps(levels, values, target) -> mpmath.mpf:
    """∫ (F(u) − 1{u ≥ t})² du with the CDF of §2, piece by piece."""
    a, q, _, b1, _, bn = _tail_parameters(levels, values)
    t = Fraction(target)
    # middle pieces [q_k, q_k+1]: F linear from a_k to a_k+1 — exact
    middle = Fraction(0)
    for k in range(len(q) - 1):
        lo, hi, f0, f1 = q[k], q[k + 1], a[k], a[k + 1]
        if t <= lo:
            middle += _linear_square(hi - lo, f0 - 1, f1 - 1)
        elif t >= hi:
            middle += _linear_square(hi - lo, f0, f1)
        else:
            ft = f0 + (t - lo) * (f1 - f0) / (hi - lo)
            middle += _linear_square(t - lo, f0, ft)
            middle += _linear_square(hi - t, ft - 1, f1 - 1)
    total = _mpf(middle)
    # left tail (−∞, q1): F(u) = a1·exp(−(q1 − u)/b1)
    a1, mb1 = _mpf(a[0]), _mpf(b1)
    if t >= q[0]:
        total += a1 * a1 * mb1 / 2  # ∫ F²
    else:
        x = _mpf(q[0] - t)
        r = x / mb1
        below = a1 * a1 * mb1 / 2 * _MP.exp(-2 * r)  # ∫_{−∞}^{t} F²
        # ∫_t^{q1} (1 − F)² = x − 2∫F + ∫F²
        above = x + 2 * a1 * mb1 * _MP.expm1(-r) - a1 * a1 * mb1 / 2 * _MP.expm1(-2 * r)
        total += below + above
    # right tail [qN, ∞): 1 − F(u) = cN·exp(−(u − qN)/bN)
    cn, mbn = _mpf(1 - a[-1]), _mpf(bn)
    if t <= q[-1]:
        total += cn * cn * mbn / 2  # ∫ (1 − F)²
    else:
        x = _mpf(t - q[-1])
        r = x / mbn
        # ∫_{qN}^{t} F² = ∫ (1 − cN·G)² with G = exp(−(u − qN)/bN)
        below = x + 2 * cn * mbn * _MP.expm1(-r) - cn * cn * mbn / 2 * _MP.expm1(-2 * r)
        above = cn * cn * mbn / 2 * _MP.exp(-2 * r)  # ∫_t^∞ (1 − F)²
        total += below + above
    return total


def gaussian_nll(mean, variance, target) -> mpmath.mpf:
    v = _mpf(variance)
    d = _mpf(Fraction(target) - Fraction(mean))
    return _MP.log(2 * _MP.pi * v) / 2 + d * d / (2 * v)


def gaussian_crps(mean, variance, target):
    if variance == 0:
        return abs(Fraction(target) - Fraction(mean))  # a point prediction
    sigma = _MP.sqrt(_mpf(variance))
    z = _mpf(Fraction(target) - Fraction(mean)) / sigma
    two_phi_minus_one = _MP.erf(z / _MP.sqrt(2))  # 2Φ(z) − 1
    density = _MP.npdf(z)
    return sigma * (z * two_phi_minus_one + 2 * density - 1 / _MP.sqrt(_MP.pi))


def sample_crps(samples, target) -> Fraction:
    """(1/K)Σ|s_k − t| − (1/2K²)ΣΣ|s_j − s_k|, exactly."""
    k = len(samples)
    s = sorted(Fraction(x) for x in samples)
    t = Fraction(target)
    spread = sum((abs(x - t) for x in s), Fraction(0)) / k
    # ΣΣ_{j,k}|s_j − s_k| = 2 Σ_{j<k} (s_(k) − s_(j)) = 2 Σ_i (2i − K − 1) s_(i), i from 1
    pairs = 2 * sum((x * (2 * i - k - 1) for i, x in enumerate(s, start=1)), Fraction(0))
    return spread - pairs / (2 * k * k)


def sample_crps_by_integral(samples, target) -> Fraction:
    """The same CRPS as ∫ (F_K(u) − 1{u ≥ t})² du of the step CDF (a check of the above)."""
    s = sorted(Fraction(x) for x in samples)
    t = Fraction(target)
    points = sorted({*s, t})
    total = Fraction(0)
    for lo, hi in zip(points[:-1], points[1:], strict=True):
        f = Fraction(sum(1 for x in s if x <= lo), len(s))
        total += (hi - lo) * (f - (1 if lo >= t else 0)) ** 2
    return total


def row_mean(row) -> Fraction:
    kind = row[0]
    if kind == "g":
        return Fraction(row[1])
    if kind == "q":
        return quantile_mean(row[1], row[2])
    return sum((Fraction(x) for x in row[1]), Fraction(0)) / len(row[1])


def row_crps(row, target):
    kind = row[0]
    if kind == "g":
        return gaussian_crps(row[1], row[2], target)
    if kind == "q":
        return quantile_crps(row[1], row[2], target)
    return sample_crps(row[1], target)


def row_nll(row, target):
    """−ln p(t), natural log; +inf for a point prediction."""
    kind = row[0]
    if kind == "g":
        return math.inf if row[2] == 0 else gaussian_nll(row[1], row[2], target)
    if kind == "q":
        return quantile_nll(row[1], row[2], target)
    raise ValueError("a sample row has no density")


def regression(rows: list[tuple], t: list[float], log_base: float) -> dict:
    n = len(rows)
    ft = [Fraction(x) for x in t]
    mean_t = sum(ft, Fraction(0)) / n
    var_t = sum(((x - mean_t) ** 2 for x in ft), Fraction(0)) / n
    sq_err = sum(((x - row_mean(row)) ** 2 for row, x in zip(rows, ft, strict=True)), Fraction(0))
    scores = {"nmse": None if var_t == 0 else sq_err / (n * var_t)}
    if all(row[0] == "g" and row[2] == 0 for row in rows):  # non-probabilistic
        scores.update(nlpd=None, crps=None)
        return scores
    if any(row[0] == "s" for row in rows):
        scores["nlpd"] = None
    elif any(row[0] == "g" and row[2] == 0 for row in rows):
        scores["nlpd"] = math.inf
    else:
        total = _MP.fsum(row_nll(row, x) for row, x in zip(rows, t, strict=True))
        scores["nlpd"] = total / (n * _ln(log_base))
    crps = _MP.fsum(_mpf(row_crps(row, x)) for row, x in zip(rows, t, strict=True))
    scores["crps"] = crps / n
    return scores


# ------------------------------------------------------------------------- entry


def evaluate(
    predictions: bytes,
    targets: bytes,
    task: str | None = None,
    *,
    log_base: float = math.e,
    allow_samples: bool = True,
    min_quantile_gap: float = 0.0,
) -> Result:
    t = read_targets(targets)
    rows = read_numbers(predictions)
    if task is None:
        one_number = all(len(row) == 1 for row in rows)
        task = "classification" if one_number and all(x in (1.0, -1.0) for x in t) else "regression"
    if task == "classification":
        if not all(x in (1.0, -1.0) for x in t):
            raise Invalid("classification targets are +1 or -1")
        p = _classification_rows(rows)
        if len(p) != len(t):
            raise Invalid("number of examples differs from the number of targets")
        raw = classification(p, t, log_base)
        names = CLASSIFICATION_LOSSES
        non_probabilistic = all(x in (0.0, 1.0) for x in p)
    else:
        parsed = _regression_rows(rows, allow_samples, min_quantile_gap)
        if len(parsed) != len(t):
            raise Invalid("number of examples differs from the number of targets")
        raw = regression(parsed, t, log_base)
        names = REGRESSION_LOSSES
        non_probabilistic = all(row[0] == "g" and row[2] == 0 for row in parsed)
    scores = {}
    for name in names:
        value = raw[name]
        scores[name] = None if value is None else _to_float(value)
    return Result(task, scores, non_probabilistic)
