"""A multiclass split's pictures as SVG, drawn with matplotlib from the stored plot data
(scoring's multiclass ``plot_data()``): the top-label reliability diagram, class-wise
reliability as small multiples, the confusion matrix and an ensemble's uncertainty.

Each picture is named by its plot-data key (``top_label``, ``classwise``, ``confusion``,
``ensemble``), never by a task: a split has the pictures whose keys its plot data holds
(:func:`kinds`). Drawn with the object-oriented API only, like plots.py, and cached per
submission, split, picture and scoring run.
"""

import math

import numpy as np
from matplotlib.figure import Figure

from .models import SplitResult
from .plots import COLOUR, IDEAL, cached_picture, count_bars, draw_band, to_svg

GAP = "#c0392b"
DATA = "#1f5fbf"
KNOWLEDGE = "#e08a00"
# The top label's CORP curve and its band, drawn over the blue bins.
CORP = "#1b1b1b"
BAND = "#f0b040"
# Inches to the <img> width in CSS pixels, as plots.py's figures (5.2 in → 520 px).
PX_PER_INCH = 100
# Short tick labels, so that one panel's 1 and the next one's 0 stay apart.
TICKS, TICK_LABELS = [0, 0.5, 1], ["0", "0.5", "1"]
# Class-wise dots by the examples in their bin: [low, high) → marker size in points.
MARKER_SIZES = ((1, 10, 2.0), (10, 100, 3.5), (100, math.inf, 5.0))
# Titles name the dataset (up to 40 characters) and the split: they fit 5.2 inches at 11 pt.
TITLE_SIZE = 11


def corp_curve(axes, corp: dict | None) -> None:
    """The PAV-recalibrated curve of the top label (scoring.multiclass_plot.top_label_corp)
    over the bins, in its consistency band; nothing for results scored before it."""
    if not corp:
        return
    draw_band(axes, corp.get("bands"), color=BAND, alpha=0.35)
    axes.plot(
        [x for x, _ in corp["curve"]],
        [y for _, y in corp["curve"]],
        color=CORP,
        linewidth=2,
        marker="o" if len(corp["curve"]) == 1 else None,  # one confidence: a point, seen
        label="CORP: recalibrated (PAV)",
    )


def top_label_svg(top_label: dict, *, title: str) -> str:
    """Guo et al. (2017)'s reliability diagram: accuracy per confidence bin, the gap to the
    bin's mean confidence, the diagonal; below, the examples per bin with the overall
    accuracy and mean confidence. Results scored since the top label's CORP curve also
    draw it in its consistency band (:func:`corp_curve`)."""
    figure = Figure(figsize=(5.2, 5.6), layout="constrained")
    top, bottom = figure.subplots(2, 1, height_ratios=[3, 1.2], sharex=True)
    bins = top_label["bins"]
    filled = [b for b in bins if b["count"] and b["accuracy"] is not None]
    lower = [b["lower"] for b in filled]
    widths = [b["upper"] - b["lower"] for b in filled]
    accuracy = [b["accuracy"] for b in filled]
    top.bar(
        lower,
        accuracy,
        width=widths,
        align="edge",
        color=COLOUR,
        alpha=0.8,
        edgecolor="white",
        label="accuracy",
    )
    # A bar from the accuracy to the mean confidence: above the accuracy bar where the
    # predictions are overconfident, over it where they are underconfident.
    top.bar(
        lower,
        [b["confidence"] - b["accuracy"] for b in filled],
        bottom=accuracy,
        width=widths,
        align="edge",
        # Hatched without a fill: readable over the accuracy bar when underconfident.
        facecolor="none",
        edgecolor=GAP,
        hatch="///",
        linewidth=0.8,
        label="gap to the mean confidence",
    )
    top.plot([0, 1], [0, 1], linestyle="--", color=IDEAL, linewidth=1, label="calibrated")
    corp_curve(top, top_label.get("corp"))
    top.set(xlim=(0, 1), ylim=(0, 1), ylabel="Accuracy")
    errors = f"ECE {_number(top_label['ece'])} · RMSCE {_number(top_label['rmsce'])}"
    top.set_title(f"{title}\n{errors}", fontsize=TITLE_SIZE)
    # Below the figure: inside the axes it would hide the bars of sparse low-confidence bins.
    # Five entries with the CORP curve: two columns keep them inside 5.2 inches.
    columns = 2 if top_label.get("corp") else 3
    figure.legend(loc="outside lower center", ncols=columns, fontsize=8, frameon=False)
    top.grid(alpha=0.3)
    count_bars(bottom, bins)
    for key, style, name in (("accuracy", "-", "accuracy"), ("confidence", ":", "mean confidence")):
        bottom.axvline(
            top_label[key],
            color=IDEAL,
            linestyle=style,
            linewidth=1.5,
            label=f"{name} {_number(top_label[key])}",
        )
    bottom.set(xlabel="Confidence (probability of the predicted class)", ylabel="Examples")
    # Head room above the tallest bar for the legend, which would hide bars otherwise.
    bottom.set_ylim(0, max(max(b["count"] for b in bins), 1) * 1.7)
    bottom.legend(loc="upper left", fontsize=8, framealpha=0.9, ncols=2)
    return to_svg(figure)


