"""The chapter's Fig. 9 per dataset and split: ranking loss against point loss, drawn as
SVG by a worker (plot_drawings.py says when; this module reads the points and draws).

Only matplotlib's object-oriented API is used (Figure and its SVG canvas): no pyplot
state, no GUI backend. The cost stays nearly flat in the number of entries: the points
come in one index scan of their Score rows straight into numpy arrays (PostgreSQL's
binary COPY: no Python object per row), and above DENSITY_ABOVE entries the plot is a
density (hexbin, log colour scale, one embedded image) with the baseline and the top
entries marked on it, rather than one circle per entry. The legend sits at a fixed place
(``loc="best"`` alone took 91 s at a million points).
"""

import io
from dataclasses import dataclass

import matplotlib
import numpy as np
from django.contrib.auth.models import AnonymousUser
from django.db import connection
from matplotlib.figure import Figure

import scoring
from challenge_site.challenges import policy
from challenge_site.challenges.models import Challenge
from challenge_site.submissions.late_joiners import late_q
from challenge_site.submissions.models import Score, Submission
from challenge_site.submissions.policy import listed_q
from datasets.models import Dataset

ENTRY = "#1f5fbf"
BASELINE = "#b3261e"
TOP = "#e8a33d"
# How long forest.py caches its drawings (this module keeps none: BoardPlot.svg).
CACHE_SECONDS = 24 * 3600
# Above this many circles the points are drawn as one embedded image, so the SVG
# stays small with any number of entries.
RASTER_ABOVE = 2000
# Above this many entries the plot is a density: circles would only pile up.
DENSITY_ABOVE = 5000
# The best entries under the ranking loss, marked on a density plot.
TOP_ENTRIES = 10
# Rows per fetch where rows are fetched (SQLite).
CHUNK = 50_000


@dataclass(frozen=True)
class Points:
    x: np.ndarray  # point loss of each drawn entry (finite)
    y: np.ndarray  # ranking loss, the same entries (finite)
    baseline: tuple[float, float] | None
    left_out: int  # entries with an infinite or n/a value of either loss

    @property
    def entries(self) -> list[tuple[float, float]]:
        """(point loss, ranking loss) of each drawn entry, as Python floats."""
        return list(zip(self.x.tolist(), self.y.tolist(), strict=True))


# The Score rows of the two losses, without a join or an aggregate: an index-only scan of
# score_leaderboard_idx (dataset, split, loss); the pivot and the listing are numpy's.
# (Joined to the submissions and grouped, PostgreSQL spent 17 s at a million entries.)
ROWS_SQL = (
    "SELECT submission_id, loss = %s, COALESCE(value, 'NaN') FROM "
    + Score._meta.db_table
    + " WHERE dataset_id = %s AND split = %s AND loss IN (%s, %s)"
)
# PostgreSQL's binary COPY of those rows: a 19-byte header, then per row the field count
# and each field's length and big-endian value (no NULL: COALESCE), then a 2-byte trailer.
COPY_ROW = np.dtype(
    [
        ("fields", ">i2"),
        ("id_length", ">i4"),
        ("submission", ">i8"),
        ("ranking_length", ">i4"),
        ("ranking", "u1"),
        ("value_length", ">i4"),
        ("value", ">f8"),
    ]
)


def parse_copy(data) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(submission, is ranking loss, value) from the bytes of a binary COPY of ROWS_SQL."""
    data = memoryview(data)
    start = 19 + int.from_bytes(data[15:19], "big")  # the header and its extension
    count = max((len(data) - start - 2) // COPY_ROW.itemsize, 0)
    rows = np.frombuffer(data, dtype=COPY_ROW, count=count, offset=start)
    lengths = (rows["id_length"] == 8) & (rows["ranking_length"] == 1) & (rows["value_length"] == 8)
    if not ((rows["fields"] == 3) & lengths).all():
        raise ValueError("unexpected COPY row layout")
    return (
        rows["submission"].astype(np.int64),
        rows["ranking"].astype(bool),
        rows["value"].astype(np.float64),
    )


def _copy_rows(sql: str, params: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows through COPY … TO STDOUT (BINARY) read straight into arrays: no Python
    object per row (a fetch costs ~4 µs a row, seconds at a million entries)."""
    buffer = io.BytesIO()
    with connection.cursor() as cursor:
        query = cursor.mogrify(sql, params).decode()
        cursor.copy_expert(f"COPY ({query}) TO STDOUT WITH (FORMAT binary)", buffer)
    return parse_copy(buffer.getbuffer())


