"""Multiclass losses on arrays (spec §7), shaped like scikit-learn metrics.

``probs`` is an n × L float64 array, row i the (normalised, member-averaged) probabilities
p_i of classes 0 … L−1, and ``y`` the n true classes (int, or float64 holding integers).
ŷ_i = argmax_k p_ik, the smallest such k on ties; c_i = p_i,ŷ_i; a_i = 1{ŷ_i = y_i}.

Every loss of a file comes from one pass (:func:`summarize`: the C kernel
``multiclass_sums`` when it is built, else numpy on blocks of rows; the same values to
rounding) except ``ace``, which needs each class's order (:func:`ace`). Bins are those of
:func:`scoring.classification.bin_index`: (m/15, (m+1)/15], the edges the doubles m/15.
References: Guo et al., "On Calibration of Modern Neural Networks", ICML 2017 (ECE);
Nixon et al., "Measuring Calibration in Deep Learning", CVPR Workshops 2019 (SCE, ACE);
Kumar, Liang & Ma, "Verified Uncertainty Calibration", NeurIPS 2019 (RMSCE).
"""

from __future__ import annotations

import math

import numpy as np

from .classification import ECE_BINS
from .multiclass_ace import ace_gaps
from .multiclass_plot import PICTURED_CLASSES as PICTURED_CLASSES  # (re-exported)
from .multiclass_plot import TOP_CONFUSIONS as TOP_CONFUSIONS
from .multiclass_plot import calibration_plot
from .multiclass_summary import KERNEL_CLASSES as KERNEL_CLASSES  # (re-exported)
from .multiclass_summary import MulticlassSummary as MulticlassSummary
from .multiclass_summary import _brier_rows, _check, _labels, _nll, _probs, _resid, _true
from .multiclass_summary import is_one_hot as is_one_hot
from .multiclass_summary import summarize as summarize
from .multiclass_summary import summarize_numpy as summarize_numpy


def predicted_class(probs) -> np.ndarray:
    """ŷ_i = argmax_k p_ik, the smallest such k on ties (so (0.5, 0.5) predicts class 0)."""
    return np.argmax(_probs(probs), axis=1)


def nlp_terms(probs, y, *, base: float = math.e) -> np.ndarray:
    """Per-example terms of ``nlp``: −log_b p_i,y_i, +inf where the true class got 0.

    nlp = −(1/n) Σ_i log_b p_i,y_i (spec §7), the multiclass log loss (Good, "Rational
    Decisions", J. R. Stat. Soc. B 14, 1952); ``base`` b, e by default (nats).
    """
    probs, y = _check(probs, y)
    return _nll(_true(probs, y)) / math.log(base)


def brier_terms(probs, y) -> np.ndarray:
    """Per-example terms of ``brier``: Σ_k (p_ik − 1{k = y_i})², in [0, 2].

    Brier, Monthly Weather Review 78 (1950), over all L classes (with L = 2 twice the
    binary task's brier). Each row's differences are formed before squaring, so a nearly
    one-hot row gives its small term to full relative precision.
    """
    probs, y = _check(probs, y)
    return _brier_rows(probs, y)


def zero_one_terms(probs, y) -> np.ndarray:
    """Per-example terms of ``01l``: 1.0 where ŷ_i ≠ y_i, else 0.0 (01l = (1/n) Σ (1 − a_i))."""
    probs, y = _check(probs, y)
    return (np.argmax(probs, axis=1) != y).astype(np.float64)


def ace(
    probs,
    y,
    *,
    n_ranges: int = ECE_BINS,
    summary: MulticlassSummary | None = None,
    resid=None,
    exact: dict | None = None,
) -> float:
    """Adaptive calibration error (Nixon et al. 2019, spec §7).

    For every class k, the n examples ordered by p_ik (stably: by line on ties) are cut
    into R = min(n, 15) ranges whose sizes differ by at most one, the larger first
    (``np.array_split``); ACE = (1/(R·L)) Σ_k Σ_r |mean 1{y = k} over r − mean p_k over r|.
    ``summary``: the :func:`summarize` of the same ``probs`` and ``y``, whose checks are
    then not repeated. ``resid``: as :func:`summarize`'s, equal doubles ordered by their
    exact values. The computation is :func:`scoring.multiclass_ace.ace_gaps`'s.
    """
    if summary is None:
        probs, y = _check(probs, y)
    else:
        probs, y = _probs(probs), summary.labels
    gaps, sizes = ace_gaps(probs, y, n_ranges=n_ranges, resid=_resid(resid, probs), exact=exact)
    return math.fsum(gaps.ravel().tolist()) / gaps.size


