"""Signs of leaderboard probing in one prediction file, for the organisers.

A probe (Whitehill 2017) often predicts one constant for every example but a few,
whose effect on the shown score tells the prober about those examples' targets.
"""

from __future__ import annotations

import numpy as np

from .evaluate import Evaluation


def rows_off_mode(evaluation: Evaluation) -> int:
    """How many examples' predictions differ from the most common prediction.

    What is compared is the task's (TaskSpec.probe_values): classification compares
    p(y = +1); regression the predictive mean together with the variance of Gaussian
    rows (NaN for quantile and sample rows, compared as equal) and the row type.
    0 means a constant file; a small positive count, a constant file but for a few rows.
    """
    ctx = evaluation.context
    values = ctx.spec.probe_values(ctx)
    if values.shape[0] == 0:
        return 0
    # NaN compares equal to NaN here: replace it by a value no prediction takes; -0.0
    # and 0.0 are one value (+ 0.0 makes them one).
    n = values.shape[0]
    keys = np.where(np.isnan(values), np.inf, values).reshape(n, -1) + 0.0
    # Rows sorted by every column, then the longest run of equal rows: 3× quicker than
    # np.unique(axis=0), which compares rows as structured records.
    ordered = keys[np.lexsort(keys.T[::-1])]
    starts = np.flatnonzero(np.r_[True, np.any(ordered[1:] != ordered[:-1], axis=1)])
    return int(n - np.diff(np.r_[starts, n]).max())