def _fetched_rows(sql: str, params: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows fetched in chunks (SQLite: small boards, tests)."""
    chunks = []
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        while rows := cursor.fetchmany(CHUNK):
            chunks.append(np.array(rows, dtype=np.float64).reshape(-1, 3))
    table = np.concatenate(chunks) if chunks else np.empty((0, 3))
    return table[:, 0].astype(np.int64), table[:, 1] != 0, table[:, 2]


def points(dataset: Dataset | int, *, split: str, ranking: str, point: str) -> Points:
    """Both losses (Score.loss keys) of every listed entry of the split: one scan of the
    two losses' Score rows into arrays, and the few entries not listed (unscored being
    rescored, hidden, disqualified, withdrawn) and the baseline by their ids."""
    dataset_id = dataset if isinstance(dataset, int) else dataset.pk
    params = [ranking, dataset_id, split, ranking, point]
    read = _copy_rows if connection.vendor == "postgresql" else _fetched_rows
    submission, is_ranking, value = read(ROWS_SQL, params)
    entries = Submission.objects.filter(dataset_id=dataset_id)
    left_out = entries.exclude(listed_q())
    challenge = Challenge.objects.get(datasets=dataset_id)
    # The drawing is public: late joiners' entries stay off the test's public part while
    # their feedback is withheld (policy.late_feedback_withheld; organisers have the boards).
    if policy.late_feedback_withheld(challenge, split, user=AnonymousUser()):
        left_out = entries.filter(~listed_q() | late_q(challenge))
    unlisted = np.fromiter(left_out.values_list("pk", flat=True), np.int64)
    keep = ~np.isin(submission, unlisted)
    submission, is_ranking, value = submission[keep], is_ranking[keep], value[keep]
    # The pivot: one slot per entry, NaN where its row of a loss is missing.
    ids, slot = np.unique(submission, return_inverse=True)
    x, y = np.full(ids.size, np.nan), np.full(ids.size, np.nan)
    y[slot[is_ranking]] = value[is_ranking]
    x[slot[~is_ranking]] = value[~is_ranking]
    baselines = np.fromiter(entries.filter(is_baseline=True).values_list("pk", flat=True), np.int64)
    is_baseline = np.isin(ids, baselines)
    finite = np.isfinite(x) & np.isfinite(y)
    baseline = None
    if np.any(is_baseline & finite):
        found = np.flatnonzero(is_baseline & finite)[0]
        baseline = (float(x[found]), float(y[found]))
    drawn = finite & ~is_baseline
    left_out = int(np.count_nonzero(~finite & ~is_baseline))
    return Points(x[drawn], y[drawn], baseline, left_out)


def _axis_label(loss: scoring.Loss) -> str:
    return f"{loss.name}: {loss.title.lower()}"


def _log_x(data: Points) -> bool:
    xs = data.x if data.baseline is None else np.append(data.x, data.baseline[0])
    return bool(xs.size and xs.min() > 0 and xs.max() / xs.min() > 100)


def density(count: int) -> bool:
    """Whether ``count`` entries are drawn as a density rather than one circle each."""
    return count > DENSITY_ABOVE


def _scatter(axes, data: Points) -> None:
    axes.scatter(
        data.x,
        data.y,
        marker="o",
        s=28,
        facecolors="none",
        edgecolors=ENTRY,
        label=f"entries ({data.x.size})",
        rasterized=data.x.size > RASTER_ABOVE,
    )


def _hexbin(figure, axes, data: Points, *, log_x: bool) -> None:
    cells = axes.hexbin(
        data.x,
        data.y,
        gridsize=60,
        bins="log",
        mincnt=1,
        cmap="Blues",
        xscale="log" if log_x else "linear",
        linewidths=0,
        rasterized=True,
    )
    figure.colorbar(cells, ax=axes, label="entries per hexagon (log scale)", pad=0.01)
    # The legend's count of entries, as an entry without a marker.
    axes.plot([], [], " ", label=f"entries ({data.x.size}, as a density)")
    # The top entries (lowest ranking loss): a partial sort, flat in the entries.
    top = min(TOP_ENTRIES, data.y.size)
    best = np.argpartition(data.y, top - 1)[:top]
    axes.scatter(
        data.x[best],
        data.y[best],
        marker="D",
        s=30,
        facecolors=TOP,
        edgecolors="black",
        linewidths=0.6,
        label=f"top {top} by ranking loss",
        zorder=3,
    )


def svg(data: Points, *, ranking: scoring.Loss, point: scoring.Loss, title: str) -> str:
    """The drawing: one circle per entry up to DENSITY_ABOVE entries, a density above."""
    figure = Figure(figsize=(6.4, 4.8), layout="constrained")
    axes = figure.subplots()
    log_x = _log_x(data)
    if density(data.x.size):
        _hexbin(figure, axes, data, log_x=log_x)
    elif data.x.size:
        _scatter(axes, data)
    if data.baseline is not None:
        axes.scatter(
            [data.baseline[0]],
            [data.baseline[1]],
            marker="s",
            s=60,
            color=BASELINE,
            label="baseline",
            zorder=4,
        )
    if log_x:
        axes.set_xscale("log")
    axes.set(xlabel=_axis_label(point), ylabel=_axis_label(ranking), title=title)
    axes.grid(alpha=0.3)
    if data.x.size or data.baseline is not None:
        # A fixed corner: "best" searches every point for the emptiest place.
        axes.legend(loc="upper left", frameon=True, framealpha=0.85, fontsize=8)
    else:
        axes.text(
            0.5, 0.5, "No entry with finite values yet", ha="center", transform=axes.transAxes
        )
    if data.left_out:
        figure.supxlabel(
            f"Not drawn: {data.left_out} entr{'y' if data.left_out == 1 else 'ies'} "
            "with an infinite or n/a value",
            fontsize=9,
            color="#5a6273",
        )
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "leaderboard-plot"}):
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()


def title(dataset: Dataset, *, split: str, slice_name: str = "") -> str:
    text = f"{dataset.name}, {'validation' if split == 'val' else split} split"
    return text + (f", slice {slice_name}" if slice_name else "")


def left_out_count(dataset: Dataset, *, split: str, ranking: str, point: str, **_) -> int:
    """Entries with an infinite or n/a value of either loss, read from the whole split:
    for tests and the shell. Pages show the drawing's own count (BoardPlot.left_out)."""
    return points(dataset, split=split, ranking=ranking, point=point).left_out


def version(dataset: Dataset) -> str:
    """The dataset's generation (generation.py), read by primary key: it moves on in every
    transaction that changes which entries are listed or what they score."""
    return str(Dataset.objects.values_list("generation", flat=True).get(pk=dataset.pk))
