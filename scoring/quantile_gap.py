"""The minimum quantile gap of spec §1, decided exactly on the doubles of a file.

A dataset may demand q(k+1) − q(k) ≥ w. The difference of two doubles is rounded, so
where the rounded difference equals w the exact one decides (Knuth's TwoSum), and a
gap a few ulps short of w (decimals such as 0.3 − 0.2) gets a message that says so.
"""

from __future__ import annotations

import numpy as np

from .errors import fmt


def exact_gap_below(q: np.ndarray, dq: np.ndarray, gap: float) -> np.ndarray:
    """Where the exact difference q(k+1) − q(k) of the doubles is below ``gap`` (spec §1).

    Rounding is monotonic and ``gap`` is a double, so dq = fl(q(k+1) − q(k)) > gap means
    the exact difference is above it and dq < gap below; where dq == gap the sign of the
    rounding error (Knuth's TwoSum, exact) decides.
    """
    below = dq < gap
    tie = np.nonzero(dq == gap)
    if tie[0].size:
        below[tie] = rounding_error(q[:, 1:][tie], q[:, :-1][tie], dq[tie]) < 0
    return below


def rounding_error(hi, lo, diff):
    """(hi − lo) − diff exactly, for diff = fl(hi − lo): Knuth's TwoSum of hi and −lo."""
    a, b = hi, -lo
    a_ = diff - b
    b_ = diff - a_
    return (a - a_) + (b - b_)


def gap_hint(lo: float, hi: float, gap: float) -> str:
    """For a gap a few ulps short of ``gap`` (decimals such as 0.3 − 0.2 in binary):
    what the doubles' difference is, so that the message does not look wrong."""
    lo, hi = float(lo), float(hi)
    diff = hi - lo
    ulp = float(np.max(np.abs(np.spacing([gap, lo, hi]))))
    if gap - diff > 4 * ulp:
        return ""
    if diff < gap:
        return (
            f" (as doubles {fmt(hi)} − {fmt(lo)} = {fmt(diff)}, below {fmt(gap)}; "
            "leave a little more room)"
        )
    short = -rounding_error(hi, lo, diff)
    return (
        f" (as doubles {fmt(hi)} − {fmt(lo)} falls {short:.3g} short of {fmt(gap)}; "
        "leave a little more room)"
    )
