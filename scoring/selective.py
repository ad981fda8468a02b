"""Selective prediction (spec §8): how well an uncertainty estimate tells good predictions
from bad ones.

Order the n examples from the most to the least certain (each task says by what key:
``TaskSpec.retention_inputs``) and let E(k) be the errors accrued by the first k of them.
Examples with equal keys form a run, and inside a run the errors accrue evenly (as
``lift`` breaks ties), so that no order of the lines matters: a run of L examples after s
others, holding errors R in all, has E(s + j) = E(s) + R·j/L for j = 1 … L. Then

- ``rauc`` = (1/n) Σ_{k=1..n} E(k)/n, the area under the retention curve: the rejected
  examples are handed to an oracle that makes no error (Malinin et al., "Shifts: A Dataset
  of Real Distributional Shift Across Multiple Large-Scale Tasks", NeurIPS 2021);
- ``aurc`` = (1/n) Σ_{k=1..n} E(k)/k, the area under the risk–coverage curve (Geifman,
  Uziel & El-Yaniv, "Bias-Reduced Uncertainty Estimation for Deep Neural Classifiers",
  ICLR 2019).

Both are lower-is-better and have no per-example terms (no interval, spec §5). Every sum
below is of non-negative terms (errors are ≥ 0), so no cancellation can bite; the running
sums are compensated in blocks, so E(k) is good to about 1e-12 relative whatever n is.
"""

from __future__ import annotations

import math

import numpy as np

from . import _accel

SHIFTS = "Malinin et al., Shifts: a dataset of real distributional shift, NeurIPS 2021"
GEIFMAN = "Geifman, Uziel & El-Yaniv, Bias-reduced uncertainty estimation, ICLR 2019"
# Sides (scoring.multiclass_rows.ClassRows.resid: (exact − p)/p · 2^180) below 2^-96 of
# p, beyond what the double-double normalisation resolves, are taken as 0 by the keys.
SIDE_NOISE = 2.0**84
# Points of the retention and risk–coverage curves kept for the site's pictures.
CURVE_POINTS = 200
# Up to this many examples the runs are kept from the pass that sums the areas (16 bytes
# of scratch per example, 2 MiB here), so that the curves (plot_of, drawn for every entry
# the site scores) do not sort the keys again; above it a scoring run keeps no n-long
# array of them and the curves find them again only when asked for.
RUNS_KEPT_UP_TO = 1 << 17
# Running sums are exact within blocks of this many values up to (block · 2^-53) relative,
# and the block totals are added with Neumaier's compensation.
_BLOCK = 4096


