"""scoring.dd: the error-free transformations are exact and the row sums are exact to
double-double, checked with fractions.Fraction on cancelling and random data."""

import math
from fractions import Fraction

import numpy as np

from scoring.dd import dd_add, dd_div, dd_mul, exact_row_sums, fast_two_sum, two_prod, two_sum


def _exact(hi, lo) -> Fraction:
    return Fraction(float(hi)) + Fraction(float(lo))


def _rng_values(seed: int, size: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.normal(size=size) * 10.0 ** rng.integers(-30, 30, size=size)


def test_two_sum_and_two_prod_are_exact():
    a, b = _rng_values(1, 2000), _rng_values(2, 2000)
    s, e = two_sum(a, b)
    p, f = two_prod(a, b)
    for i in range(a.size):
        assert _exact(s[i], e[i]) == Fraction(a[i]) + Fraction(b[i])
        assert _exact(p[i], f[i]) == Fraction(a[i]) * Fraction(b[i])
    s, e = fast_two_sum(np.array([1e16]), np.array([1.0 + 2**-40]))
    assert _exact(s[0], e[0]) == Fraction(1e16) + Fraction(1.0 + 2**-40)


def test_double_double_operations_keep_106_bits():
    rng = np.random.default_rng(3)
    ah, bh = rng.uniform(0.5, 2.0, 500), rng.uniform(0.5, 2.0, 500)
    al, bl = ah * rng.uniform(-1e-17, 1e-17, 500), bh * rng.uniform(-1e-17, 1e-17, 500)
    for op, exact in (
        (dd_add, lambda x, y: x + y),
        (dd_mul, lambda x, y: x * y),
        (dd_div, lambda x, y: x / y),
    ):
        hi, lo = op(ah, al, bh, bl)
        for i in range(ah.size):
            want = exact(_exact(ah[i], al[i]), _exact(bh[i], bl[i]))
            assert abs(_exact(hi[i], lo[i]) - want) <= abs(want) * Fraction(2) ** -100


def test_row_sums_survive_total_cancellation():
    rows = np.array(
        [
            [1e100, 1.0, -1e100, 1e-100, 0.0, 0.0, 0.0, 0.0],
            [999999999.7013268] * 5 + [-999999999.7013268] * 3,
            [1e200, 3.0, -1e200, -3.0, 0.1, 0.2, 0.3, -0.6],
            [2.0**-1074, 2.0**-1074, 0.0, 0.0, 1e-300, -1e-300, 0.0, 0.0],
            [0.0] * 8,
        ]
    )
    hi, lo = exact_row_sums(rows)
    for i, row in enumerate(rows):
        want = sum(Fraction(x) for x in row)
        assert _exact(hi[i], lo[i]) == want
        assert hi[i] == math.fsum(row)


def test_row_sums_of_random_cancelling_rows_are_exact_to_2_to_the_minus_120():
    """Three passes of extraction leave less than 2**-120 of the largest term, whatever
    the cancellation (terms spanning 60 decades here)."""
    rng = np.random.default_rng(4)
    x = _rng_values(5, 300 * 40).reshape(300, 40)
    x = np.concatenate([x, -x[:, ::-1] * (1 + 2**-52 * rng.integers(0, 3, (300, 40)))], axis=1)
    hi, lo = exact_row_sums(x)
    for i in range(x.shape[0]):
        want = sum(Fraction(v) for v in x[i])
        largest = Fraction(float(np.max(np.abs(x[i]))))
        assert abs(_exact(hi[i], lo[i]) - want) <= largest * Fraction(2) ** -120
