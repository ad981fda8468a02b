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
    finite = np.isfinite(keys)
    if finite.all():
        return keys + 0.0
    span = np.max(np.abs(keys[finite]), initial=0.0)
    keys = np.where(np.isnan(keys), 4 * span + 4, keys)
    keys = np.where(np.isposinf(keys), 3 * span + 3, keys)
    return np.where(np.isneginf(keys), -3 * span - 3, keys) + 0.0


def rows_off_bulk(values: np.ndarray) -> int:
    """How many rows stand out of the bulk: a row's distance from the median row (the
    largest of its columns' differences from their medians) is more than OUTLIER_RATIO
    times the median of those distances (any distance at all when more than half the
    rows are the median row). Jitter on the bulk's rows raises the median distance, not
    the count."""
    return _rows_off_bulk(_keys(values)) if values.shape[0] else 0


def _rows_off_bulk(keys: np.ndarray) -> int:
    # Columns contiguous: the medians partition each in place of striding through rows.
    columns = np.ascontiguousarray(keys.T)
    distance = np.max(np.abs(columns - np.median(columns, axis=1)[:, None]), axis=0)
    return int(np.sum(distance > OUTLIER_RATIO * np.median(distance)))


# An odd 64-bit multiplier (2^64 / golden ratio): each column's bits spread over the hash.
_MIX = np.uint64(0x9E3779B97F4A7C15)


def _row_hashes(keys: np.ndarray) -> np.ndarray:
    """One 64-bit hash of each row's bits: equal rows hash alike (``_keys`` made every
    value's bits unique to it: one NaN, one zero)."""
    bits = np.ascontiguousarray(keys).view(np.uint64)
    hashes = np.zeros(keys.shape[0], np.uint64)
    for column in bits.T:  # uint64 arithmetic wraps: a multiply-xorshift mix per column
        hashes ^= column
        hashes *= _MIX
        hashes ^= hashes >> np.uint64(29)
    return hashes


def rows_off_exact_mode(values: np.ndarray) -> int:
    """How many rows differ from the most common row (exact equality)."""
    return _rows_off_exact_mode(_keys(values)) if values.shape[0] else 0


def _rows_off_exact_mode(keys: np.ndarray) -> int:
    n = keys.shape[0]
    # The most common row hash, then a check that its rows are one row: hashing and
    # sorting one column is 4-5x quicker than the lexsort of every column. A hash group
    # holds at least one whole group of equal rows, so when the largest is one row
    # repeated, no group of equal rows is larger; else (a collision) the lexsort decides.
    hashes = _row_hashes(keys)
    ordered = np.sort(hashes)
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    counts = np.diff(np.r_[starts, n])
    largest = int(counts.argmax())
    if counts[largest] == 1:
        return n - 1
    group = keys[hashes == ordered[starts[largest]]]
    if np.all(group == group[0]):
        return int(n - counts[largest])
    return _rows_off_by_lexsort(keys)


def _rows_off_by_lexsort(keys: np.ndarray) -> int:
    """``rows_off_exact_mode`` of the ``_keys``: rows sorted by every column, then the
    longest run of equal rows (3x quicker than np.unique(axis=0), which compares rows
    as structured records)."""
    n = keys.shape[0]
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
    if values.shape[0] == 0:
        return 0
    keys = _keys(values)
    return _rows_off_bulk(keys) or _rows_off_exact_mode(keys)


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