class Retention:
    """The examples in order of certainty, as runs of equal keys.

    ``n`` examples; run r holds ``lengths[r]`` examples after ``starts[r]`` others and
    errors ``totals[r]`` in all (≥ 0); ``before[r]`` = E(starts[r]), the errors of the runs
    before it. ``errors``: every error, in line order (the oracle's order is theirs sorted,
    :attr:`sorted_errors`, only when the curves are drawn). Every error is in units of
    ``unit``² (a power of two: regression's squared errors are scaled so that none
    overflows while an area of them is finite), restored in :meth:`rauc`, :meth:`aurc` and
    :meth:`curves`.

    With the C kernel the two areas are summed while the runs are found; the runs
    themselves (for the curves alone) are kept from that pass up to
    :data:`RUNS_KEPT_UP_TO` examples, and above it found again only when asked for: a
    large scoring run keeps no n-long array of them.
    """

    def __init__(self, errors: np.ndarray, columns: list[np.ndarray], *, ascending: bool, unit):
        self.n, self.errors, self.unit = errors.size, errors, float(unit)
        self._columns, self._ascending = columns, ascending
        self._areas: tuple[float, float] | None = None  # (Σ_k E(k), Σ_k E(k)/k)
        self._runs: tuple[np.ndarray, ...] | None = None
        native = _accel.native()
        if native is not None and len(columns) <= 2:
            if self.n <= RUNS_KEPT_UP_TO:  # the runs too, in the same pass
                starts, totals = np.empty(self.n, dtype=np.intp), np.empty(self.n)
                runs, accrued, over_k = native.sorted_runs(*self._kernel_args(), starts, totals)
                self._runs = self._as_runs(starts[:runs].copy(), totals[:runs].copy())
            else:
                _, accrued, over_k = native.sorted_runs(*self._kernel_args(), None, None)
            self._areas = (accrued, over_k)
        else:
            self._runs = self._find_runs()

    def _kernel_args(self):
        primary = self._columns[0]
        secondary = self._columns[1] if len(self._columns) == 2 else None
        return primary, secondary, self.errors, not self._ascending

    def _find_runs(self) -> tuple[np.ndarray, ...]:
        return self._as_runs(*_runs(self._columns, self.errors, ascending=self._ascending))

    def _as_runs(self, starts: np.ndarray, totals: np.ndarray) -> tuple[np.ndarray, ...]:
        before = np.concatenate([[0.0], _prefix(totals)[:-1]])
        return starts.astype(np.float64), np.diff(starts, append=self.n), totals, before

    def _runs_found(self) -> tuple[np.ndarray, ...]:
        if self._runs is None:
            self._runs = self._find_runs()
        return self._runs

    @property
    def starts(self) -> np.ndarray:
        return self._runs_found()[0]

    @property
    def lengths(self) -> np.ndarray:
        return self._runs_found()[1]

    @property
    def totals(self) -> np.ndarray:
        return self._runs_found()[2]

    @property
    def before(self) -> np.ndarray:
        return self._runs_found()[3]

    @property
    def sorted_errors(self) -> np.ndarray:
        """Every error, ascending: the oracle's order."""
        return np.sort(self.errors)

    @property
    def total(self) -> float:
        """E(n): every error."""
        return float(self.before[-1] + self.totals[-1]) if self.n else 0.0

    def accrued(self) -> np.ndarray:
        """E(k) for k = 1 … n (float64, n values)."""
        run = np.repeat(np.arange(self.lengths.size), self.lengths)
        k = np.arange(1, self.n + 1, dtype=np.float64)
        share = (k - self.starts[run]) / self.lengths[run]
        return self.before[run] + self.totals[run] * share

    def rauc(self) -> float:
        """(1/n²) Σ_k E(k). A run's errors count (k − s)/L for its own positions and fully
        for the n − s − L after it: Σ_k E(k) = Σ_r R_r·(n − s_r − (L_r − 1)/2), a sum of
        non-negative terms with exact weights (or the kernel's compensated Σ_k E(k))."""
        n = self.n
        if self._areas is not None:
            return self._restore(self._areas[0] / n / n)
        weights = n - self.starts - (self.lengths - 1) / 2.0
        return self._restore(_sum(self.totals * weights) / n / n)

    def aurc(self) -> float:
        """(1/n) Σ_k E(k)/k."""
        if self._areas is not None:
            return self._restore(self._areas[1] / self.n)
        k = np.arange(1, self.n + 1, dtype=np.float64)
        return self._restore(_sum(self.accrued() / k) / self.n)

    def _restore(self, value):
        """A value in units of ``unit``² in plain units: +inf only where it exceeds the
        largest double (two exact multiplications by a power of two, so 0 stays 0)."""
        if self.unit == 1.0:
            return value
        with np.errstate(over="ignore"):
            return value * self.unit * self.unit

    def curves(self, points: int = CURVE_POINTS) -> dict:
        """The retention and risk–coverage curves of the model, the oracle (errors
        ascending: the best any ordering can do) and a random ordering (every key equal:
        E(k) = k·E(n)/n), at up to ``points`` coverages k/n spread evenly over (0, 1] (every
        k when n ≤ points). Retention: E(k)/n; risk: E(k)/k. JSON-ready floats, and each
        curve's area: ``rauc`` and ``aurc`` of model, oracle and random."""
        n = self.n
        k = np.unique(np.ceil(np.arange(1, min(points, n) + 1) * (n / min(points, n))))
        k = np.clip(k, 1, n).astype(np.intp)
        model = self.accrued()
        oracle = _prefix(self.sorted_errors)
        total = self.total
        kf = k.astype(np.float64)
        mean = total / n
        restore = self._restore
        return {
            "coverage": (kf / n).tolist(),
            "model": restore(model[k - 1] / n).tolist(),
            "oracle": restore(oracle[k - 1] / n).tolist(),
            "random": restore(kf * mean / n).tolist(),
            "risk_model": restore(model[k - 1] / kf).tolist(),
            "risk_oracle": restore(oracle[k - 1] / kf).tolist(),
            "risk_random": [float(restore(mean))] * k.size,
            "rauc": {
                "model": self.rauc(),
                "oracle": float(restore(_sum(oracle) / n / n)),
                # Every key equal (one run): Σ_k E(k) = E(n)·(n + 1)/2.
                "random": float(restore(total * (n + 1) / (2.0 * n * n))),
            },
            "aurc": {
                "model": self.aurc(),
                "oracle": float(restore(_sum(oracle / np.arange(1, n + 1)) / n)),
                "random": float(restore(mean)),  # (E(k)/k = E(n)/n at every k)
            },
        }


