"""A valid regression prediction file: per-example statistics and every row as written.

The losses of spec §3 need four statistics per example (:class:`~scoring.distributions.Stats`,
computed while the file is read); §8's retention keys and quantile scores and §9's plug-ins
need more of each row: its variance, its quantiles at any levels, its CDF at any point. So
:class:`RegressionRows` keeps the rows themselves, in the groups the reader scored them in
(rows of one type and one size, as 2-D arrays: no copy of what the reader already made),
and answers those questions group by group, vectorised.

The mean is exact (:mod:`scoring.moments`): ``stats.mean + mean_lo`` is each row's mean in
double-double, within 4.7e-10 of it and within (N + 8)ε of the row's spread, and
t − m (:meth:`RegressionRows.residuals`) recomputes the means it needs exactly, so that it
stays exact where m is 1e9 and t − m is 1e-7.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from . import moments, row_quantiles
from .dd import two_sum
from .distributions import Stats

GAUSSIAN, QUANTILES, SAMPLE = 1, 0, 2
_ARENA_BYTES = 1 << 26  # 64 MiB
_RESIDUAL = 2.0**-34  # refine a residual whose mean's error bound is above this share of it
_EXACT = 2.0**-60  # a residual this far below its row's terms is computed as a rational


@dataclass
class Group:
    """Rows of one type and size: their example indices and their numbers.

    Gaussian: ``first`` the means, ``second`` the variances (n,). Quantiles: ``first`` the
    levels, ``second`` the values (n × N). Samples: ``first`` the sorted sample (n × K),
    ``second`` None.
    """

    kind: int
    index: np.ndarray
    first: np.ndarray
    second: np.ndarray | None

    def take(self, rows: np.ndarray, index: np.ndarray) -> Group:
        second = None if self.second is None else self.second[rows]
        return Group(self.kind, index, self.first[rows], second)


@dataclass
class RegressionRows:
    """Per-example statistics and rows of a valid regression prediction file.

    ``RegressionRows(kind, variance, stats)`` without groups is a file of Gaussian rows
    (the baseline's): their means and variances are the groups.
    """

    kind: np.ndarray  # QUANTILES, GAUSSIAN or SAMPLE per example
    variance: np.ndarray  # Gaussian rows' variance, nan for other rows
    stats: Stats
    groups: list[Group] | None = None
    mean_lo: np.ndarray | None = None  # stats.mean + mean_lo: the mean in double-double
    mean_err: np.ndarray | None = None  # a bound on its error (scoring.moments' fast path)
    _where: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)

    def __post_init__(self):
        n = self.kind.size
        if self.mean_lo is None:
            self.mean_lo = np.zeros(n)
        if self.mean_err is None:
            self.mean_err = np.zeros(n)
        if self.groups is None:
            if n and not (self.kind == GAUSSIAN).all():
                raise ValueError("RegressionRows without groups holds Gaussian rows only")
            self.groups = [Group(GAUSSIAN, np.arange(n), self.stats.mean, self.variance)]

    @property
    def n(self) -> int:
        return self.kind.size

    @property
    def has_samples(self) -> bool:
        return bool((self.kind == SAMPLE).any())

    @property
    def is_point(self) -> bool:
        """Every row a zero-variance Gaussian: a non-probabilistic submission."""
        return bool((self.kind == GAUSSIAN).all() and (self.variance == 0).all())

    def subset(self, mask: np.ndarray) -> RegressionRows:
        """The rows where the boolean ``mask`` is True, or the rows at the integer
        positions ``mask`` (in that order, repeats allowed: a bootstrap resample)."""
        take = np.asarray(mask)
        if take.dtype == bool:
            take = np.flatnonzero(take)
        group_of, slot = self._locate()
        group_of, slot = group_of[take], slot[take]
        groups = []
        for g, group in enumerate(self.groups):
            sel = np.flatnonzero(group_of == g)
            if sel.size:
                groups.append(group.take(slot[sel], sel))
        return RegressionRows(
            self.kind[take],
            self.variance[take],
            self.stats.take(take),  # (with the PIT intervals' lower ends)
            groups,
            self.mean_lo[take],
            self.mean_err[take],
        )

    def _locate(self) -> tuple[np.ndarray, np.ndarray]:
        """Each example's group and its row in that group."""
        if self._where is None:
            group_of = np.full(self.n, -1, dtype=np.intp)
            slot = np.zeros(self.n, dtype=np.intp)
            for g, group in enumerate(self.groups):
                group_of[group.index] = g
                slot[group.index] = np.arange(group.index.size)
            self._where = (group_of, slot)
        return self._where

    def residuals(self, targets) -> np.ndarray:
        """t_i − m_i, exact to about 2**-34 of itself (spec §3: exact squared errors).

        From the double-double mean; where its error bound (``mean_err``, the fast path of
        :mod:`scoring.moments`) is not far below |t − m| (a target close to a mean of much
        larger terms), that row's mean is recomputed exactly from the row itself.
        """
        t = np.asarray(targets, dtype=np.float64)
        hi, lo = self.stats.mean, self.mean_lo
        out = _subtract(t, hi, lo)
        refine = np.flatnonzero(self.mean_err > _RESIDUAL * np.abs(out))
        if refine.size:
            hi, lo = hi.copy(), lo.copy()
            for kind, where, first, second in self._gather(refine):
                if kind == SAMPLE:
                    hi[where], lo[where] = moments.exact_sample_mean(first)
                else:
                    hi[where], lo[where] = moments.exact_quantile_mean(first, second)
            out[refine] = _subtract(t[refine], hi[refine], lo[refine])
        return self._exact_residuals(t, out)

    def _exact_residuals(self, t, out) -> np.ndarray:
        """Rows whose residual is below 2**-60 of their largest mean term (a target on the
        double nearest the mean of ``0 0.1 -1e100 0.9 1e100``, −4.2e83 from terms of 1e100:
        t − m ≈ 1e67 is beyond even the exact path's double-double) get t − m from the
        mean as an exact rational, each distinct (row, target) once."""
        for group in self.groups:
            if group.kind == GAUSSIAN:
                continue
            kind, where, first, second = group.kind, group.index, group.first, group.second
            close = np.abs(out[where]) < _EXACT * moments.term_scale(kind == SAMPLE, first, second)
            if not close.any():
                continue
            rows = first[close] if kind == SAMPLE else np.hstack([first[close], second[close]])
            rows = np.column_stack([rows, t[where[close]]])
            unique, inverse = np.unique(rows, axis=0, return_inverse=True)
            width = first.shape[1]
            exact = np.empty(unique.shape[0])
            for u, row in enumerate(unique):
                if kind == SAMPLE:
                    m = moments.exact_sample_mean_fraction(row[:-1])
                else:
                    m = moments.exact_quantile_mean_fraction(row[:width], row[width:-1])
                exact[u] = _to_double(Fraction(float(row[-1])) - m)
            out[where[close]] = exact[np.ravel(inverse)]
        return out

    def _gather(self, rows: np.ndarray):
        """The quantile and sample rows among ``rows``, gathered by type and width (one
        vectorised call each, however many blocks the reader scored them in): yields
        (kind, example indices, first, second)."""
        group_of, slot = self._locate()
        batches = {}
        for g, group in enumerate(self.groups):
            if group.kind == GAUSSIAN:
                continue
            i = rows[group_of[rows] == g]
            if i.size:
                key = (group.kind, group.first.shape[1])
                second = None if group.second is None else group.second[slot[i]]
                batches.setdefault(key, []).append((i, group.first[slot[i]], second))
        for (kind, _), parts in batches.items():
            where = np.concatenate([p[0] for p in parts])
            first = np.concatenate([p[1] for p in parts])
            second = None if kind == SAMPLE else np.concatenate([p[2] for p in parts])
            yield kind, where, first, second

    def predictive_variance(self, remainder: bool = False):
        """§8's variance of every row: v for a Gaussian (0 for a point prediction), the
        population variance of a sample, the variance of §2's distribution for quantiles
        (:func:`scoring.moments.quantile_variance`); inf where it exceeds the largest
        double.

        With ``remainder`` a pair (hi, lo) of (n,) arrays ordering the rows as their exact
        variances do, compared hi first (§8's retention keys): rows whose double could tie
        or misorder them with another row's (:func:`scoring.moments.ambiguous`) get hi the
        exact variance's nearest double and lo the remainder's (equal exact variances,
        equal pairs); the others their double and lo = 0."""
        out = self._variance()
        if not remainder:
            return out
        lo = np.zeros(self.n)
        # (a fast variance of 0 is exact: a sample of equal values)
        redo = moments.ambiguous(out, (self.kind == GAUSSIAN) | (out == 0))
        if redo.any():
            for group in self.groups:
                if group.kind == GAUSSIAN:
                    continue
                take = np.flatnonzero(redo[group.index])
                if take.size:
                    self._refine_variances(group, take, out, lo)
        return out, lo

    @staticmethod
    def _refine_variances(group, take, hi, lo) -> None:
        """Exact variances (as rationals) of the group's rows ``take``, once per distinct
        shape: rows whose values differ from their first by the same exact amounts (a row
        and its shifted copies, TwoSum differences) share one variance."""
        first = group.first[take]
        values = first if group.kind == SAMPLE else group.second[take]
        dh, dl = two_sum(values, -values[:, :1])
        shape = np.hstack([dh, dl] if group.kind == SAMPLE else [first, dh, dl])
        _, pick, inverse = np.unique(shape, axis=0, return_index=True, return_inverse=True)
        pairs = []
        for r in pick.tolist():
            if group.kind == SAMPLE:
                value = moments.exact_sample_variance(values[r])
            else:
                value = moments.exact_quantile_variance(first[r], values[r])
            pairs.append(moments.split_exact(value))
        pairs = np.array(pairs, dtype=np.float64).reshape(-1, 2)[np.ravel(inverse)]
        hi[group.index[take]], lo[group.index[take]] = pairs[:, 0], pairs[:, 1]

    def _variance(self) -> np.ndarray:
        out = np.empty(self.n)
        for group in self.groups:
            i = group.index
            if group.kind == GAUSSIAN:
                out[i] = group.second
            elif group.kind == SAMPLE:
                out[i] = moments.sample_variance(group.first)
            else:
                out[i] = moments.quantile_variance(group.first, group.second)
        return out

    def quantiles(self, levels, scale: float = 1.0) -> np.ndarray:
        """Every row read at the levels 0 < α_1 < … < α_K < 1 as §8 says
        (:mod:`scoring.row_quantiles`): an (n, K) array; ±inf past the largest double.

        ``scale`` (a power of two) reads every row with its values times it, exactly the
        readings times it: 2**-64 gives readings past the largest double (a quantile
        row's tail scale bN may pass it) as finite numbers."""
        levels = np.atleast_1d(np.asarray(levels, dtype=np.float64))
        if levels.ndim != 1 or not ((levels > 0) & (levels < 1)).all():
            raise ValueError(f"quantile levels must lie strictly between 0 and 1: {levels}")
        out = np.empty((self.n, levels.size))
        for group in self.groups:
            i = group.index
            if group.kind == GAUSSIAN:
                out[i] = row_quantiles.gaussian_quantiles(group.first, group.second, levels)
                out[i] *= scale
            elif group.kind == SAMPLE:
                out[i] = row_quantiles.sample_quantiles(group.first, levels) * scale
            else:
                q = group.second if scale == 1.0 else group.second * scale
                out[i] = row_quantiles.quantile_row_quantiles(group.first, q, levels)
        return out

    def cdf(self, x) -> np.ndarray:
        """F_i(x_i) for n points x: Φ, §2's CDF, the empirical #{s ≤ x}/K, or 1{x ≥ m} for
        a point prediction."""
        x = np.asarray(x, dtype=np.float64)
        if x.shape != (self.n,):
            raise ValueError(f"cdf needs one point per row ({self.n}), got shape {x.shape}")
        out = np.empty(self.n)
        for group in self.groups:
            i = group.index
            if group.kind == GAUSSIAN:
                out[i] = row_quantiles.gaussian_cdf(group.first, group.second, x[i])
            elif group.kind == SAMPLE:
                out[i] = row_quantiles.sample_cdf(group.first, x[i])
            else:
                out[i] = row_quantiles.quantile_row_cdf(group.first, group.second, x[i])
        return out


def _to_double(value: Fraction) -> float:
    """The nearest double to a rational, ±inf beyond the largest."""
    try:
        return float(value)
    except OverflowError:
        return np.inf if value > 0 else -np.inf


def _subtract(t, hi, lo) -> np.ndarray:
    """t − (hi + lo) rounded once; t − hi where hi is ±inf (a mean beyond the largest
    double), without a warning."""
    finite = np.isfinite(hi)
    d, e = two_sum(t, -np.where(finite, hi, 0.0))
    out = d + (e - lo)
    out[~finite] = t[~finite] - hi[~finite]
    return out


class Arena:
    """Where a reader puts the rows it keeps: large arrays per (part, width), filled in
    order, so that a file's rows live in a few allocations that the system backs with
    huge pages, rather than in one fresh allocation per block (a page fault every 4 KiB:
    ~15 % of reading a 20,000 × 200-pair file).

    A new array holds about 1.1 times the rows that this block's share predicts for the
    whole file (n rows in all), so a file of one layout allocates once and a mixed one
    wastes at most a tenth plus one partial array per (part, width); no array passes
    64 MiB (nor the rows of one block).
    """

    def __init__(self, n: int):
        self.n = n
        self.open: dict[tuple[str, int], tuple[np.ndarray, int]] = {}

    def take(self, part: str, width: int, m: int, block_rows: int) -> np.ndarray:
        """An uninitialised (m, width) view for ``m`` rows of a block of ``block_rows``."""
        buf, used = self.open.get((part, width), (None, 0))
        if buf is None or used + m > buf.shape[0]:
            predicted = -(-11 * m * self.n // (10 * max(block_rows, 1)))
            cap = _ARENA_BYTES // (8 * max(width, 1))  # (a bound on any one allocation)
            buf, used = np.empty((max(m, min(self.n, predicted, cap)), width)), 0
        self.open[(part, width)] = (buf, used + m)
        return buf[used : used + m]
