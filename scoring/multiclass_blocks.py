"""The multiclass summary of a file summed block by block while it is read.

The reader (scoring.multiclass_parse) normalises each block of rows on a second thread
while the next block is parsed; that thread then also runs the summary's C kernel
(``multiclass_sums``: every sum behind nlp, brier, 01l, ece, rmsce and sce) on the rows it
has just written, so that the summary is ready when the file is read instead of taking a
second pass over n × L probabilities afterwards. The blocks' sums are merged with
compensation (counts add exactly). Whenever the kernel cannot take a block (a block
written out of order by the careful path, rows decided on exact fractions, no C
extension), :meth:`SummaryBlocks.finish` gives None and :func:`scoring.multiclass.summarize`
computes the summary from the whole file as before: the same values to rounding.
"""

from __future__ import annotations

import math

import numpy as np

from . import _accel
from .classification import ECE_BINS
from .multiclass_summary import KERNEL_CLASSES, MulticlassSummary, Neumaier


class SummaryBlocks:
    """Sums of the rows [start, start + rows) added in any order, each row once.

    ``labels``: the n class indices (int64, checked by the target reader); ``classes``: L.
    """

    def __init__(self, labels: np.ndarray, classes: int, *, n_bins: int = ECE_BINS):
        self.native = _accel.native()
        self.ok = self.native is not None and classes <= KERNEL_CLASSES
        self.labels = np.ascontiguousarray(labels, dtype=np.int64)
        n = self.labels.size
        self.classes, self.n_bins = classes, n_bins
        self.predicted = np.empty(n, dtype=np.int32)
        self.nll_terms, self.brier_rows = np.empty(n), np.empty(n)
        # The retention's keys (spec §8), written by the kernel while each row is at hand.
        self.confidence, self.confidence_sides = np.empty(n), np.empty(n, dtype=np.float32)
        self.top, self.classwise = Neumaier((n_bins, 3)), Neumaier((classes, n_bins, 3))
        self.nll: list[float] = []
        self.brier: list[float] = []
        self.errors, self.point, self.covered = 0, True, 0

    def add(self, start: int, probs: np.ndarray, resid: np.ndarray | None) -> None:
        """The sums of rows ``start`` … of the file: ``probs`` (rows × L, normalised) and
        their sides ``resid`` (as :func:`scoring.multiclass.summarize` takes them)."""
        stop = start + probs.shape[0]
        if not self.ok or stop > self.labels.size or probs.shape[0] == 0:
            self.ok = self.ok and probs.shape[0] == 0
            return
        top, classwise = np.empty((self.n_bins, 3)), np.empty((self.classes, self.n_bins, 3))
        rows = slice(start, stop)
        sums = self.native.multiclass_sums(
            probs, self.labels[rows], self.classes, self.n_bins, self.predicted[rows],
            self.nll_terms[rows], self.brier_rows[rows], top, classwise, resid,
            self.confidence[rows], self.confidence_sides[rows],
        )  # fmt: skip
        if sums is None:  # (a row the kernel refuses: the whole-file path says what)
            self.ok = False
            return
        nll, brier, errors, point = sums
        self.nll.append(nll)
        self.brier.append(brier)
        self.errors += errors
        self.point = self.point and bool(point)
        self.top.add(top)
        self.classwise.add(classwise)
        self.covered += stop - start

    def rows_of(self, rows: slice) -> tuple[np.ndarray, ...]:
        """The arrays :meth:`add` writes for ``rows`` (to be made resident beforehand)."""
        return tuple(
            array[rows]
            for array in (
                self.predicted,
                self.nll_terms,
                self.brier_rows,
                self.confidence,
                self.confidence_sides,
            )
        )

    def abandon(self) -> None:
        """The summary will come from the whole file instead."""
        self.ok = False

    def finish(self) -> MulticlassSummary | None:
        """The summary of every row, or None when some row was not summed here."""
        if not self.ok or self.covered != self.labels.size:
            return None
        nll = math.inf if any(math.isinf(x) for x in self.nll) else math.fsum(self.nll)
        return MulticlassSummary(
            self.labels.size, self.classes, nll, math.fsum(self.brier), self.errors,
            self.point, self.top.value(), self.classwise.value(), self.predicted,
            self.nll_terms, self.brier_rows, self.labels,
            confidence=self.confidence, confidence_sides=self.confidence_sides,
        )  # fmt: skip
