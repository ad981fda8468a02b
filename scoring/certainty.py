"""How many examples a prediction file claims certainty on (issue 28).

An example is *certain* when its predictive distribution rules an outcome out:

- binary classification: p = 0 or p = 1 (the other label gets probability 0);
- multiclass: some class gets probability exactly 0 after each member is normalised by
  its sum and the members are averaged (a one-hot row counts once, however many zeros);
- regression: a zero-variance predictive distribution (a Gaussian of variance 0, a
  sample whose values are all equal, quantiles that are all equal).

Under a strictly proper log score such an example costs −log 0 = +∞ as soon as the
ruled-out outcome happens (Good, J. R. Stat. Soc. B 14, 1952; Gneiting & Raftery, JASA
102, 2007, §2), so a finite nlp over n examples says only that none of them happened
*this time*: with k certain examples an entry whose every claim has probability q of
failing keeps a finite score with probability (1 − q)^k, and the data of one split
cannot tell a lucky entry from a sound one. The site marks such entries with the count.

The count reads the predictions alone (never the targets: it tells nothing about them),
with one vectorised pass over what the task already holds.
"""

from __future__ import annotations

import numpy as np

from .multiclass_rows import ClassRows
from .regression_rows import GAUSSIAN, SAMPLE, RegressionRows


def binary_certain(p: np.ndarray) -> int:
    """#{i : p_i ∈ {0, 1}}: examples whose other label gets probability 0 (a double
    that rounds to 1, 1 − 1e-17 in the file, is 1 as the losses read it)."""
    p = np.asarray(p, dtype=np.float64)
    return int(np.count_nonzero((p == 0) | (p == 1)))


def multiclass_certain(rows: ClassRows) -> int:
    """#{i : min_k p_ik = 0} over the normalised, member-averaged rows.

    Probabilities are ≥ 0, so a file whose smallest probability is positive has none:
    one contiguous min over the n × L values (about 0.5 % of an evaluation of 10^6 × 10)
    answers the usual file; only a file with zeros is looked at row by row. Rows holding
    values below 2^-900 (``rows.exact``) are decided on their exact values: there a double
    of 0 may stand for a positive probability below the smallest double, which is no
    claim of certainty (its nlp term is finite, scoring.multiclass_rows.exact_decisions).
    """
    if rows.n == 0 or rows.probs.min() > 0:
        return 0
    zero = (rows.probs == 0).any(axis=1)
    for i, values in (rows.exact or {}).items():
        zero[i] = any(value == 0 for value in values)
    return int(np.count_nonzero(zero))


def regression_certain(rows: RegressionRows) -> int:
    """#{i : the predictive distribution of row i has variance 0}: a Gaussian of v = 0, a
    sample whose smallest and largest values are equal (the reader keeps each sample
    sorted), quantile values whose first and last are equal (the format asks them to
    increase strictly, so only a file read without that check has such rows)."""
    count = 0
    for group in rows.groups:
        if group.kind == GAUSSIAN:
            count += int(np.count_nonzero(group.second == 0))
        elif group.kind == SAMPLE:
            count += int(np.count_nonzero(group.first[:, 0] == group.first[:, -1]))
        else:
            count += int(np.count_nonzero(group.second[:, 0] == group.second[:, -1]))
    return count
