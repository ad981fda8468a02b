"""submissions.multiclass_plots: a multiclass split's pictures (top-label and class-wise
reliability, the confusion matrix, an ensemble's uncertainty) as SVG drawn by matplotlib
from stored plot data, cached per picture, and the numbers the page shows beside them."""

import json
import math
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from django.core.cache import cache

import scoring
from challenge_site.submissions import multiclass_plots
from challenge_site.submissions.models import SplitResult
from tests.factories import VALIDATION

from .helpers import predictions

SVG = "{http://www.w3.org/2000/svg}"


def texts(svg: str) -> list[str]:
    """Every piece of text drawn (svg.fonttype "none": text stays text), after checking
    that the drawing is one well-formed SVG document."""
    root = ET.fromstring(svg.encode())
    assert root.tag == f"{SVG}svg"
    return ["".join(node.itertext()) for node in root.iter(f"{SVG}text")]


def assert_clean(svg: str) -> None:
    """No NaN or infinity anywhere: in a coordinate, a path or a label."""
    assert not re.search(r"\b(nan|inf)\b", svg, flags=re.IGNORECASE), "a non-finite number"


def bins(values: list[tuple[int, float | None, float | None]], *, keys: tuple[str, str]):
    """15 bins (m/15, (m+1)/15] from (count, first key's value, second key's value) per
    filled bin index, the rest empty (count 0, None: as the plot data stores them)."""
    out = [
        {"lower": m / 15, "upper": (m + 1) / 15, "count": 0, keys[0]: None, keys[1]: None}
        for m in range(15)
    ]
    for m, (count, first, second) in values:
        out[m].update({"count": count, keys[0]: first, keys[1]: second})
    return out


TOP_LABEL = {
    # 60 examples: 10 at confidence ≈ 0.42 (4 right), 20 at ≈ 0.71 (15 right), 30 at
    # ≈ 0.95 (29 right); ECE = (10·0.02 + 20·0.04 + 30·0.016667)/60.
    "bins": bins(
        [(6, (10, 0.4, 0.42)), (10, (20, 0.75, 0.71)), (14, (30, 29 / 30, 0.95))],
        keys=("accuracy", "confidence"),
    ),
    "ece": (10 * 0.02 + 20 * 0.04 + 30 * (29 / 30 - 0.95)) / 60,
    "rmsce": math.sqrt((10 * 0.02**2 + 20 * 0.04**2 + 30 * (29 / 30 - 0.95) ** 2) / 60),
    "accuracy": 48 / 60,
    "confidence": (10 * 0.42 + 20 * 0.71 + 30 * 0.95) / 60,
}


def test_the_top_label_diagram_draws_the_bins_and_names_the_calibration_errors():
    svg = multiclass_plots.top_label_svg(TOP_LABEL, title="digits, validation split")
    drawn = texts(svg)
    assert_clean(svg)
    assert "digits, validation split" in drawn
    assert f"ECE {TOP_LABEL['ece']:.3g} · RMSCE {TOP_LABEL['rmsce']:.3g}" in drawn
    assert "accuracy 0.8" in drawn and "mean confidence 0.782" in drawn
    assert "Confidence (probability of the predicted class)" in drawn
    # The histogram's bars: 15 (empty ones are drawn with height 0), and the three
    # accuracy bars and their three gaps above; no bar for an empty bin's None.
    assert svg.count('id="patch_') > 15 + 3 + 3


