"""Exact references for the exactness tests (spec §3): no floating-point rounding to hide behind.

Every double is converted exactly (``Fraction(x)``, ``Decimal(x)``). Sample rows are
step functions, so their CRPS is a rational number computed with Fractions. Quantile
and Gaussian rows need exp and log: they are computed with ``decimal`` at 80 digits,
piece by piece from the definitions of spec §2-§3 (each integral written out
separately, not the package's rearranged closed forms).
"""

from __future__ import annotations

import bisect
import math
from decimal import Decimal, localcontext
from fractions import Fraction

DIGITS = 80
_PI = Decimal(
    "3.14159265358979323846264338327950288419716939937510582097494459230781640628620899863"
)


def sample_crps(samples, target) -> Fraction:
    """∫ (F(u) − 1{u ≥ t})² du for the empirical CDF of ``samples``, exactly."""
    s = sorted(Fraction(float(x)) for x in samples)
    t = Fraction(float(target))
    k = len(s)
    points = sorted({*s, t})
    total = Fraction(0)
    for lo, hi in zip(points[:-1], points[1:], strict=True):
        f = Fraction(bisect.bisect_right(s, lo), k)  # F on [lo, hi)
        total += (hi - lo) * (f - (1 if lo >= t else 0)) ** 2  # t is among the points
    return total


def _linear_piece(x0, x1, f0, f1, step) -> Decimal:
    """∫ (F − step)² over [x0, x1] where F is linear from f0 to f1 and step is 0 or 1."""
    g0, g1 = f0 - step, f1 - step
    return (x1 - x0) * (g0 * g0 + g0 * g1 + g1 * g1) / 3


def quantile(levels, values, target) -> dict[str, Decimal]:
    """logpdf, CDF at the target and CRPS of a quantile row (spec §2), to 80 digits."""
    with localcontext() as ctx:
        ctx.prec = DIGITS
        a = [Decimal(float(x)) for x in levels]
        q = [Decimal(float(x)) for x in values]
        t = Decimal(float(target))
        n = len(a)
        z1 = (a[1] - a[0]) / (q[1] - q[0])
        zn = (a[-1] - a[-2]) / (q[-1] - q[-2])
        b1, c = a[0] / z1, 1 - a[-1]
        bn = c / zn
        crps = Decimal(0)
        # Lower tail, u < q1: F(u) = a1·exp(−(q1 − u)/b1).
        if t >= q[0]:
            crps += a[0] ** 2 * b1 / 2
        else:
            below = q[0] - t
            e = (-below / b1).exp()
            crps += a[0] ** 2 * b1 / 2 * e * e  # ∫ F² from −∞ to t
            # ∫ (1 − F)² from t to q1 = below − 2∫F + ∫F².
            crps += below - 2 * a[0] * b1 * (1 - e) + a[0] ** 2 * b1 / 2 * (1 - e * e)
        # The bins, split at t.
        for k in range(n - 1):
            dens = (a[k + 1] - a[k]) / (q[k + 1] - q[k])
            edges = [q[k], *([t] if q[k] < t < q[k + 1] else []), q[k + 1]]
            for x0, x1 in zip(edges[:-1], edges[1:], strict=True):
                f0, f1 = a[k] + (x0 - q[k]) * dens, a[k] + (x1 - q[k]) * dens
                crps += _linear_piece(x0, x1, f0, f1, 1 if x0 >= t else 0)
        # Upper tail, u >= qN: 1 − F(u) = c·exp(−(u − qN)/bN).
        if t <= q[-1]:
            crps += c * c * bn / 2
        else:
            above = t - q[-1]
            e = (-above / bn).exp()
            crps += above - 2 * c * bn * (1 - e) + c * c * bn / 2 * (1 - e * e)  # ∫ F², qN..t
            crps += c * c * bn / 2 * e * e  # ∫ (1 − F)² from t to ∞
        if t < q[0]:
            logpdf, cdf = z1.ln() - (q[0] - t) / b1, a[0] * (-(q[0] - t) / b1).exp()
        elif t >= q[-1]:
            logpdf, cdf = zn.ln() - (t - q[-1]) / bn, 1 - c * (-(t - q[-1]) / bn).exp()
        else:
            k = max(i for i in range(n) if q[i] <= t)
            dens = (a[k + 1] - a[k]) / (q[k + 1] - q[k])
            logpdf, cdf = dens.ln(), a[k] + (t - q[k]) * dens
        return {"logpdf": logpdf, "pit": cdf, "crps": crps}


def gaussian_nlpd(mean, variance, target) -> Decimal:
    """−log N(t; m, v) = ½(log 2π + log v + (t − m)²/v), to 80 digits."""
    with localcontext() as ctx:
        ctx.prec = DIGITS
        v = Decimal(float(variance))
        d = Decimal(float(target)) - Decimal(float(mean))
        return ((2 * _PI).ln() + v.ln() + d * d / v) / 2


def close(got: float, want, rel: float = 1e-9, abs_: float = 1e-12) -> bool:
    """``got`` within spec §3's tolerance of the exact ``want``; inf only if want is too large."""
    if isinstance(want, Fraction):
        with localcontext() as ctx:
            ctx.prec = DIGITS
            want = Decimal(want.numerator) / Decimal(want.denominator)
    want = Decimal(want)
    if math.isnan(got):
        return False
    if math.isinf(got):
        return abs(want) > Decimal(1.7976931348623157e308) and (got > 0) == (want > 0)
    error = abs(Decimal(got) - want)
    return error <= Decimal(abs_) or error <= Decimal(rel) * abs(want)