def retention(errors, keys, *, ascending: bool, unit: float = 1.0) -> Retention:
    """The :class:`Retention` of examples with ``errors`` (n values ≥ 0, +inf where one
    exceeds the largest double; in units of ``unit``², a power of two) ordered by
    ``keys``: ascending (regression: the predictive variance) or not (classification: the
    confidence). ``keys`` is n values, or n × m values (or a tuple of m arrays of n)
    compared column by column, the first deciding (an exact confidence as a double and the
    side its exact value lies on).
    Examples whose keys are equal in every column form one run."""
    errors = np.ascontiguousarray(errors, dtype=np.float64)
    n = errors.size
    if isinstance(keys, tuple):  # columns given apart: no n × m copy
        columns = [np.ascontiguousarray(column, dtype=np.float64) for column in keys]
    else:
        keys = np.asarray(keys, dtype=np.float64)
        columns = (
            [np.ascontiguousarray(keys)] if keys.ndim == 1 else list(np.ascontiguousarray(keys.T))
        )
    if errors.ndim != 1 or not columns or any(c.shape != (n,) for c in columns):
        shapes = [c.shape for c in columns]
        raise ValueError(f"expected n errors and n keys (or n × m), got {errors.shape}, {shapes}")
    if n == 0:
        raise ValueError("retention needs at least one example")
    if not (errors >= 0).all():  # (NaN too)
        raise ValueError("errors must be non-negative numbers")
    if any(np.isnan(column).any() for column in columns):
        raise ValueError("keys must not be NaN")
    return Retention(errors, columns, ascending=ascending, unit=unit)


def _runs(columns: list[np.ndarray], errors: np.ndarray, *, ascending: bool):
    """(starts, totals) of the runs of equal keys in order: each run's first position and
    the sum of its errors. The C kernel ``sorted_runs`` (a radix sort of the first column,
    the second only inside ties: about 30 ms for a million examples) takes up to two key
    columns; otherwise numpy's stable sorts."""
    n = errors.size
    native = _accel.native()
    if native is not None and len(columns) <= 2:
        primary = columns[0]
        secondary = columns[1] if len(columns) == 2 else None
        starts, totals = np.empty(n, dtype=np.intp), np.empty(n)
        runs, _, _ = native.sorted_runs(primary, secondary, errors, not ascending, starts, totals)
        return starts[:runs].copy(), totals[:runs].copy()
    columns = np.column_stack(columns)
    order = lexicographic_order(columns)
    if not ascending:
        order = order[::-1]  # (runs reversed whole: the order inside a run does not matter)
    ranked = columns[order]
    new_run = np.empty(n, dtype=bool)
    new_run[0] = True
    np.any(ranked[1:] != ranked[:-1], axis=1, out=new_run[1:])  # (−0.0 == 0.0: one run)
    starts = np.flatnonzero(new_run)
    return starts, np.add.reduceat(errors[order], starts)


