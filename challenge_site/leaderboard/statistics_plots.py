"""The statistics page's drawings, as SVG: matplotlib's object-oriented API only (Figure
and its SVG canvas, no pyplot state), like the leaderboard's plot (plots.py).

Each drawing is a function of the numbers it shows and nothing else; a worker draws the
four with the numbers it computed and keeps them in the challenge's snapshot
(statistics_snapshots.py), which the drawing views serve.
"""

from __future__ import annotations

import io

import matplotlib
from matplotlib.figure import Figure

from challenge_site.challenges.models import Phase

from .statistics import PHASES, Daily, DatasetRow, Outcomes, Turnarounds

COLOURS = {Phase.VALIDATION: "#1f5fbf", Phase.TEST: "#d9822b", Phase.POST: "#7a7f87"}
OUTCOME_COLOURS = {
    "valid": "#2e7d32",
    "invalid": "#b3261e",
    "failed": "#6a3d9a",
    "pending": "#bdbdbd",
}
MUTED = "#5a6273"


def _svg(figure: Figure) -> str:
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "statistics-plot"}):
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()


def _note(axes, message: str) -> None:
    axes.text(0.5, 0.5, message, ha="center", va="center", color=MUTED, transform=axes.transAxes)


def _empty(axes, message: str) -> None:
    _note(axes, message)
    axes.set_xticks([])
    axes.set_yticks([])


def daily_svg(data: Daily, *, title: str) -> str:
    """The chapter's Fig. 1: valid submissions per day, validation and test phase stacked."""
    figure = Figure(figsize=(7.2, 3.6), layout="constrained")
    axes = figure.subplots()
    if data.days:
        numbers = [day.number for day in data.days]
        validation = [day.validation for day in data.days]
        test = [day.test for day in data.days]
        axes.bar(
            numbers,
            validation,
            width=0.8,
            color=COLOURS[Phase.VALIDATION],
            label=f"validation phase ({data.validation})",
        )
        axes.bar(
            numbers,
            test,
            width=0.8,
            bottom=validation,
            color=COLOURS[Phase.TEST],
            label=f"test phase ({data.test})",
        )
        if numbers[0] <= data.test_start_day <= numbers[-1]:
            axes.axvline(data.test_start_day - 0.5, color=MUTED, linestyle=":", linewidth=1)
        axes.set_xlim(numbers[0] - 0.6, numbers[-1] + 0.6)
        # Room above the highest bar for the legend.
        axes.set_ylim(0, max(1, *(day.total for day in data.days)) * 1.25)
        axes.yaxis.get_major_locator().set_params(integer=True)
        axes.xaxis.get_major_locator().set_params(integer=True)
        axes.legend(loc="upper center", ncols=2, edgecolor="none", framealpha=1)
        if not any(day.total for day in data.days):
            _note(axes, "No valid submission yet")
    else:
        _empty(axes, "The challenge has not started")
    axes.set(xlabel="day of the challenge (UTC)", ylabel="valid submissions", title=title)
    axes.grid(axis="y", alpha=0.3)
    if data.after_deadline:
        figure.supxlabel(
            f"Not drawn: {data.after_deadline} valid post-challenge "
            f"submission{'' if data.after_deadline == 1 else 's'}",
            fontsize=9,
            color=MUTED,
        )
    return _svg(figure)


def datasets_svg(rows: tuple[DatasetRow, ...], *, title: str) -> str:
    """Valid submissions and participants per dataset, one bar per phase (Table 1's SV and
    ST, and the post-challenge ones)."""
    height = 1.6 + 0.45 * len(PHASES) * max(len(rows), 1) / 1.5
    figure = Figure(figsize=(7.2, min(height, 12)), layout="constrained")
    left, right = figure.subplots(1, 2, sharey=True)
    if rows:
        names = [row.name for row in rows]
        bar = 0.8 / len(PHASES)
        for axes, field in ((left, "submissions"), (right, "participants")):
            for i, phase in enumerate(PHASES):
                values = [getattr(row.cells[i], field) for row in rows]
                positions = [k - 0.4 + bar * (i + 0.5) for k in range(len(rows))]
                axes.barh(positions, values, height=bar, color=COLOURS[phase], label=phase.label)
            axes.xaxis.get_major_locator().set_params(integer=True)
            axes.grid(axis="x", alpha=0.3)
        left.set_yticks(range(len(rows)), names)
        left.invert_yaxis()
        figure.legend(
            *left.get_legend_handles_labels(), loc="outside lower center", ncols=3, frameon=False
        )
    else:
        _empty(left, "No datasets")
        _empty(right, "No datasets")
    left.set(xlabel="valid submissions")
    right.set(xlabel="participants")
    figure.suptitle(title)
    return _svg(figure)


def outcomes_svg(data: Outcomes, *, title: str) -> str:
    """Per phase and overall, the share of uploads valid, invalid, failed and pending."""
    figure = Figure(figsize=(7.2, 3.2), layout="constrained")
    axes = figure.subplots()
    rows = [row for row in data.phases if row.uploads] + [data.total]
    if data.total.uploads:
        labels = [f"{row.label} ({row.uploads})" for row in rows]
        left = [0.0] * len(rows)
        for key, field in (
            ("valid", "scored_share"),
            ("invalid", "invalid_share"),
            ("failed", "failed_share"),
            ("pending", "pending_share"),
        ):
            shares = [getattr(row, field) for row in rows]
            axes.barh(labels, shares, left=left, color=OUTCOME_COLOURS[key], label=key)
            left = [a + b for a, b in zip(left, shares, strict=True)]
        axes.invert_yaxis()
        axes.set_xlim(0, 100)
        axes.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=4, frameon=False)
    else:
        _empty(axes, "No upload yet")
    axes.set(xlabel="share of uploads (%)", title=title)
    return _svg(figure)


def turnaround_svg(data: Turnarounds, *, title: str) -> str:
    """The median time from upload to scored, per phase and overall."""
    figure = Figure(figsize=(7.2, 2.8), layout="constrained")
    axes = figure.subplots()
    rows = [row for row in data.phases if row.scored] + [data.total]
    if data.total.scored:
        longest = max(row.median_seconds for row in rows)
        unit, size = next(
            (unit, size)
            for unit, size in (("h", 3600), ("min", 60), ("s", 1))
            if longest >= 2 * size or size == 1
        )
        labels = [f"{row.label} ({row.scored})" for row in rows]
        values = [row.median_seconds / size for row in rows]
        bars = axes.barh(labels, values, color=COLOURS[Phase.VALIDATION])
        axes.bar_label(bars, labels=[row.median_text for row in rows], padding=3, fontsize=9)
        axes.invert_yaxis()
        axes.set_xlim(0, max(values) * 1.25 or 1)
        axes.set(xlabel=f"median time from upload to scored ({unit})")
    else:
        _empty(axes, "No scored submission yet")
    axes.set(title=title)
    return _svg(figure)
