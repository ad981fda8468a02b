"""scoring.multiclass_plot: the plot data of spec §7 (top-label and class-wise bins, the
confusion counts, the ensemble's uncertainty), on the hand-worked table of
tests/scoring/test_multiclass.py."""

from __future__ import annotations

import numpy as np
import pytest

from scoring import multiclass as mc
from scoring import multiclass_plot

from .test_multiclass import ECE, PROBS, RMSCE, Y


def test_the_calibration_part_is_plot_data_without_the_ensemble():
    summary = mc.summarize(PROBS, Y)
    got = mc.plot_data(PROBS, Y, summary=summary)
    assert multiclass_plot.calibration_plot(summary, PROBS) == got
    assert (mc.PICTURED_CLASSES, mc.TOP_CONFUSIONS) == (20, 20)


def test_plot_data_of_the_table():
    data = mc.plot_data(PROBS, Y)
    assert set(data) == {"top_label", "classwise", "confusion"}
    top = data["top_label"]
    assert len(top["bins"]) == 15 and top["bins"][0]["lower"] == 0.0
    assert top["bins"][10] == {
        "lower": 10 / 15,
        "upper": 11 / 15,
        "count": 2,
        "accuracy": 0.5,
        "confidence": pytest.approx(0.7),
    }
    assert top["bins"][0] == {
        "lower": 0.0,
        "upper": 1 / 15,
        "count": 0,
        "accuracy": None,
        "confidence": None,
    }
    assert top["ece"] == pytest.approx(ECE) and top["rmsce"] == pytest.approx(RMSCE)
    assert top["accuracy"] == 0.5 and top["confidence"] == pytest.approx(2.7 / 4)
    classwise = data["classwise"]
    assert [c["class"] for c in classwise] == [0, 1, 2]
    assert [c["frequency"] for c in classwise] == [0.25, 0.25, 0.5]
    assert classwise[2]["bins"][1] == {
        "lower": 1 / 15,
        "upper": 2 / 15,
        "count": 3,
        "frequency": pytest.approx(1 / 3),
        "mean_predicted": pytest.approx(0.1),
    }
    confusion = data["confusion"]
    assert confusion["classes"] == 3
    assert confusion["matrix"] == [[1, 0, 0], [1, 0, 0], [0, 1, 1]]
    assert confusion["top"] == [
        {"true": 1, "predicted": 0, "count": 1},
        {"true": 2, "predicted": 1, "count": 1},
    ]
    assert confusion["per_class"] == [
        {"class": 0, "count": 1, "correct": 1},
        {"class": 1, "count": 1, "correct": 0},
        {"class": 2, "count": 2, "correct": 1},
    ]


def test_plot_data_leaves_out_what_many_classes_would_not_show():
    rng = np.random.default_rng(21)
    probs = rng.dirichlet(np.ones(21), size=300)
    y = rng.integers(0, 21, 300)
    data = mc.plot_data(probs, y)
    assert data["classwise"] is None and data["confusion"]["matrix"] is None
    top = data["confusion"]["top"]
    assert len(top) == 20
    keys = [(-c["count"], c["true"], c["predicted"]) for c in top]
    assert keys == sorted(keys) and all(c["true"] != c["predicted"] for c in top)
    matrix = np.zeros((21, 21), dtype=int)
    np.add.at(matrix, (y, probs.argmax(axis=1)), 1)
    np.fill_diagonal(matrix, 0)
    assert top[0]["count"] == matrix.max() and sum(c["count"] for c in top) <= matrix.sum()
    assert len(data["confusion"]["per_class"]) == 21


def test_plot_data_of_an_ensemble():
    probs = np.array([[0.6, 0.4], [0.5, 0.5], [0.9, 0.1]])
    members, member_entropy = np.array([1, 3, 2]), np.array([np.nan, 0.5, 0.2])
    data = mc.plot_data(probs, [0, 1, 0], members=members, member_entropy=member_entropy, base=2.0)
    tu, du, mi, examples = mc.ensemble_uncertainty(probs, members, member_entropy, base=2.0)
    assert data["ensemble"] == {
        "tu": tu,
        "du": du,
        "mi": mi,
        "examples": 2,
        "members": [2, 3],
        "log_base": 2.0,
    }
    assert "ensemble" not in mc.plot_data(probs, [0, 1, 0], members=np.ones(3, dtype=int))
