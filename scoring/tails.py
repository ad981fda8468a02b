"""Heavy-tailed terms: when a bootstrap interval of a mean loss may be too narrow.

Why a diagnostic, not another interval
--------------------------------------
The percentile bootstrap of a mean (bootstrap.py, spec §5) is consistent when the
per-example terms have a finite variance (Bickel & Freedman 1981, Ann. Statist. 9,
"Some asymptotic theory for the bootstrap"), and is *not* when they have none: for terms
in the domain of attraction of a stable law of index α < 2 the bootstrap distribution of
the mean converges to a random limit (Athreya 1987, Ann. Statist. 15, "Bootstrap of the
mean in the infinite variance case"; Knight 1989). Under Student-t(3) outcomes the
nlpd and the squared errors of a Gaussian prediction grow like y², so their terms have
tail index 3/2: no finite variance, and intervals that cover 73–85 % whatever n. The
remedies do not rescue a 95 % interval at the sizes the site sees: the m-out-of-n
bootstrap is consistent but needs m/n → 0 at a rate that depends on the unknown α, and
the studentised bootstrap assumes the variance that is missing (bench/coverage.py: the
bootstrap-t covers t(3) nlpd 82–85 % at n = 100 and 1,000, no better than the
percentile interval). What the data *can* tell is whether the terms look heavy-tailed,
so an interval is kept as it is and *marked* when they do (issue 28: "a visible mark
where [90 %] cannot be reached").

The diagnostic
--------------
The Hill (1975, Ann. Statist. 3, "A simple general approach to inference about the tail
of a distribution") estimator of the upper tail index of the absolute deviations from
the median, x_i = |terms_i − median(terms)|, on the k largest of them::

    γ̂ = (1/k) Σ_{j=1..k} log x_(j) − log x_(k+1),     α̂ = 1/γ̂,

x_(1) ≥ x_(2) ≥ … the order statistics, k = max(10, ⌊√n⌋) (the usual k ∝ √n; 10 at
least, so that α̂ is not two points' noise at small n). Centring at the median makes α̂
invariant to a shift of the terms (an nlpd's constant log σ), and the absolute value
watches both tails (a difference of two entries' terms can be heavy on either side).
An interval is marked when α̂ < THRESHOLD = 2.5. Index 2 is where the variance ends,
but Hill's estimate is biased upward when a heavy tail sits under a light bulk (terms
0.5·X + U, X Pareto of index 1.5, U exponential: α̂ ≈ 2–2.5 at n = 1,000), so the
threshold leaves a margin.

What it does (bench/coverage.py, B = 1000; 400, 200, 40 replications at n = 100, 1,000,
20,000; two Gaussian entries, one well specified): on t(3) outcomes the nlpd and nmse
intervals are marked in 94–100 % of replications, so that "covered or marked" is
95–100 % for own and paired-difference intervals, where coverage alone is 73–85 % for
nlpd. An independent check (a log-Pareto nlp under an exponential bulk) found 87 % and
84 % "covered or marked" at n = 100 and 1,000 with a threshold of 2, and 92.5 % and
94 % with 2.5; lognormal outcomes' nlpd at n = 100 likewise needed it. The price is on
normal data: nothing is marked at n = 20,000, about 6 % of nlpd and nmse intervals at
n = 1,000, and most of them at n = 100 (79 %; crps 59 %): Hill's estimator on ten order
statistics cannot tell the χ²-type tail of a squared error from index 3/2, and at that
size the data cannot show that the variance is finite. A mark that errs on the side of
caution at small n is the price of never showing an unmarked interval that is too
narrow. nmse divides by the resampled variance of the targets: its α̂ is the smaller of
the squared errors' and of the squared deviations of the targets' (Student-t targets
predicted with light-tailed errors: 80–83 % coverage unmarked otherwise).

A difference of two entries' terms d = a − b has a tail no heavier than the heavier of
the two (P(|d| > x) ≤ P(|a| > x/2) + P(|b| > x/2)), so a difference interval is marked
when either entry's own terms are: never less than it should, sometimes more.

Bounded losses (BOUNDED: 01l, brier) are never marked: their terms have every moment.
Terms equal to +inf are left out (the interval of an entry with one is already
[·, +inf]); fewer than two positive deviations (constant terms, a 0/1 loss with at most
one error) leave no tail to estimate: α̂ = +inf, no mark. Where the deviations take
few values (01l, a brier of hard labels), x_(k+1) equals the top ones and α̂ = +inf.
"""

