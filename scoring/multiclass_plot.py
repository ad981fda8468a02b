"""What the submission page draws of a multiclass file (spec §7 plot data): the top-label
and class-wise calibration bins, the confusion counts and, with ensemble rows, the
ensemble's uncertainty (added by scoring.multiclass.plot_data, which calls this
module). Everything comes from :func:`scoring.multiclass.summarize`'s one pass.
"""

from __future__ import annotations

import math

import numpy as np

from .corp_bands import consistency_bands, inside, seed_for
from .decomposition import isotonic, recalibration

# Above this many classes the per-class pictures (class-wise bins, the confusion matrix)
# are left out of the plot data: they would not be read.
PICTURED_CLASSES = 20
TOP_CONFUSIONS = 20


def calibration_plot(summary, probs=None) -> dict:
    """The plot data of a :class:`scoring.multiclass.MulticlassSummary` (JSON-ready but
    for non-finite floats), as :func:`scoring.multiclass.plot_data` describes it:
    ``top_label`` (the ECE bins, ece, rmsce, accuracy, mean confidence and, given the
    normalised ``probs`` the summary was made of, ``corp``: :func:`top_label_corp`),
    ``classwise`` (None when L > 20) and ``confusion``."""
    n, n_classes, n_bins = summary.n, summary.classes, summary.top.shape[0]
    edges = np.arange(n_bins + 1) / n_bins
    count, conf, correct = summary.top.T
    out = {
        "top_label": {
            "bins": _bins(edges, count, correct, conf, ("accuracy", "confidence")),
            "ece": summary.ece(),
            "rmsce": summary.rmsce(),
            "accuracy": (n - summary.errors) / n,
            "confidence": math.fsum(conf.tolist()) / n,
        },
        "classwise": None,
        "confusion": _confusion(summary),
    }
    if probs is not None and n:
        out["top_label"]["corp"] = top_label_corp(probs, summary)
    if n_classes <= PICTURED_CLASSES:
        out["classwise"] = [
            {
                "class": k,
                "frequency": float(cells[:, 2].sum()) / n,
                "bins": _bins(
                    edges, cells[:, 0], cells[:, 2], cells[:, 1], ("frequency", "mean_predicted")
                ),
            }
            for k, cells in enumerate(summary.classwise)
        ]
    return out


def top_label_corp(probs, summary) -> dict:
    """The CORP reliability diagram of the top label, with its consistency band.

    Confidence cᵢ = p_i,ŷᵢ (the probability of the predicted class) against correctness
    aᵢ = 1{ŷᵢ = yᵢ}: the PAV fit of a on c is the recalibrated confidence, and a
    calibrated top label has P(a = 1 | c) = c, so :func:`scoring.corp_bands.
    consistency_bands` of c applies as in the binary case (Dimitriadis, Gneiting &
    Jordan, PNAS 2021, §3, for the reliability of any binary event's probability).

    Returns
    -------
    dict
        ``curve`` (:func:`scoring.decomposition.recalibration`'s PAV points [c, â]) and
        ``bands`` (``{"points": [[c, lower, upper], …], "level", "resamples"}`` and
        ``inside``: :func:`scoring.corp_bands.inside`).
    """
    predicted = np.asarray(summary.predicted, dtype=np.intp)
    confidence = np.asarray(probs, dtype=np.float64)[np.arange(predicted.size), predicted]
    correct = predicted == summary.labels
    targets = np.where(correct, 1.0, -1.0)
    fit = isotonic(confidence, correct.astype(np.float64))
    bands = consistency_bands(confidence, seed=seed_for(predicted.size, "top-label"))
    bands["inside"] = inside(bands, confidence, targets)
    return {"curve": recalibration(confidence, targets, fit=fit)["curve"], "bands": bands}


def _bins(edges, count, hits, sums, names: tuple[str, str]) -> list[dict]:
    """One dict per bin: its edges, count, and the means of ``hits`` and ``sums`` under
    ``names`` (None in an empty bin)."""
    return [
        {
            "lower": float(edges[m]),
            "upper": float(edges[m + 1]),
            "count": int(count[m]),
            names[0]: float(hits[m] / count[m]) if count[m] else None,
            names[1]: float(sums[m] / count[m]) if count[m] else None,
        }
        for m in range(count.size)
    ]


def _confusion(summary) -> dict:
    n_classes = summary.classes
    matrix = np.bincount(
        summary.labels * n_classes + summary.predicted, minlength=n_classes * n_classes
    ).reshape(n_classes, n_classes)
    diagonal = np.diagonal(matrix).copy()
    np.fill_diagonal(matrix, 0)
    cells = np.flatnonzero(matrix)  # off-diagonal, by true then predicted class
    top = cells[np.argsort(-matrix.flat[cells], kind="stable")][:TOP_CONFUSIONS]
    np.fill_diagonal(matrix, diagonal)
    return {
        "classes": n_classes,
        "matrix": matrix.tolist() if n_classes <= PICTURED_CLASSES else None,
        "top": [
            {
                "true": int(c // n_classes),
                "predicted": int(c % n_classes),
                "count": int(matrix.flat[c]),
            }
            for c in top
        ],
        "per_class": [
            {"class": k, "count": int(total), "correct": int(right)}
            for k, (total, right) in enumerate(zip(matrix.sum(axis=1), diagonal, strict=True))
        ],
    }
