"""How sure a score is: paired bootstrap intervals (../shared/spec/scoring.md §5).

Every entry of a dataset split is resampled with the *same* B = 1000 bootstrap resamples
of the example indices, drawn once per (dataset, split) from a fixed seed, so that the
difference between two entries is resampled pairwise: what the two entries share (hard
examples, easy examples) cancels, and two nearly identical entries get a narrow
difference interval even when each one's own interval is wide.

A resample is held as counts: row b of the weight matrix W says how often each example
was drawn in resample b (the counts of n draws with replacement sum to n). A mean loss
on every resample is then one matrix product, W · terms / n, for all entries at once;
W is built in blocks of rows, so memory stays bounded whatever n.

Resample rows come from random streams of STREAM_ROWS rows each (``SeedSequence(seed,
spawn_key=(group,))``): row b is the same whichever block it is built in, and the same on
every machine.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import numpy as np

RESAMPLES = 1000
LEVEL = 0.95
# Percentiles of the 95 % interval (numpy's default linear interpolation).
LOWER_PERCENTILE, UPPER_PERCENTILE = 2.5, 97.5
# Weight blocks hold at most this many float64 counts (32 MB).
BLOCK_VALUES = 4_000_000
# Resample rows drawn from one random stream, in order.
STREAM_ROWS = 50
# Two scores within this relative distance are one score: what separates them is the
# rounding of a sum of n float64 terms (about n · 2⁻⁵³ ≈ 1e-12 relative at n = 10⁴), not
# the entries. Ranks, tiers and gains treat them as ties (same()).
TIE_RTOL = 1e-12


def same(a, b):
    """Whether two scores are one score: ``|a − b| ≤ TIE_RTOL · max(|a|, |b|)``.

    Equal infinities are the same; an infinity is not the same as a finite value, and
    NaN is the same as nothing. Works elementwise on arrays (a bool array) and on plain
    floats (a bool).
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.abs(a - b) <= TIE_RTOL * np.maximum(np.abs(a), np.abs(b))
    out = np.where(np.isinf(a) | np.isinf(b), a == b, close)
    return bool(out) if out.ndim == 0 else out


def _stream(seed: int, group: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(group,))))