def _grid(count: int, *, narrow: bool = False) -> tuple[int, int]:
    """(rows, columns) of small multiples: the fewest rows of 3 to 5 panels, then the
    fewest empty places; two columns for a phone's screen (``narrow``)."""
    if narrow:
        return math.ceil(count / 2), min(count, 2)
    if count <= 3:
        return 1, count
    options = [(math.ceil(count / columns), columns) for columns in (5, 4, 3)]
    return min(options, key=lambda rc: (rc[0], rc[0] * rc[1] - count))


def classwise_size(count: int, *, narrow: bool = False) -> tuple[float, float]:
    """The small multiples' figure size in inches (at most 3 inches a panel)."""
    rows, columns = _grid(count, narrow=narrow)
    side = 1.9 if narrow else min(3.0, 8.8 / columns)
    return columns * side + 0.8, rows * side + 1.1


def classwise_svg(classwise: list[dict], *, title: str, narrow: bool = False) -> str:
    """One reliability panel per class k: the share of examples of class k against the
    mean predicted p_k in each of the sce's 15 bins, on shared axes (Nixon et al. 2019).
    ``narrow``: two columns of panels, for a phone's screen."""
    rows, columns = _grid(len(classwise), narrow=narrow)
    size = classwise_size(len(classwise), narrow=narrow)
    figure = Figure(figsize=size, layout="constrained")
    grid = figure.subplots(rows, columns, sharex=True, sharey=True, squeeze=False)
    panels = grid.flat
    for panel, entry in zip(panels, classwise, strict=False):
        filled = [b for b in entry["bins"] if b["count"] and b["frequency"] is not None]
        panel.plot([0, 1], [0, 1], linestyle="--", color=IDEAL, linewidth=0.8)
        panel.plot(
            [b["mean_predicted"] for b in filled],
            [b["frequency"] for b in filled],
            color=COLOUR,
            linewidth=0.8,
            alpha=0.6,
        )
        # Larger dots for bins of more examples: a jump between two dots of a few
        # examples each is noise. One plot per size, so that each size is one SVG marker.
        for low, high, size in MARKER_SIZES:
            dots = [b for b in filled if low <= b["count"] < high]
            panel.plot(
                [b["mean_predicted"] for b in dots],
                [b["frequency"] for b in dots],
                linestyle="none",
                marker="o",
                markersize=size,
                color=COLOUR,
            )
        share = entry["frequency"]
        name = f"class {entry['class']}"
        panel.set_title(name if share is None else f"{name} ({share:.0%})", fontsize=9)
        panel.set(xlim=(0, 1), ylim=(0, 1))
        panel.set_xticks(TICKS, TICK_LABELS)
        panel.set_yticks(TICKS, TICK_LABELS)
        panel.tick_params(labelsize=8)
        panel.grid(alpha=0.3)
    for index in range(len(classwise), rows * columns):
        grid.flat[index].set_visible(False)
        above = index - columns
        if above >= 0:  # the panel above an empty place shows the x axis's numbers
            grid.flat[above].xaxis.set_tick_params(labelbottom=True)
    figure.suptitle(
        f"{title}:\nclass-wise calibration (share of the targets per class)", fontsize=TITLE_SIZE
    )
    figure.supxlabel("Mean predicted probability of the class", fontsize=10)
    figure.supylabel("Observed frequency of the class", fontsize=10)
    return to_svg(figure)