def entropy(q) -> np.ndarray:
    """H(q) = −Σ_k q_k ln q_k in nats along the last axis, with 0·ln 0 = 0; never NaN
    (every term is ≥ 0, so H ≥ 0 exactly). Rows of any shape: H of an (…, L) array is (…)."""
    q = np.asarray(q, dtype=np.float64)
    if not ((q >= 0) & (q <= 1)).all():
        raise ValueError("probabilities must lie in [0, 1]")
    return entropy_of_checked(q)


# The smallest double above 0: ln of it is finite, so a zero q adds 0 · (−744.4) = −0 to
# its row's sum, as 0 · ln 0 = 0 wants; every q > 0 keeps its own ln q.
_SMALLEST = np.nextafter(0.0, 1.0)


def entropy_of_checked(q: np.ndarray) -> np.ndarray:
    """:func:`entropy` of float64 values already known to lie in [0, 1] (the reader's
    normalised members, the rows of a read file): no check, and no mask for the zeros."""
    logs = np.maximum(q, _SMALLEST)
    np.log(logs, out=logs)
    return -np.einsum("...k,...k->...", q, logs) + 0.0


def ensemble_uncertainty(
    probs, members, member_entropy, *, base: float = math.e
) -> tuple[float, float, float, int]:
    """(TU, DU, MI, examples) over the examples with ensemble rows (M ≥ 2), in base b.

    TU = mean H(p_i), the entropy of the members' mean; DU = mean (1/M) Σ_m H(p_i^m)
    (``member_entropy``, nats); MI = TU − DU, the mutual information between the label and
    the member (Depeweg et al., ICML 2018; spec §7), ≥ 0 by the concavity of H and clipped
    at 0 against rounding. ValueError when no row is an ensemble row.
    """
    probs = _probs(probs)
    members = np.asarray(members)
    ensemble = members > 1
    examples = int(np.count_nonzero(ensemble))
    if members.shape != (probs.shape[0],) or not examples:
        raise ValueError("ensemble uncertainty needs one member count per row, some above 1")
    scale = math.log(base)
    rows = probs if examples == probs.shape[0] else probs[ensemble]  # (no copy when all are)
    if not (rows.min() >= 0 and rows.max() <= 1):  # (NaN fails too)
        raise ValueError("probabilities must lie in [0, 1]")
    tu = math.fsum(entropy_of_checked(rows).tolist()) / examples / scale
    du = math.fsum(np.asarray(member_entropy)[ensemble].tolist()) / examples / scale
    return tu, du, max(tu - du, 0.0), examples


def class_frequencies(train_targets, n_classes: int) -> np.ndarray:
    """The baseline's prediction (spec §7): each class's share of the training targets;
    a class absent from them gets 0 (the baseline's nlp may then be +inf)."""
    y = _labels(train_targets, n_classes)
    if not y.size:
        raise ValueError("the baseline needs at least one training target")
    return np.bincount(y, minlength=n_classes) / y.size


def plot_data(
    probs,
    y,
    *,
    summary: MulticlassSummary | None = None,
    members=None,
    member_entropy=None,
    base: float = math.e,
) -> dict:
    """What the submission page draws (JSON-ready but for non-finite floats).

    ``top_label``: the ECE bins (lower, upper, count, accuracy, confidence; None in an
    empty bin) with ece, rmsce, the overall accuracy and mean confidence, and ``corp``
    (the PAV curve of correctness on confidence and its consistency band:
    :func:`scoring.multiclass_plot.top_label_corp`).
    ``classwise``: per class its share of the targets and its SCE bins (count, frequency
    of the class, mean predicted p_k); None when L > 20. ``confusion``: L, the L × L counts
    (row the true class, column the predicted; None when L > 20), the 20 largest
    off-diagonal cells (count descending, then true and predicted class ascending) and
    per class its count and correct count (:func:`scoring.multiclass_plot.calibration_plot`).
    ``ensemble`` (only with ensemble rows, given ``members`` and ``member_entropy``):
    :func:`ensemble_uncertainty` in base ``base``, the ensemble rows and their least and
    largest member count. ``summary``: the :func:`summarize` of the same probs and y, if
    already at hand.
    """
    out = calibration_plot(summary if summary is not None else summarize(probs, y), probs)
    if members is not None and (np.asarray(members) > 1).any():
        members = np.asarray(members)
        tu, du, mi, examples = ensemble_uncertainty(probs, members, member_entropy, base=base)
        held = members[members > 1]
        out["ensemble"] = {
            "tu": tu,
            "du": du,
            "mi": mi,
            "examples": examples,
            "members": [int(held.min()), int(held.max())],
            "log_base": float(base),
        }
    return out
