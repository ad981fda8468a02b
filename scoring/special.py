"""The error function for arrays, in numpy alone (scipy is not a runtime dependency).

Two expansions, each used where it converges quickly and without cancellation:

- |x| < 2.5: erf(x) = 2/√π · exp(−x²) · Σ 2ⁿ x²ⁿ⁺¹ / (1·3·…·(2n+1)), a series of
  positive terms (Abramowitz & Stegun 7.1.6);
- |x| ≥ 2.5: erfc(x) = exp(−x²)/√π · 1/(x + ½/(x + 1/(x + 3/2/(x + …)))), the
  Laplace continued fraction (A&S 7.1.14), evaluated bottom-up at a fixed depth.

Both loops run a fixed number of times over whole arrays: no loop per element.
When the package's C extension is built, the C library's ``erf``/``erfc`` (as
``math.erf`` uses) do the same in one pass; the expansions remain the fallback.
Agreement with ``math.erf`` is a test of both (tests/scoring/test_special.py).
"""

from __future__ import annotations

import numpy as np

from . import _accel

_SWITCH = 2.5
_SERIES_TERMS = 60
_FRACTION_DEPTH = 60
_TWO_OVER_SQRT_PI = 2.0 / np.sqrt(np.pi)
_ONE_OVER_SQRT_PI = 1.0 / np.sqrt(np.pi)


def _erf_series(x: np.ndarray) -> np.ndarray:
    x2 = x * x
    term = x.copy()
    total = x.copy()
    for n in range(_SERIES_TERMS):
        term *= 2.0 * x2 / (2 * n + 3)
        total += term
    return _TWO_OVER_SQRT_PI * np.exp(-x2) * total


def _erfc_fraction(x: np.ndarray) -> np.ndarray:
    """erfc(x) for x ≥ _SWITCH; 0 beyond 40 (exactly so in double precision from 27.3),
    without squaring an x up to 1e261 (from a Gaussian row of subnormal variance)."""
    x = np.minimum(x, 40.0)
    f = x.copy()
    for k in range(_FRACTION_DEPTH, 0, -1):
        f = x + (0.5 * k) / f
    return np.exp(-x * x) * _ONE_OVER_SQRT_PI / f


def _libm(native, x, complement: bool) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    out = np.empty(x.shape)  # (0-d stays 0-d)
    x = np.ascontiguousarray(x)
    native.erf_into(x.reshape(-1), out.reshape(-1), complement)
    return out


def erf(x) -> np.ndarray:
    """Error function, elementwise."""
    native = _accel.native()
    if native is not None:
        return _libm(native, x, False)
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    ax = np.abs(x)
    small = ax < _SWITCH
    out[small] = _erf_series(x[small])
    big = ~small
    out[big] = np.copysign(1.0 - _erfc_fraction(ax[big]), x[big])
    return out


def erfc(x) -> np.ndarray:
    """Complementary error function 1 − erf(x), accurate in the right tail."""
    native = _accel.native()
    if native is not None:
        return _libm(native, x, True)
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    small = np.abs(x) < _SWITCH
    out[small] = 1.0 - _erf_series(x[small])
    right = x >= _SWITCH
    out[right] = _erfc_fraction(x[right])
    left = x <= -_SWITCH
    out[left] = 2.0 - _erfc_fraction(-x[left])
    return out


def norm_cdf(z) -> np.ndarray:
    """Φ(z), the standard normal CDF."""
    return 0.5 * erfc(-np.asarray(z, dtype=np.float64) / np.sqrt(2.0))


def norm_pdf(z) -> np.ndarray:
    """φ(z), the standard normal density."""
    z = np.asarray(z, dtype=np.float64)
    return np.exp(-0.5 * z * z) / np.sqrt(2.0 * np.pi)


# Wichura's AS241 PPND16 (Applied Statistics 37, 1988, 477-484): rational approximations
# of Φ⁻¹ with relative error about 1e-16, in three regions of p.
_A = (
    3.387132872796366608,
    133.14166789178437745,
    1971.5909503065514427,
    13731.693765509461125,
    45921.953931549871457,
    67265.770927008700853,
    33430.575583588128105,
    2509.0809287301226727,
)
_B = (
    1.0,
    42.313330701600911252,
    687.1870074920579083,
    5394.1960214247511077,
    21213.794301586595867,
    39307.89580009271061,
    28729.085735721942674,
    5226.495278852545925,
)
_C = (
    1.42343711074968357734,
    4.6303378461565452959,
    5.7694972214606914055,
    3.64784832476320460504,
    1.27045825245236838258,
    0.24178072517745061177,
    0.0227238449892691845833,
    7.7454501427834140764e-4,
)
_D = (
    1.0,
    2.05319162663775882187,
    1.6763848301838038494,
    0.68976733498510000455,
    0.14810397642748007459,
    0.0151986665636164571966,
    5.475938084995344946e-4,
    1.05075007164441684324e-9,
)
_E = (
    6.6579046435011037772,
    5.4637849111641143699,
    1.7848265399172913358,
    0.29656057182850489123,
    0.026532189526576123093,
    0.0012426609473880784386,
    2.71155556874348757815e-5,
    2.01033439929228813265e-7,
)
_F = (
    1.0,
    0.59983220655588793769,
    0.13692988092273580531,
    0.0148753612908506148525,
    7.868691311456132591e-4,
    1.8463183175100546818e-5,
    1.4215117583164458887e-7,
    2.04426310338993978564e-15,
)


def _ratio(num, den, x) -> np.ndarray:
    """num(x)/den(x), coefficients from the constant term up (Horner's rule)."""
    top = np.full(x.shape, num[-1])
    bottom = np.full(x.shape, den[-1])
    for k in range(len(num) - 2, -1, -1):
        top = top * x + num[k]
        bottom = bottom * x + den[k]
    return top / bottom


def norm_ppf(p) -> np.ndarray:
    """Φ⁻¹(p), the standard normal quantile, elementwise for 0 < p < 1 (−inf at 0,
    +inf at 1), relative error about 1e-16 (Wichura's AS241 PPND16).

    With q = p − ½: for |q| ≤ 0.425 a ratio of degree-7 polynomials in 0.180625 − q²
    times q; farther out r = √(−log min(p, 1 − p)) and a ratio in r − 1.6 (r ≤ 5) or
    r − 5, with the sign of q. min(p, 1 − p) loses nothing: 1 − p is exact for p ≥ ½.
    """
    p = np.asarray(p, dtype=np.float64)
    q = p - 0.5
    out = np.empty(p.shape)
    central = np.abs(q) <= 0.425
    qc = q[central]
    out[central] = qc * _ratio(_A, _B, 0.180625 - qc * qc)
    tail = ~central
    tail_p = np.minimum(p[tail], 1.0 - p[tail])
    with np.errstate(divide="ignore"):
        r = np.sqrt(-np.log(tail_p))
    near = r <= 5.0
    x = np.empty(r.shape)
    x[near] = _ratio(_C, _D, r[near] - 1.6)
    far = ~near & np.isfinite(r)
    x[far] = _ratio(_E, _F, r[far] - 5.0)
    x[~np.isfinite(r)] = np.inf
    out[tail] = np.where(q[tail] < 0, -x, x)
    return out