def confusion_size(classes: int) -> tuple[float, float]:
    side = 4.4 if classes <= 10 else 6.8
    return side + 1.6, side + 0.9


def confusion_svg(confusion: dict, *, title: str) -> str:
    """The confusion matrix as a heat map: rows the true class, columns the predicted one,
    each cell's count written in it and its colour the share of the true class's examples
    (so that a rare class's errors show as clearly as a common one's)."""
    matrix = np.asarray(confusion["matrix"], dtype=np.int64)
    classes = confusion["classes"]
    totals = matrix.sum(axis=1, keepdims=True)
    shares = np.divide(matrix, totals, out=np.zeros(matrix.shape), where=totals > 0)
    figure = Figure(figsize=confusion_size(classes), layout="constrained")
    axes = figure.subplots()
    # pcolormesh draws vector cells (imshow would embed a raster image in the SVG).
    mesh = axes.pcolormesh(shares, cmap="Blues", vmin=0, vmax=1, edgecolors="white", linewidth=0.5)
    size = 9 if classes <= 10 else 6.5
    for (true, predicted), count in np.ndenumerate(matrix):
        colour = "white" if shares[true, predicted] > 0.55 else "#1b1f24"
        if count == 0:
            colour = "#9aa1ad"
        axes.text(
            predicted + 0.5,
            true + 0.5,
            str(count),
            ha="center",
            va="center",
            fontsize=size,
            color=colour,
        )
    ticks = np.arange(classes) + 0.5
    axes.set_xticks(ticks, [str(k) for k in range(classes)], fontsize=size + 1)
    axes.set_yticks(ticks, [str(k) for k in range(classes)], fontsize=size + 1)
    axes.set(xlabel="Predicted class", ylabel="True class")
    axes.set_title(f"{title}:\nconfusion matrix", fontsize=TITLE_SIZE)
    axes.set_xlim(0, classes)
    axes.set_ylim(classes, 0)  # class 0 at the top, as the table below reads
    axes.set_aspect("equal")
    axes.xaxis.set_ticks_position("bottom")
    bar = figure.colorbar(mesh, ax=axes, shrink=0.8)
    bar.solids.set_rasterized(False)  # vector too: no embedded raster image in the SVG
    bar.solids.set_edgecolor("face")  # no hairline seams between the bar's 256 colours
    bar.set_label("Share of the true class's examples")
    return to_svg(figure)


def entropy_unit(log_base: float) -> str:
    if math.isclose(log_base, math.e):
        return "nats"
    if math.isclose(log_base, 2):
        return "bits"
    return f"log base {log_base:g}"


def ensemble_svg(ensemble: dict, *, title: str, classes: int | None = None) -> str:
    """Total uncertainty TU = H(mean prediction) as data uncertainty DU (the members' mean
    entropy) plus the mutual information MI = TU − DU (the members' disagreement), in the
    dataset's log base; the entropy of a uniform prediction bounds TU."""
    tu, du, mi = (ensemble[key] for key in ("tu", "du", "mi"))
    figure = Figure(figsize=(4.6, 3.4), layout="constrained")
    axes = figure.subplots()
    rows = [2, 1, 0]  # TU on top
    axes.barh(rows[0], du, color=DATA, label="data uncertainty (DU)")
    axes.barh(rows[0], mi, left=du, color=KNOWLEDGE, label="mutual information (MI)")
    axes.barh(rows[1], du, color=DATA)
    axes.barh(rows[2], mi, color=KNOWLEDGE)
    for row, value in zip(rows, (tu, du, mi), strict=True):
        axes.text(value, row, f" {_number(value)}", va="center", fontsize=9)
    limit = max(tu, du, mi, 1e-12)
    if classes:
        uniform = math.log(classes) / math.log(ensemble["log_base"])
        axes.axvline(
            uniform,
            color=IDEAL,
            linestyle="--",
            linewidth=1,
            label=f"uniform over {classes} classes",
        )
        limit = max(limit, uniform)
    axes.set_xlim(0, limit * 1.25)
    axes.set_yticks(rows, ["Total (TU)", "Data (DU)", "Mutual\ninformation (MI)"])
    low, high = ensemble["members"]
    members = f"{low}" if low == high else f"{low}–{high}"
    axes.set(
        xlabel=f"Mean entropy ({entropy_unit(ensemble['log_base'])})\nover "
        f"{ensemble['examples']} examples of {members} members",
    )
    # Over the figure, not the axes: the labels on the left push the axes to the right.
    figure.suptitle(f"{title}:\nensemble uncertainty", fontsize=TITLE_SIZE)
    figure.legend(loc="outside lower center", ncols=2, fontsize=9, frameon=False)
    return to_svg(figure)


