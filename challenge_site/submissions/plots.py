"""Reliability diagrams and PIT histograms as SVG, drawn with matplotlib from stored plot data.

Only the object-oriented API is used (Figure + the SVG canvas), so no pyplot state and no
GUI backend is involved. Drawings are cached per submission, split and scoring run. A
multiclass split's pictures are multiclass_plots.py's (named by their plot-data keys).
"""

import io

import matplotlib
from django.core.cache import cache
from matplotlib.figure import Figure

from .models import SplitResult

COLOUR = "#1f5fbf"
IDEAL = "#5a6273"
# The coverages written under the PIT histogram (the panel beside it shows them all).
SUMMARY_LEVELS = ("50", "80", "95")
CACHE_SECONDS = 24 * 3600


def to_svg(figure: Figure) -> str:
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "submission-plot"}):
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()


def count_bars(axes, bins: list[dict]) -> None:
    """The examples in each bin (``lower``, ``upper``, ``count``) as bars under a diagram."""
    axes.bar(
        [b["lower"] for b in bins],
        [b["count"] for b in bins],
        width=[b["upper"] - b["lower"] for b in bins],
        align="edge",
        color=COLOUR,
        alpha=0.6,
        edgecolor="white",
    )


def draw_band(axes, bands: dict | None, *, color: str, alpha: float) -> None:
    """A CORP consistency band (scoring.corp_bands.consistency_bands) shaded on ``axes``,
    with its legend entry; nothing where there is no area to shade (no band stored, or
    one forecast value only: every confidence 1), so that the legend names only what is
    drawn."""
    points = (bands or {}).get("points") or []
    if len(points) < 2 or all(lower == upper for _, lower, upper in points):
        return
    axes.fill_between(
        [x for x, _, _ in points],
        [lower for _, lower, _ in points],
        [upper for _, _, upper in points],
        color=color,
        alpha=alpha,
        linewidth=0,
        label=f"{round(100 * bands.get('level', 0.9))} % consistency band",
    )


def reliability_svg(
    bins: list[dict],
    *,
    title: str,
    recalibration: dict | None = None,
    bands: dict | None = None,
) -> str:
    """The reliability diagram of a binary split, with the counts of predictions below.

    With ``recalibration`` (scoring.decomposition.recalibration: results scored since the
    CORP decomposition) the picture is CORP's (Dimitriadis, Gneiting & Jordan, PNAS
    2021): the PAV-recalibrated curve against the diagonal, with ``bands``
    (scoring.corp_bands.consistency_bands, results scored since them) shaded: where a
    calibrated forecast's curve lies at the band's level; the counts below are the
    recalibration's histogram of the predictions. Older results draw the fixed-width
    bins: observed frequency of +1 against the mean predicted probability.
    """
    figure = Figure(figsize=(5.2, 5.2), layout="constrained")
    top, bottom = figure.subplots(2, 1, height_ratios=[3, 1], sharex=True)
    top.plot([0, 1], [0, 1], linestyle="--", color=IDEAL, linewidth=1, label="calibrated")
    histogram = bins
    if recalibration is None:
        filled = [b for b in bins if b["count"]]
        top.plot(
            [b["mean_predicted"] for b in filled],
            [b["observed_frequency"] for b in filled],
            marker="o",
            color=COLOUR,
            label="predictions",
        )
    else:
        draw_band(top, bands, color=COLOUR, alpha=0.18)
        curve = recalibration["curve"]
        top.plot(
            [x for x, _ in curve],
            [y for _, y in curve],
            color=COLOUR,
            linewidth=2,
            label="CORP: recalibrated (PAV)",
        )
        histogram = recalibration["histogram"]
    top.set(xlim=(0, 1), ylim=(0, 1), ylabel="Observed frequency of +1", title=title)
    top.legend(loc="upper left", frameon=False)
    top.grid(alpha=0.3)
    count_bars(bottom, histogram)
    bottom.set(xlabel="Predicted probability of +1", ylabel="Examples")
    return to_svg(figure)


def _coverage_panel(axes, coverage: dict) -> None:
    """Observed coverage of the central intervals against their nominal level."""
    levels = [(int(level), value) for level, value in coverage.items() if value is not None]
    axes.plot([0, 100], [0, 100], linestyle="--", color=IDEAL, linewidth=1, label="calibrated")
    axes.plot(
        [level for level, _ in levels],
        [value * 100 for _, value in levels],
        marker="o",
        color=COLOUR,
        label="observed",
    )
    axes.set(
        xlim=(0, 100),
        ylim=(0, 100),
        xlabel="Nominal coverage of the central interval (%)",
        ylabel="Observed coverage (%)",
        title="Interval coverage",
    )
    axes.set_aspect("equal")
    axes.legend(loc="upper left", frameon=False)
    axes.grid(alpha=0.3)


def pit_svg(pit: dict, *, title: str, coverage_panel: bool = False) -> str:
    """PIT histogram as a density (1 everywhere for a calibrated forecaster) with the
    coverage of the central 50/80/95 % intervals; with ``coverage_panel``, beside it the
    observed coverage of every central interval against its nominal level.

    Counts may be fractional (results scored since issue 28): a discrete forecast (an
    ensemble's verification rank, a point prediction) spreads its example evenly over its
    PIT interval [F(y−), F(y)] (Czado, Gneiting & Held 2009, :mod:`scoring.pit`), which may
    span several bins; the bars are count/(n·width) all the same."""
    figure = Figure(figsize=(9.6 if coverage_panel else 5.2, 4.2), layout="constrained")
    if coverage_panel:
        axes, right = figure.subplots(1, 2, width_ratios=[1.25, 1])
        _coverage_panel(right, pit["coverage"])
    else:
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
    shown = [level for level in SUMMARY_LEVELS if level in pit["coverage"]]
    levels = " / ".join(f"{level} %" for level in shown)
    observed = " / ".join(
        "–" if pit["coverage"][level] is None else f"{pit['coverage'][level] * 100:.0f} %"
        for level in shown
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
    return to_svg(figure)


def render(result: SplitResult, *, dataset_name: str) -> str:
    title = f"{dataset_name}, {result.get_split_display().lower()} split"
    data = result.plot_data
    if "reliability" in data:
        return reliability_svg(
            data["reliability"],
            title=title,
            recalibration=data.get("recalibration"),
            bands=data.get("bands"),
        )
    # Results scored before the calibration test have only the 50/80/95 % coverage.
    return pit_svg(data["pit"], title=title, coverage_panel="calibration_test" in data)


def cached_svg(result: SplitResult, *, dataset_name: str, version: str) -> str:
    """``version`` changes with every scoring run (e.g. its finish time)."""
    key = f"submission-plot:{result.submission_id}:{result.split}:{version}"
    return cache.get_or_set(
        key, lambda: render(result, dataset_name=dataset_name), timeout=CACHE_SECONDS
    )


def cached_picture(result: SplitResult, *, kind: str, version: str, kinds, draw) -> str:
    """A split's named picture (``kind``, one of ``kinds``: the plot-data keys a module
    draws), drawn by ``draw()`` once per scoring run (``version`` changes with each, e.g.
    its finish time) and cached; KeyError for a kind the plot data has not, checked before
    the cache, which keeps no error."""
    if kind not in kinds:
        raise KeyError(f"no {kind} picture in the plot data of the {result.split} split")
    key = f"submission-plot:{result.submission_id}:{result.split}:{kind}:{version}"
    return cache.get_or_set(key, draw, timeout=CACHE_SECONDS)