def resample_counts(
    n: int, *, seed: int, resamples: int = RESAMPLES, block_values: int = BLOCK_VALUES
) -> Iterator[tuple[int, np.ndarray]]:
    """Blocks of the resample weight matrix: ``(first row, counts)``.

    ``counts`` is a float64 array of shape (rows, n); row b holds how often each of the
    n examples was drawn in resample b (n draws with replacement). Rows b of a group of
    STREAM_ROWS are drawn one after the other from the group's own stream,
    ``SeedSequence(seed, spawn_key=(b // STREAM_ROWS,))``, so that a row does not depend
    on how rows are cut into blocks.
    """
    if n < 1:
        raise ValueError("a resample needs at least one example")
    rows = max(1, min(resamples, block_values // n))
    stream = None
    for start in range(0, resamples, rows):
        stop = min(resamples, start + rows)
        counts = np.empty((stop - start, n), dtype=np.float64)
        for row, b in enumerate(range(start, stop)):
            if b % STREAM_ROWS == 0:
                stream = _stream(seed, b // STREAM_ROWS)
            counts[row] = np.bincount(stream.integers(0, n, size=n), minlength=n)
        yield start, counts


def _finite_and_infinite(terms: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Terms with +inf replaced by 0, and the indicator of the +inf terms (None if none).

    A count of 0 times +inf is NaN in a matrix product; the infinite terms are tracked
    apart instead: a resample that draws one of them gets +inf (spec §5).
    """
    infinite = np.isposinf(terms)
    if np.isnan(terms).any() or np.isneginf(terms).any():
        raise ValueError("per-example terms must be finite or +inf")
    if not infinite.any():
        return terms, None
    return np.where(infinite, 0.0, terms), infinite


def resample(
    terms: Mapping[str, np.ndarray],
    *,
    seed: int,
    squared_errors: Mapping[str, np.ndarray] | None = None,
    targets: np.ndarray | None = None,
    variance: float | None = None,
    resamples: int = RESAMPLES,
) -> dict[str, np.ndarray]:
    """Every loss on every resample, for many entries at once.

    Parameters
    ----------
    terms
        Name → array of shape (n, k): the per-example terms of k entries under a mean
        loss (nlp, 01l, brier, nlpd, crps). The loss on resample b is
        ``L_b = (1/n) Σ_i W[b, i] · term_i``, +inf when the resample draws an infinite
        term.
    squared_errors
        Name (``nmse``) → array (n, k) of the squared errors (t − m)². On resample b,
        ``nmse_b = mean_b(se) / var_b(t)`` with var_b the variance (ddof = 0) of the
        *resampled* ``targets``, or the fixed ``variance`` (the training targets', as a
        dataset may ask). A resample whose targets are all equal has no nmse: +inf.
    seed
        The (dataset, split)'s seed: the same resamples for every entry.

    Returns
    -------
    Name → array (k, B) of the loss of each entry on each resample.
    """
    squared_errors = squared_errors or {}
    shapes = {array.shape[0] for array in [*terms.values(), *squared_errors.values()]}
    if len(shapes) != 1:
        raise ValueError(f"every array needs the same number of examples, found {sorted(shapes)}")
    [n] = shapes
    if squared_errors and targets is None and variance is None:
        raise ValueError("nmse needs the targets or a fixed variance")
    prepared = {}
    for name, array in [*terms.items(), *squared_errors.items()]:
        array = np.asarray(array, dtype=np.float64)
        prepared[name] = _finite_and_infinite(array.reshape(n, -1))
    if targets is not None:
        # Centred once on the full sample's mean: the resampled variance is then
        # E_b[d²] − E_b[d]², where E_b[d] is small and cancellation cannot bite.
        t = np.asarray(targets, dtype=np.float64)
        centred = np.stack([t - t.mean(), (t - t.mean()) ** 2], axis=1)
    out = {name: np.empty((array.shape[1], resamples)) for name, (array, _) in prepared.items()}
    for start, counts in resample_counts(n, seed=seed, resamples=resamples):
        stop = start + counts.shape[0]
        if squared_errors and variance is None:
            moments = counts @ centred / n
            block_variance = np.maximum(moments[:, 1] - moments[:, 0] ** 2, 0.0)
        for name, (finite, infinite) in prepared.items():
            means = (counts @ finite / n).T
            if infinite is not None:
                drawn = (counts @ infinite.astype(np.float64)).T > 0
                means[drawn] = np.inf
            if name in squared_errors:
                divisor = variance if variance is not None else block_variance
                with np.errstate(divide="ignore", invalid="ignore"):
                    means = np.where(divisor > 0, means / divisor, np.inf)
            out[name][:, start:stop] = means
    return out


def percentiles(values: np.ndarray, q: tuple[float, ...]) -> np.ndarray:
    """Percentiles of the last axis by numpy's default (linear) method, +inf sorting last.

    Between a finite neighbour and +inf the result is +inf (and −inf below), where numpy
    would give NaN from ∞ − ∞; between −inf and +inf it is NaN (no interval).
    Returns an array of shape ``values.shape[:-1] + (len(q),)``.
    """
    ordered = np.sort(np.asarray(values, dtype=np.float64), axis=-1)
    size = ordered.shape[-1]
    out = []
    for percentile in q:
        position = (size - 1) * percentile / 100
        below = int(np.floor(position))
        above = min(below + 1, size - 1)
        weight = position - below
        a, b = ordered[..., below], ordered[..., above]
        with np.errstate(invalid="ignore"):
            difference = b - a
            # numpy's _lerp: from the nearer end, so that the result lies between a and b.
            value = a + difference * weight if weight < 0.5 else b - difference * (1 - weight)
        value = np.where(a == b, a, value)
        if weight > 0:
            value = np.where(np.isposinf(b) & ~np.isneginf(a), np.inf, value)
            value = np.where(np.isneginf(a) & ~np.isposinf(b), -np.inf, value)
        out.append(value)
    return np.stack(out, axis=-1)


def intervals(values: np.ndarray) -> np.ndarray:
    """The 95 % interval [2.5th, 97.5th percentile] of each row of ``values`` (k, B)."""
    return percentiles(values, (LOWER_PERCENTILE, UPPER_PERCENTILE))


def differences(values: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """values − reference on each resample (rows of ``values`` against one row).

    Where both are +inf on a resample the two entries are equally (infinitely) bad
    there: the difference is 0, not NaN. Where the two are the same score (``same``:
    within TIE_RTOL relative, the rounding of their sums) the difference is 0 too, so
    that truly tied entries get the interval [0, 0], and hold 0, rather than
    [1e-13, 3e-13].
    """
    values = np.asarray(values, dtype=np.float64)
    reference = np.asarray(reference, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        out = values - reference
    return np.where(same(values, reference), 0.0, out)


def contains_zero(interval: np.ndarray) -> np.ndarray:
    """Whether each [lo, hi] contains 0: the entries cannot be told apart."""
    interval = np.asarray(interval)
    return (interval[..., 0] <= 0) & (interval[..., 1] >= 0)


def ranks(values: np.ndarray) -> np.ndarray:
    """Rank of each row on each resample (column): 1 = lowest loss; ties share the
    better rank: 1 + the number of values lower by more than the tie tolerance,
    ``#{u : u < v − TIE_RTOL · |v|}`` (``same``). Shape (k, B), int.

    The threshold uses |v| where ``same`` uses max(|u|, |v|); they differ only for a
    negative u, by TIE_RTOL² · |v|, far below a float64's resolution.
    """
    values = np.asarray(values, dtype=np.float64)
    ordered = np.sort(values, axis=0)
    # Infinite values keep their own value as threshold (∞ − ∞ would be NaN): +inf ranks
    # after every finite value and ties with the other +inf.
    with np.errstate(invalid="ignore"):
        thresholds = np.where(np.isfinite(values), values - TIE_RTOL * np.abs(values), values)
    out = np.empty(values.shape, dtype=np.int64)
    for b in range(values.shape[1]):
        out[:, b] = np.searchsorted(ordered[:, b], thresholds[:, b], side="left") + 1
    return out


def rank_intervals(values: np.ndarray) -> np.ndarray:
    """Rank interval of each row: [⌊2.5th percentile⌋, ⌈97.5th percentile⌉] of its ranks
    over the resamples (spec §5). Shape (k, 2), int."""
    if values.shape[0] == 0:
        return np.empty((0, 2), dtype=np.int64)
    bounds = percentiles(ranks(values).astype(np.float64), (LOWER_PERCENTILE, UPPER_PERCENTILE))
    return np.stack([np.floor(bounds[:, 0]), np.ceil(bounds[:, 1])], axis=1).astype(np.int64)