def classwise(classes: int, *, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    panels = []
    for k in range(classes):
        filled = [
            (m, (int(rng.integers(1, 50)), float(rng.random()), (m + 0.5) / 15))
            for m in sorted(rng.choice(15, size=5, replace=False))
        ]
        panels.append(
            {
                "class": k,
                "frequency": 1 / classes,
                "bins": bins(filled, keys=("frequency", "mean_predicted")),
            }
        )
    return panels


@pytest.mark.parametrize(
    ("classes", "grid"), [(2, (1, 2)), (3, (1, 3)), (10, (2, 5)), (20, (4, 5))]
)
def test_class_wise_calibration_is_one_panel_per_class(classes, grid):
    assert multiclass_plots._grid(classes) == grid
    svg = multiclass_plots.classwise_svg(classwise(classes, seed=classes), title="t")
    drawn = texts(svg)
    assert_clean(svg)
    share = f"{1 / classes:.0%}"
    assert [t for t in drawn if t.startswith("class ")] == [
        f"class {k} ({share})" for k in range(classes)
    ]
    assert "Mean predicted probability of the class" in drawn


@pytest.mark.parametrize(("classes", "empty"), [(7, 1), (11, 1), (13, 2), (17, 3)])
def test_small_multiples_leave_few_places_empty_and_keep_the_x_numbers(classes, empty):
    rows, columns = multiclass_plots._grid(classes)
    assert rows * columns - classes == empty and 3 <= columns <= 5
    svg = multiclass_plots.classwise_svg(classwise(classes, seed=1), title="t")
    # Each column's lowest panel shows 0, 0.5 and 1 under it: the panel above an empty
    # place too, not only the panels of the last row.
    assert texts(svg).count("0.5") == columns + rows


def confusion_of(targets: list[int], predicted: list[int], classes: int) -> dict:
    matrix = np.zeros((classes, classes), dtype=int)
    np.add.at(matrix, (targets, predicted), 1)
    off = sorted(
        (
            (int(matrix[t, p]), t, p)
            for t in range(classes)
            for p in range(classes)
            if t != p and matrix[t, p]
        ),
        key=lambda cell: (-cell[0], cell[1], cell[2]),
    )
    return {
        "classes": classes,
        "matrix": matrix.tolist() if classes <= 20 else None,
        "top": [{"true": t, "predicted": p, "count": c} for c, t, p in off[:20]],
        "per_class": [
            {"class": k, "count": int(matrix[k].sum()), "correct": int(matrix[k, k])}
            for k in range(classes)
        ],
    }


def test_the_confusion_matrix_writes_every_count_in_its_cell():
    # True 0: 17 right, 3 taken for 2; true 1: 5 right, 8 taken for 0; true 2: 11 right.
    targets = [0] * 20 + [1] * 13 + [2] * 11
    predicted = [0] * 17 + [2] * 3 + [1] * 5 + [0] * 8 + [2] * 11
    svg = multiclass_plots.confusion_svg(confusion_of(targets, predicted, 3), title="t")
    drawn = texts(svg)
    assert_clean(svg)
    cells = ["17", "0", "3", "8", "5", "0", "0", "0", "11"]
    ticks = ["0", "1", "2"]
    # The tick labels (x, then y), the cells row by row, the title and the colour bar.
    assert drawn[:8] == [*ticks, "Predicted class", *ticks, "True class"]
    assert drawn[8:19] == [*cells, "t:", "confusion matrix"]
    assert "<image" not in svg  # vector cells and colour bar: no embedded raster


@pytest.mark.parametrize("classes", [10, 20])
def test_the_confusion_matrix_stays_a_heat_map_up_to_20_classes(classes):
    rng = np.random.default_rng(classes)
    targets = rng.integers(0, classes, 4000)
    predicted = np.where(rng.random(4000) < 0.7, targets, rng.integers(0, classes, 4000))
    confusion = confusion_of(targets.tolist(), predicted.tolist(), classes)
    svg = multiclass_plots.confusion_svg(confusion, title="t")
    assert_clean(svg)
    drawn = texts(svg)
    for row in confusion["matrix"]:
        for count in row:
            assert str(count) in drawn
    width = multiclass_plots.figures({"confusion": confusion})["widths"]["confusion"]
    assert width == round(multiclass_plots.confusion_size(classes)[0] * 100)


@pytest.mark.parametrize(("base", "unit"), [(math.e, "nats"), (2.0, "bits"), (10.0, "log base 10")])
def test_ensemble_bars_name_their_base_and_the_uniform_bound(base, unit):
    ensemble = {
        "tu": 0.9,
        "du": 0.6,
        "mi": 0.3,
        "examples": 120,
        "members": [5, 8],
        "log_base": base,
    }
    svg = multiclass_plots.ensemble_svg(ensemble, title="t", classes=10)
    drawn = texts(svg)
    assert_clean(svg)
    assert [t for t in drawn if t.startswith(" ")] == [" 0.9", " 0.6", " 0.3"]
    assert f"Mean entropy ({unit})" in drawn and "over 120 examples of 5–8 members" in drawn
    assert "uniform over 10 classes" in drawn


def test_fifty_classes_have_tables_instead_of_a_matrix_and_small_multiples():
    rng = np.random.default_rng(50)
    targets = rng.integers(0, 50, 3000)
    predicted = np.where(rng.random(3000) < 0.6, targets, rng.integers(0, 50, 3000))
    data = {
        "top_label": TOP_LABEL,
        "classwise": None,
        "confusion": confusion_of(targets.tolist(), predicted.tolist(), 50),
    }
    assert multiclass_plots.kinds(data) == ["top_label"]
    shown = multiclass_plots.figures(data)
    assert shown["matrix_rows"] == [] and shown["classwise"] == []
    assert len(shown["top"]) == 20 and len(shown["per_class"]) == 50
    first = shown["top"][0]
    true_count = data["confusion"]["per_class"][first["true"]]["count"]
    assert first["share"] == first["count"] / true_count
    row = shown["per_class"][7]
    assert row["accuracy"] == row["correct"] / row["count"]


def test_a_class_without_examples_has_no_accuracy():
    confusion = confusion_of([0, 0, 2], [0, 2, 2], 3)
    shown = multiclass_plots.figures({"confusion": confusion})
    assert [row["accuracy"] for row in shown["per_class"]] == [0.5, None, 1.0]
    assert [row["cells"] for row in shown["matrix_rows"]] == [[1, 0, 1], [0, 0, 0], [0, 0, 1]]


def test_kinds_follow_the_plot_data_keys_never_a_task():
    assert multiclass_plots.kinds({"reliability": []}) == []
    everything = {
        "top_label": TOP_LABEL,
        "classwise": classwise(3, seed=3),
        "confusion": confusion_of([0, 1, 2], [0, 1, 1], 3),
        "ensemble": {
            "tu": 1.0,
            "du": 0.5,
            "mi": 0.5,
            "examples": 3,
            "members": [2, 2],
            "log_base": 2.0,
        },
    }
    assert multiclass_plots.kinds(everything) == [
        "top_label",
        "classwise",
        "classwise_narrow",
        "confusion",
        "ensemble",
    ]
    shown = multiclass_plots.figures(everything)
    assert shown["entropy_unit"] == "bits"
    assert shown["widths"] == {
        "top_label": 520,
        "ensemble": 460,
        "classwise": 960,
        "classwise_narrow": 460,
        "confusion": 600,
    }


def test_pictures_are_cached_per_kind_and_a_missing_one_is_a_key_error(
    gaze, participant, submit_zip
):
    submission = submit_zip(participant, gaze.challenge, predictions("gaze"), now=VALIDATION)
    data = {
        "top_label": TOP_LABEL,
        "classwise": None,
        "confusion": confusion_of([0, 1, 2], [0, 1, 1], 3),
    }
    result = SplitResult.objects.get(submission=submission, split="val")
    result.plot_data = json.loads(json.dumps(data, allow_nan=False))
    svg = multiclass_plots.cached_svg(result, kind="confusion", dataset_name="gaze", version="v1")
    assert cache.get(f"submission-plot:{submission.pk}:val:confusion:v1") == svg
    assert "gaze, validation split:" in texts(svg) and "confusion matrix" in texts(svg)
    top = multiclass_plots.cached_svg(result, kind="top_label", dataset_name="gaze", version="v1")
    assert top != svg and "gaze, validation split" in texts(top)
    with pytest.raises(KeyError, match="no classwise picture in the plot data of the val split"):
        multiclass_plots.cached_svg(result, kind="classwise", dataset_name="gaze", version="v1")
    assert cache.get(f"submission-plot:{submission.pk}:val:classwise:v1") is None


@pytest.mark.parametrize(("classes", "rows"), [(2, 1), (3, 2), (10, 5), (20, 10)])
def test_a_phone_gets_the_panels_in_two_columns(classes, rows):
    assert multiclass_plots._grid(classes, narrow=True) == (rows, min(classes, 2))
    svg = multiclass_plots.classwise_svg(classwise(classes, seed=2), title="t", narrow=True)
    drawn = texts(svg)
    assert_clean(svg)
    assert len([t for t in drawn if t.startswith("class ")]) == classes
    assert drawn.count("0.5") == min(classes, 2) + rows
    assert multiclass_plots.classwise_size(classes, narrow=True)[0] == 2 * 1.9 + 0.8


def scored_plot_data(classes: int, *, rows: int, members: int = 1, seed: int = 0) -> dict:
    """scoring.evaluate's plot data for softmax predictions of a noisy model, as the site
    stores it (JSON, no NaN)."""
    rng = np.random.default_rng(seed)
    targets = rng.integers(0, classes, rows)
    logits = rng.normal(size=(rows, members, classes))
    logits[np.arange(rows), :, targets] += 2.0
    probs = np.exp(logits) / np.exp(logits).sum(axis=2, keepdims=True)
    lines = "".join(" ".join(f"{p:.6g}" for p in row.reshape(-1)) + "\n" for row in probs)
    evaluation = scoring.evaluate(
        lines.encode(),
        "".join(f"{k}\n" for k in targets).encode(),
        task="multiclass",
        options=scoring.ScoringOptions(classes=classes, log_base=2.0),
    )
    return json.loads(json.dumps(evaluation.plot_data(), allow_nan=False))


@pytest.mark.parametrize(
    ("classes", "members", "drawn"),
    [
        (3, 1, ["top_label", "classwise", "classwise_narrow", "confusion"]),
        (10, 4, ["top_label", "classwise", "classwise_narrow", "confusion", "ensemble"]),
        (20, 1, ["top_label", "classwise", "classwise_narrow", "confusion"]),
        (50, 2, ["top_label", "ensemble"]),
        (1000, 1, ["top_label"]),
    ],
)
def test_scoring_output_draws_every_picture_it_has(
    classes, members, drawn, gaze, participant, submit_zip
):
    data = scored_plot_data(classes, rows=300, members=members, seed=classes)
    assert multiclass_plots.kinds(data) == drawn
    submission = submit_zip(participant, gaze.challenge, predictions("gaze"), now=VALIDATION)
    result = SplitResult.objects.get(submission=submission, split="val")
    result.plot_data = data
    for kind in drawn:
        svg = multiclass_plots.render(result, kind=kind, dataset_name="gaze")
        assert_clean(svg)
        shown = texts(svg)
        if kind == "confusion":  # every count in its cell
            assert sorted(t for t in shown[2 * classes + 2 :][: classes**2]) == sorted(
                str(c) for row in data["confusion"]["matrix"] for c in row
            )
        if kind == "top_label":
            top = data["top_label"]
            assert f"ECE {top['ece']:.3g} · RMSCE {top['rmsce']:.3g}" in shown
        if kind == "ensemble":
            ensemble = data["ensemble"]
            assert f" {ensemble['tu']:.3g}" in shown
            assert "Mean entropy (bits)" in shown
            assert f"over {ensemble['examples']} examples of {members} members" in shown
    shown = multiclass_plots.figures(data)
    assert len(shown["per_class"]) == classes
    assert sum(row["count"] for row in shown["per_class"]) == 300
    assert len(shown["top"]) <= 20
    assert len(shown["matrix_rows"]) == (classes if classes <= 20 else 0)
