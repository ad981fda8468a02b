"""Reliability diagrams and PIT histograms as SVG, drawn with matplotlib from stored plot data.

Only the object-oriented API is used (Figure + the SVG canvas), so no pyplot state and no
GUI backend is involved. Drawings are cached per submission, split and scoring run.
"""

import io

import matplotlib
from django.core.cache import cache
from matplotlib.figure import Figure

from .models import SplitResult

COLOUR = "#1f5fbf"
IDEAL = "#5a6273"
CACHE_SECONDS = 24 * 3600


def _svg(figure: Figure) -> str:
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "submission-plot"}):
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()


def reliability_svg(bins: list[dict], *, title: str) -> str:
    """Observed frequency of class +1 against the mean predicted probability, per bin,
    with the counts below."""
    figure = Figure(figsize=(5.2, 5.2), layout="constrained")
    top, bottom = figure.subplots(2, 1, height_ratios=[3, 1], sharex=True)
    top.plot([0, 1], [0, 1], linestyle="--", color=IDEAL, linewidth=1, label="calibrated")
    filled = [b for b in bins if b["count"]]
    top.plot(
        [b["mean_predicted"] for b in filled],
        [b["observed_frequency"] for b in filled],
        marker="o",
        color=COLOUR,
        label="predictions",
    )
    top.set(xlim=(0, 1), ylim=(0, 1), ylabel="Observed frequency of +1", title=title)
    top.legend(loc="upper left", frameon=False)
    top.grid(alpha=0.3)
    bottom.bar(
        [b["lower"] for b in bins],
        [b["count"] for b in bins],
        width=[b["upper"] - b["lower"] for b in bins],
        align="edge",
        color=COLOUR,
        alpha=0.6,
        edgecolor="white",
    )
    bottom.set(xlabel="Predicted probability of +1", ylabel="Examples")
    return _svg(figure)


def pit_svg(pit: dict, *, title: str) -> str:
    """PIT histogram as a density (1 everywhere for a calibrated forecaster) with the
    coverage of the central 50/80/95 % intervals."""
    figure = Figure(figsize=(5.2, 4.2), layout="constrained")
    axes = figure.subplots()
    bins, n = pit["bins"], max(pit["n"], 1)
    widths = [b["upper"] - b["lower"] for b in bins]
    axes.bar(
        [b["lower"] for b in bins],
        [b["count"] / n / w for b, w in zip(bins, widths, strict=True)],
        width=widths,
        align="edge",
        color=COLOUR,
        alpha=0.7,
        edgecolor="white",
    )
    axes.axhline(1, linestyle="--", color=IDEAL, linewidth=1, label="calibrated")
    axes.set(xlim=(0, 1), xlabel="PIT value F(y)", ylabel="Density", title=title)
    levels = " / ".join(f"{level} %" for level in pit["coverage"])
    observed = " / ".join(
        "–" if value is None else f"{value * 100:.0f} %" for value in pit["coverage"].values()
    )
    axes.text(
        0.5,
        -0.25,
        f"Observed coverage of the central {levels} intervals: {observed}",
        transform=axes.transAxes,
        ha="center",
        fontsize=9,
    )
    axes.legend(loc="upper right", frameon=False)
    return _svg(figure)


def render(result: SplitResult, *, dataset_name: str) -> str:
    title = f"{dataset_name}, {result.get_split_display().lower()} split"
    if "reliability" in result.plot_data:
        return reliability_svg(result.plot_data["reliability"], title=title)
    return pit_svg(result.plot_data["pit"], title=title)


def cached_svg(result: SplitResult, *, dataset_name: str, version: str) -> str:
    """``version`` changes with every scoring run (e.g. its finish time)."""
    key = f"submission-plot:{result.submission_id}:{result.split}:{version}"
    return cache.get_or_set(
        key, lambda: render(result, dataset_name=dataset_name), timeout=CACHE_SECONDS
    )
