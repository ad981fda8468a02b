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
