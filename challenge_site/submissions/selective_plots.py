"""A split's selective-prediction pictures as SVG, drawn with matplotlib from the stored
plot data (scoring's ``retention`` key, spec §8): the retention curve and the
risk–coverage curve of the entry's ordering, against the oracle's and a random one's.

Order the examples from the most to the least certain and keep the first share (the
coverage). The retention curve (Malinin et al., Shifts, NeurIPS 2021) is the error left
when the rest are handed to an oracle, over every example: its area is ``rauc``. The
risk–coverage curve (Geifman et al., ICLR 2019) is the mean error of the kept examples:
its area is ``aurc``. The oracle keeps the examples of smallest error first (the best any
ordering can do), a random ordering keeps the mean error at every coverage.

Each picture is named by a plot-data key, never by a task: a split has the pictures of
:func:`kinds`. Drawn with the object-oriented API only, like plots.py, and cached per
submission, split, picture and scoring run.
"""

import math

from matplotlib.figure import Figure

from .models import SplitResult
from .plots import COLOUR, cached_picture, to_svg

KINDS = ("retention", "risk_coverage")
ORACLE = "#2e7d32"
RANDOM = "#9aa1ad"
TITLE_SIZE = 11
# The coverages the table beside a picture lists (the pictures have up to 200 points).
TABLE_COVERAGES = tuple(k / 10 for k in range(1, 11))
WIDTH_PX = 520


def kinds(plot_data: dict) -> list[str]:
    """The pictures a split's plot data can draw: both curves when it has a retention
    (None for a non-probabilistic file, absent before spec §8)."""
    found = plot_data.get("retention")
    return list(KINDS) if found and found.get("coverage") else []


def _values(values) -> list[float]:
    """Stored values as floats, NaN where a non-finite one was stored as None (the line
    breaks there)."""
    return [math.nan if v is None else float(v) for v in values]


def retention_svg(retention: dict, *, title: str) -> str:
    """E(k)/n against k/n for the entry, the oracle and random orderings, from (0, 0)."""
    return _curves_svg(
        retention,
        keys=("model", "oracle", "random"),
        area=retention.get("rauc") or {},
        start=True,
        title=f"{title}:\nretention curve",
        ylabel="Error with the rest rejected\n(per example; rejected ones count 0)",
        name="rAUC",
    )


def risk_coverage_svg(retention: dict, *, title: str) -> str:
    """E(k)/k against k/n for the entry, the oracle and random orderings."""
    return _curves_svg(
        retention,
        keys=("risk_model", "risk_oracle", "risk_random"),
        area=retention.get("aurc") or {},
        start=False,
        title=f"{title}:\nrisk–coverage curve",
        ylabel="Mean error of the examples kept",
        name="AURC",
    )


def _curves_svg(retention, *, keys, area, start, title, ylabel, name) -> str:
    figure = Figure(figsize=(5.2, 4.4), layout="constrained")
    axes = figure.subplots()
    coverage = _values(retention["coverage"])
    styles = (
        ("this entry", COLOUR, "-", 2.0),
        ("oracle", ORACLE, "--", 1.2),
        ("random", RANDOM, ":", 1.5),
    )
    for key, which, (label, colour, line, width) in zip(
        keys, ("model", "oracle", "random"), styles, strict=True
    ):
        x, y = coverage, _values(retention[key])
        if start:  # (no example kept: no error, for every ordering)
            x, y = [0.0, *x], [0.0, *y]
        value = area.get(which)
        axes.plot(
            x,
            y,
            color=colour,
            linestyle=line,
            linewidth=width,
            label=f"{label} ({name} {_number(value)})" if which in area else label,
        )
    axes.set_xlim(0, 1)
    axes.set_ylim(bottom=0)
    axes.set(xlabel="Share of the examples kept, surest first (coverage)", ylabel=ylabel)
    axes.set_title(title, fontsize=TITLE_SIZE)
    axes.grid(alpha=0.3)
    axes.legend(loc="upper left", fontsize=8, frameon=False)
    return to_svg(figure)


def _number(value) -> str:
    return "∞" if value is None else f"{value:.3g}"


def render(result: SplitResult, *, kind: str, dataset_name: str) -> str:
    """``kind`` is one of :func:`kinds` of the result's plot data (KeyError otherwise)."""
    data = result.plot_data
    if kind not in kinds(data):
        raise KeyError(f"no {kind} picture in the plot data of the {result.split} split")
    title = f"{dataset_name}, {result.get_split_display().lower()} split"
    if kind == "retention":
        return retention_svg(data["retention"], title=title)
    return risk_coverage_svg(data["retention"], title=title)


def cached_svg(result: SplitResult, *, kind: str, dataset_name: str, version: str) -> str:
    """``version`` changes with every scoring run (e.g. its finish time)."""
    return cached_picture(
        result,
        kind=kind,
        version=version,
        kinds=kinds(result.plot_data),
        draw=lambda: render(result, kind=kind, dataset_name=dataset_name),
    )


def figures(plot_data: dict) -> dict:
    """What the page shows beside the pictures of one split: the curves at 10 %, 20 %, …,
    100 % coverage (the first stored point at or above each) and their areas, as tables."""
    retention = plot_data.get("retention") or {}
    coverage = retention.get("coverage") or []
    rows, taken = [], set()
    for wanted in TABLE_COVERAGES:
        at = next((i for i, c in enumerate(coverage) if c >= wanted - 1e-9), None)
        if at is None or at in taken:
            continue
        taken.add(at)
        rows.append(
            {
                "coverage": coverage[at],
                **{
                    key: retention[key][at]
                    for key in (
                        "model",
                        "oracle",
                        "random",
                        "risk_model",
                        "risk_oracle",
                        "risk_random",
                    )
                },
            }
        )
    return {
        "kinds": kinds(plot_data),
        "retention": retention,
        "rows": rows,
        "rauc": retention.get("rauc") or {},
        "aurc": retention.get("aurc") or {},
        "width": WIDTH_PX,
    }