from __future__ import annotations

import math

import numpy as np

# α̂ below this marks an interval (bench/coverage.py: the "covered or marked" criterion).
THRESHOLD = 2.5
# k = max(MIN_K, ⌊√n⌋) order statistics.
MIN_K = 10
# Losses whose terms are bounded (01l in {0, 1}, brier in [0, 2]): every moment is finite
# and the bootstrap consistent, so they are never marked. Hill's estimator would read
# their few rare errors (a near two-point distribution, x_(k+1) from the small terms)
# as a heavy tail.
BOUNDED = frozenset({"01l", "brier"})


def tail_k(n: int) -> int:
    """The number of order statistics Hill's estimator uses: max(10, ⌊√n⌋)."""
    return max(MIN_K, math.isqrt(n))


def hill(values, *, k: int) -> float:
    """Hill's estimate α̂ = 1/γ̂ of the upper tail index of positive ``values``.

    ``γ̂ = (1/k) Σ_{j≤k} log x_(j) − log x_(k+1)`` on the order statistics
    x_(1) ≥ x_(2) ≥ …; k is lowered to (number of values − 1) when there are fewer.
    +inf when γ̂ = 0 (the top k + 1 values equal) or fewer than two values.
    """
    x = np.asarray(values, dtype=np.float64)
    if x.size < 2:
        return math.inf
    if not (np.isfinite(x).all() and (x > 0).all()):
        raise ValueError("Hill's estimator needs positive finite values")
    k = min(k, x.size - 1)
    top = -np.partition(-x, k)[: k + 1]  # the k + 1 largest, the (k+1)-th at [k]
    gamma = float(np.mean(np.log(top[:k])) - np.log(top[k]))
    return math.inf if gamma <= 0 else 1.0 / gamma


def tail_index(terms, *, k: int | None = None) -> np.ndarray:
    """α̂ of each column of ``terms`` (n,) or (n, m): Hill on |terms − median|.

    Infinite terms are left out; k defaults to :func:`tail_k` of the finite count.
    Returns an array of shape (m,) (a 0-d array for one column).
    """
    array = np.asarray(terms, dtype=np.float64)
    columns = array.reshape(array.shape[0], -1)
    out = np.full(columns.shape[1], np.nan)
    n = columns.shape[0]
    if n >= 2 and np.isfinite(columns).all():
        # Every column at once (a split's thousands of entries): where the k + 1 largest
        # deviations are positive, Hill's formula needs nothing else.
        kk = min(tail_k(n) if k is None else k, n - 1)
        deviations = np.abs(columns - np.median(columns, axis=0))
        top = -np.partition(-deviations, kk, axis=0)[: kk + 1]
        ok = top[kk] > 0
        with np.errstate(divide="ignore"):
            gamma = np.mean(np.log(top[:kk, ok]), axis=0) - np.log(top[kk, ok])
            out[ok] = np.where(gamma > 0, 1.0 / np.maximum(gamma, 1e-300), np.inf)
    for j in np.flatnonzero(np.isnan(out)):
        column = columns[:, j]
        finite = column[np.isfinite(column)]
        if finite.size < 2:
            out[j] = math.inf
            continue
        deviations = np.abs(finite - np.median(finite))
        positive = deviations[deviations > 0]
        out[j] = hill(positive, k=tail_k(finite.size) if k is None else k)
    return out.reshape(array.shape[1:]) if array.ndim > 1 else out.reshape(())


def heavy(alpha, *, threshold: float = THRESHOLD):
    """Whether an α̂ (or an array of them) marks an interval; NaN (unknown) does not."""
    alpha = np.asarray(alpha, dtype=np.float64)
    out = alpha < threshold
    return bool(out) if out.ndim == 0 else out
