"""Statistics of leaderboard probing, for the organisers (docs/probing.md).

Each is a number that does not care about jitter: a prober who adds a few ulps or 1e-11
to every prediction changes no count below by more than chance, while today's equality
tests (identical values, terms equal within 1e-12) are evaded by it.

- ``rows_off_mode``: rows standing out of the file's bulk (a constant file but for a
  few rows, Whitehill 2017), measured against the bulk's own spread, or else
  off its most common prediction.
- ``sign_z``: is an entry better than the baseline on more examples than chance would
  give? (a sign test on the per-example terms: a random ±vector of Blum & Hardt's
  boosting attack scores z ~ N(0, 1) whatever its amplitude).
- ``change_share``: the share of the change between two entries carried by their top
  few rows (a few-row change, whatever the jitter on the others).
- ``correlation`` and ``combination_corr``: random vectors are mutually uncorrelated;
  the attack's final entry (their vote) is correlated with their score-weighted mean.
"""

from __future__ import annotations

import numpy as np

from .evaluate import Evaluation

# A row stands out of the bulk when its distance from the median row is this many times
# the median distance (jitter to hide 3 probes at 0.99 among 0.5 must be ≥ 0.016, which
# drowns the probes' effect on the score).
OUTLIER_RATIO = 30.0


def _keys(values: np.ndarray) -> np.ndarray:
    """The rows as float64 columns where NaN and ±inf are values no finite prediction
    takes, one per kind, so that each counts as one value (not as a spread); -0.0 and
    0.0 are one value."""
    n = values.shape[0]
    keys = values.reshape(n, -1).astype(np.float64)
    span = np.max(np.abs(keys[np.isfinite(keys)]), initial=0.0)
    keys = np.where(np.isnan(keys), 4 * span + 4, keys)
    keys = np.where(np.isposinf(keys), 3 * span + 3, keys)
    return np.where(np.isneginf(keys), -3 * span - 3, keys) + 0.0


def rows_off_bulk(values: np.ndarray) -> int:
    """How many rows stand out of the bulk: a row's distance from the median row (the
    largest of its columns' differences from their medians) is more than OUTLIER_RATIO
    times the median of those distances (any distance at all when more than half the
    rows are the median row). Jitter on the bulk's rows raises the median distance, not
    the count."""
    if values.shape[0] == 0:
        return 0
    # Columns contiguous: the medians partition each in place of striding through rows.
    columns = np.ascontiguousarray(_keys(values).T)
    distance = np.max(np.abs(columns - np.median(columns, axis=1)[:, None]), axis=0)
    return int(np.sum(distance > OUTLIER_RATIO * np.median(distance)))


def rows_off_exact_mode(values: np.ndarray) -> int:
    """How many rows differ from the most common row (exact equality)."""
    n = values.shape[0]
    if n == 0:
        return 0
    keys = _keys(values)
    # A row repeats no more often than any one of its columns' values: when a column's
    # values are all distinct (a model's predictive means), no row repeats, and no
    # lexsort is needed. Constant columns (a row type) are not sorted for it.
    for column in keys.T:
        if column[0] == column[-1] and np.all(column == column[0]):
            continue
        ordered = np.sort(column)
        if not np.any(ordered[1:] == ordered[:-1]):
            return n - 1
    # Rows sorted by every column, then the longest run of equal rows: 3× quicker than
    # np.unique(axis=0), which compares rows as structured records.
    ordered = keys[np.lexsort(keys.T[::-1])]
    starts = np.flatnonzero(np.r_[True, np.any(ordered[1:] != ordered[:-1], axis=1)])
    return int(n - np.diff(np.r_[starts, n]).max())


def rows_off_mode(evaluation: Evaluation) -> int:
    """The rows standing out of the file's bulk (``rows_off_bulk``) or, when none does,
    the rows that differ from its most common prediction, of what the task compares
    (TaskSpec.probe_values): classification p(y = +1); regression the predictive mean
    with the variance of Gaussian rows (NaN for quantile and sample rows) and the row
    type. 0: a constant file; a small positive count: a file constant but for a few
    rows, whatever jitter its other rows carry; most rows: a model's file."""
    ctx = evaluation.context
    values = ctx.spec.probe_values(ctx)
    return rows_off_bulk(values) or rows_off_exact_mode(values)


def sign_z(terms: np.ndarray, reference: np.ndarray) -> float | None:
    """Sign-test z of an entry's terms against a reference's (the baseline) on the same
    examples: (better − worse) / √(better + worse), positive when the entry's loss is
    lower on more examples. Ties and non-finite pairs are left out; None when the shapes
    differ, 0.0 when no example differs."""
    terms, reference = np.asarray(terms, np.float64), np.asarray(reference, np.float64)
    if terms.shape != reference.shape or terms.size == 0:
        return None
    with np.errstate(invalid="ignore"):
        diff = reference - terms  # inf − inf is NaN: neither better nor worse
    better, worse = int(np.sum(diff > 0)), int(np.sum(diff < 0))
    if better + worse == 0:
        return 0.0
    return float((better - worse) / np.sqrt(better + worse))


def top_rows(n: int, *, few: int, share: float) -> int:
    """How many rows "a few" is for ``n`` examples: ``few``, or ``share`` of them if more."""
    return max(few, int(share * n))


def change_share(a: np.ndarray, b: np.ndarray, *, k: int) -> float | None:
    """Share of the L1 change |a − b| carried by its ``k`` largest rows: near 1 for a
    change of at most k rows whatever the jitter on the others, about k/n for two
    models. None when the shapes differ or nothing changed. A row whose term is infinite
    in one entry only counts as a change larger than every finite one."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape or a.size == 0:
        return None
    with np.errstate(invalid="ignore"):
        change = np.abs(a - b)
    change = np.where(np.isnan(change), 0.0, change)  # inf − inf: the same row
    infinite = int(np.isinf(change).sum())
    if infinite:
        return min(1.0, k / infinite)
    total = float(change.sum())
    if total <= 0.0:
        return None
    k = min(k, change.size)
    return float(np.partition(change, change.size - k)[-k:].sum() / total)


def _standardized(values: np.ndarray) -> np.ndarray | None:
    values = np.asarray(values, np.float64)
    finite = np.isfinite(values)
    if finite.sum() < 3:
        return None
    centred = np.where(finite, values - values[finite].mean(), 0.0)
    scale = float(np.sqrt(np.mean(centred**2)))
    return centred / scale if scale > 0 else None


def correlation(a: np.ndarray, b: np.ndarray) -> float | None:
    """Pearson correlation of two entries' terms (non-finite terms at their mean);
    None when the shapes differ or one is constant."""
    if np.shape(a) != np.shape(b):
        return None
    x, y = _standardized(a), _standardized(b)
    if x is None or y is None:
        return None
    return float(np.mean(x * y))


def combination_corr(terms: np.ndarray, earlier: list[np.ndarray], weights) -> float | None:
    """Correlation of an entry's terms with the weighted mean of earlier entries' (each
    standardized): a weight per earlier entry, its sign z on the shown split, so the
    mean leans on the vectors that looked better than chance, as the attack's vote
    does. None without earlier entries of the same shape."""
    parts = [
        (w, s)
        for w, e in zip(weights, earlier, strict=True)
        if (s := _standardized(e)) is not None and s.shape == np.shape(terms)
    ]
    if not parts:
        return None
    mean = sum(w * s for w, s in parts)
    return correlation(terms, mean) if np.ndim(mean) else None