def _number(value) -> str:
    return "n/a" if value is None else f"{value:.3g}"


def kinds(plot_data: dict) -> list[str]:
    """The pictures a split's plot data can draw, in page order: named by their keys, the
    class-wise panels also in two columns for phones (``classwise_narrow``); a confusion
    matrix of more than 20 classes is tables only, without a matrix."""
    found = []
    if plot_data.get("top_label"):
        found.append("top_label")
    if plot_data.get("classwise"):
        found += ["classwise", "classwise_narrow"]
    if (plot_data.get("confusion") or {}).get("matrix"):
        found.append("confusion")
    if plot_data.get("ensemble"):
        found.append("ensemble")
    return found


def render(result: SplitResult, *, kind: str, dataset_name: str) -> str:
    """``kind`` is one of :func:`kinds` of the result's plot data (KeyError otherwise)."""
    data = result.plot_data
    if kind not in kinds(data):
        raise KeyError(f"no {kind} picture in the plot data of the {result.split} split")
    title = f"{dataset_name}, {result.get_split_display().lower()} split"
    if kind == "top_label":
        return top_label_svg(data["top_label"], title=title)
    if kind in ("classwise", "classwise_narrow"):
        return classwise_svg(data["classwise"], title=title, narrow=kind == "classwise_narrow")
    if kind == "confusion":
        return confusion_svg(data["confusion"], title=title)
    classes = (data.get("confusion") or {}).get("classes")
    return ensemble_svg(data["ensemble"], title=title, classes=classes)


def cached_svg(result: SplitResult, *, kind: str, dataset_name: str, version: str) -> str:
    """``version`` changes with every scoring run (e.g. its finish time)."""
    return cached_picture(
        result,
        kind=kind,
        version=version,
        kinds=kinds(result.plot_data),
        draw=lambda: render(result, kind=kind, dataset_name=dataset_name),
    )


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def figures(plot_data: dict) -> dict:
    """What the page shows beside the pictures of one split (its numbers as tables, for
    screen readers and for more than 20 classes): ratios computed here, once, since the
    template language has no division; the widths of the <img> elements in pixels."""
    found = kinds(plot_data)
    confusion = plot_data.get("confusion") or {}
    per_class = [
        {**row, "accuracy": _ratio(row["correct"], row["count"])}
        for row in confusion.get("per_class", [])
    ]
    totals = {row["class"]: row["count"] for row in per_class}
    matrix = confusion.get("matrix")
    widths = {"top_label": 520, "ensemble": 460}
    if "classwise" in found:
        for name, narrow in (("classwise", False), ("classwise_narrow", True)):
            inches = classwise_size(len(plot_data["classwise"]), narrow=narrow)[0]
            widths[name] = round(inches * PX_PER_INCH)
    if "confusion" in found:
        widths["confusion"] = round(confusion_size(confusion["classes"])[0] * PX_PER_INCH)
    ensemble = plot_data.get("ensemble")
    return {
        "plot": plot_data,
        "kinds": found,
        "widths": widths,
        "classwise": [
            {**entry, "bins": [b for b in entry["bins"] if b["count"]]}
            for entry in plot_data.get("classwise") or []
        ],
        # The matrix's rows with the true class's accuracy, when there is a matrix.
        "matrix_rows": [
            {"cells": cells, **row} for cells, row in zip(matrix, per_class, strict=True)
        ]
        if matrix
        else [],
        "per_class": per_class,
        "top": [
            {**pair, "share": _ratio(pair["count"], totals.get(pair["true"], 0))}
            for pair in confusion.get("top", [])
        ],
        "entropy_unit": entropy_unit(ensemble["log_base"]) if ensemble else "",
    }