def stable_order(keys: np.ndarray) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` of float64 keys (no NaN; -0.0 equal to 0.0),
    by the C kernel's radix sort when it is built: no comparison, about 15 ms for a million
    keys where numpy's stable argsort takes several times that."""
    keys = np.ascontiguousarray(keys, dtype=np.float64)
    native = _accel.native()
    if native is None:
        return np.argsort(keys, kind="stable")
    order = np.empty(keys.size, dtype=np.intp)
    native.radix_argsort(keys, order)
    return order


def lexicographic_order(columns: np.ndarray) -> np.ndarray:
    """The rows of ``columns`` (n × m) in ascending order, compared column by column, the
    first deciding, ties kept in line order (as ``np.lexsort`` on the reversed columns):
    stable sorts from the last column to the first, each composed with the last, and the
    later columns only where the first ties somewhere."""
    order = stable_order(columns[:, 0])
    ranked = columns[order, 0]
    if columns.shape[1] == 1 or not (ranked[1:] == ranked[:-1]).any():
        return order
    order = np.arange(columns.shape[0])
    for j in range(columns.shape[1] - 1, -1, -1):
        order = order[stable_order(columns[order, j])]
    return order


def squared(residuals) -> tuple[np.ndarray, float]:
    """Squared residuals r² as (errors, unit): in units of unit², unit the power of two at
    or above the largest |r|, so that no square overflows where r is finite (the mean of a
    quantile row with a far tail can be 1e300); an infinite r gives +inf."""
    r = np.asarray(residuals, dtype=np.float64)
    finite = np.isfinite(r).all()
    largest = float(np.max(np.abs(r))) if r.size and finite else 0.0
    if largest == 0:
        with np.errstate(over="ignore"):
            return r * r, 1.0
    unit = math.ldexp(1.0, math.frexp(largest)[1])
    scaled = r / unit
    return scaled * scaled, unit


def rauc(errors, keys, *, ascending: bool) -> float:
    """Retention AUC (spec §8): (1/n) Σ_k E(k)/n, ties in the keys broken in expectation."""
    return retention(errors, keys, ascending=ascending).rauc()


def aurc(errors, keys, *, ascending: bool) -> float:
    """Area under the risk–coverage curve (spec §8): (1/n) Σ_k E(k)/k, ties in the keys
    broken in expectation."""
    return retention(errors, keys, ascending=ascending).aurc()


def retention_of(ctx) -> Retention | None:
    """The :class:`Retention` of a scoring context (scoring.losses.Context), from its task's
    ``retention_inputs``, once per context (rauc, aurc and the plot data share it); None
    when the task has none."""

    def compute():
        inputs = ctx.spec.retention_inputs(ctx)
        if inputs is None:
            return None
        errors, keys, ascending, *unit = inputs
        found = retention(errors, keys, ascending=ascending, unit=unit[0] if unit else 1.0)
        del keys  # (a million examples: tens of MB of keys and sort scratch, given back)
        _accel.release_memory()
        return found

    return ctx.memo("retention", compute)


def register_losses(task: str, *, error: str, classification: bool) -> None:
    """Register ``rauc`` for ``task`` and, for a classification task, ``aurc`` (spec §8:
    no per-example terms, n/a for a non-probabilistic file); each task's module calls it
    with the words for its error and its ordering (``error``: e.g. "the errors left when
    the least confident examples are handed to an oracle")."""
    from .losses import register  # (the registry imports the tasks' rows, not this module)

    register(
        name="rauc",
        title="Retention AUC",
        task=task,
        probabilistic=True,
        compute=rauc_of,
        reference=f"{SHIFTS}; spec §8",
        description=f"Area under the retention curve: {error}, averaged over every share kept.",
    )
    if classification:
        register(
            name="aurc",
            title="Area under the risk–coverage curve",
            task=task,
            probabilistic=True,
            compute=aurc_of,
            reference=f"{GEIFMAN}; spec §8",
            description="The error rate of the most confident examples, averaged over every"
            " coverage.",
        )


def rauc_of(ctx) -> float | None:
    """``rauc`` of a scoring context (None: its task has no retention)."""
    found = retention_of(ctx)
    return None if found is None else found.rauc()


def aurc_of(ctx) -> float | None:
    """``aurc`` of a scoring context (None: its task has no retention)."""
    found = retention_of(ctx)
    return None if found is None else found.aurc()


def plot_of(ctx) -> dict | None:
    """The ``retention`` plot data of a scoring context (:meth:`Retention.curves`): None
    for a non-probabilistic file (whose rauc and aurc are n/a) or a task without retention."""
    found = None if ctx.is_point else retention_of(ctx)
    return None if found is None else found.curves()


def binary_confidence(p) -> tuple[np.ndarray, np.ndarray]:
    """Two key columns (n each) ordering binary predictions by their exact confidence max(p, 1 − p):
    p where p ≥ 0.5, else 1 − p as the double nearest the real number and the rest
    (Fast2Sum: exact, as |1| ≥ |p|). Comparing the pairs column by column compares the
    real confidences: p = 0.3 is surer than p = 0.7, as 1 − 0.3 exceeds the double 0.7."""
    p = np.asarray(p, dtype=np.float64)
    high = p >= 0.5
    hi = np.where(high, p, 1.0 - p)
    lo = np.where(high, 0.0, (1.0 - hi) - p)
    return hi, lo


def binary_errors(p, targets) -> np.ndarray:
    """1 − a_i: 1.0 where p ≥ 0.5 meets class −1 or p < 0.5 meets +1 (spec §3's ``ece``)."""
    p = np.asarray(p, dtype=np.float64)
    return ((p >= 0.5) != (np.asarray(targets) == 1)).astype(np.float64)


def _sum(values: np.ndarray) -> float:
    """Σ of non-negative values (numpy's pairwise sum: error about log2(n)·2^-53)."""
    return float(np.sum(values))


def _prefix(values: np.ndarray) -> np.ndarray:
    """Running sums of non-negative values, in blocks of :data:`_BLOCK` whose totals are
    added with Neumaier's compensation: about _BLOCK·2^-53 relative, whatever the length."""
    values = np.asarray(values, dtype=np.float64)
    out = np.empty(values.size)
    carry, compensation = 0.0, 0.0
    for start in range(0, values.size, _BLOCK):
        part = np.cumsum(values[start : start + _BLOCK])
        out[start : start + part.size] = part + (carry + compensation)
        total = float(part[-1])
        new = carry + total
        if math.isinf(new):  # (an infinite error: every later sum is +inf)
            carry, compensation = new, 0.0
            continue
        if abs(carry) >= abs(total):
            compensation += (carry - new) + total
        else:
            compensation += (total - new) + carry
        carry = new
    return out


__all__ = [
    "CURVE_POINTS",
    "GEIFMAN",
    "SHIFTS",
    "SIDE_NOISE",
    "Retention",
    "aurc",
    "aurc_of",
    "binary_confidence",
    "binary_errors",
    "plot_of",
    "rauc",
    "register_losses",
    "rauc_of",
    "retention",
    "retention_of",
    "squared",
]
