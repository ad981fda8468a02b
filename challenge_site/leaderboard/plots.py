"""The chapter's Fig. 9 per dataset and split: ranking loss against point loss, one circle
per entry and a square for the baseline, drawn server-side as SVG and cached.

Only matplotlib's object-oriented API is used (Figure and its SVG canvas): no pyplot
state, no GUI backend. The drawing is cached under the dataset, split, the two losses
and the dataset's generation, which moves on whenever its listed scores change (see
``version``): with a cache shared by every web process (settings: CACHE_URL), one
drawing serves them all.
"""

import io
import math
from dataclasses import dataclass

import matplotlib
from django.core.cache import cache
from django.db.models import Case, Max, When
from matplotlib.figure import Figure

import scoring
from challenge_site.submissions.models import Score, Submission
from challenge_site.submissions.policy import listed_q, unmoderated_q
from datasets.models import Dataset

from . import generation

ENTRY = "#1f5fbf"
BASELINE = "#b3261e"
CACHE_SECONDS = 24 * 3600
# Above this many circles the points are drawn as one embedded image, so the SVG
# stays small with any number of entries.
RASTER_ABOVE = 2000
INFINITIES = (math.inf, -math.inf)


@dataclass(frozen=True)
class Points:
    entries: list[tuple[float, float]]  # (point loss, ranking loss)
    baseline: tuple[float, float] | None
    left_out: int  # entries with an infinite or n/a value of either loss


def _finite(value) -> bool:
    return value is not None and math.isfinite(value)


def points(dataset: Dataset, *, split: str, ranking: str, point: str) -> Points:
    """Both losses of every scored entry, pivoted with one conditional aggregate per loss."""
    rows = (
        Score.objects.filter(dataset=dataset, split=split, loss__in=[ranking, point])
        .filter(listed_q("submission__"))
        .values("submission_id", "submission__is_baseline")
        .annotate(
            y=Max(Case(When(loss=ranking, then="value"))),
            x=Max(Case(When(loss=point, then="value"))),
        )
        .order_by()
        .values_list("submission__is_baseline", "x", "y")
    )
    entries, baseline, left_out = [], None, 0
    for is_baseline, x, y in rows:
        if not (_finite(x) and _finite(y)):
            left_out += 0 if is_baseline else 1
        elif is_baseline:
            baseline = (x, y)
        else:
            entries.append((x, y))
    return Points(entries, baseline, left_out)


def left_out_count(
    dataset: Dataset, *, split: str, ranking: str, point: str, baseline_id: int | None
) -> int:
    """``count_left_out``, cached per generation (the same for everyone who may see the
    split, which the caller has checked)."""
    key = generation.key(dataset, "left-out", split, ranking, point, baseline_id)

    def count() -> int:
        return count_left_out(
            dataset, split=split, ranking=ranking, point=point, baseline_id=baseline_id
        )

    return cache.get_or_set(key, count, timeout=CACHE_SECONDS)


def count_left_out(
    dataset: Dataset, *, split: str, ranking: str, point: str, baseline_id: int | None
) -> int:
    """Entries (not the baseline) with an infinite or n/a value of either loss.

    Two index-only seeks into score_leaderboard_idx (its ∞ end and its n/a end) joined by
    UNION, which counts an entry with both only once. It reads Score rows without joining
    the submissions (a join makes PostgreSQL hash every submission of the site): Score
    rows exist only for scored submissions, and for one being rescored until its new
    scores replace them, so such an entry is counted meanwhile.
    """
    scores = Score.objects.filter(dataset=dataset, split=split, loss__in=[ranking, point])
    if baseline_id is not None:
        scores = scores.exclude(submission_id=baseline_id)
    # Entries the organisers hid or disqualified are not drawn, nor counted: few, read
    # apart (submission_moderation_idx) rather than joined into the seeks above.
    moderated = list(
        Submission.objects.filter(dataset=dataset)
        .exclude(unmoderated_q())
        .values_list("pk", flat=True)
    )
    if moderated:
        scores = scores.exclude(submission_id__in=moderated)
    scores = scores.values("submission_id")
    return scores.filter(value__in=INFINITIES).union(scores.filter(value__isnull=True)).count()


def version(dataset: Dataset, *, loaded: bool = False) -> str:
    """The dataset's generation (generation.py): it moves on in every transaction that
    changes which entries are listed or what they score. ``loaded``: ``dataset`` was read
    by this request, so its generation is current and costs no query; otherwise one read
    by primary key."""
    if loaded:
        return str(dataset.generation)
    return str(Dataset.objects.values_list("generation", flat=True).get(pk=dataset.pk))


def _axis_label(loss: scoring.Loss) -> str:
    return f"{loss.name}: {loss.title.lower()}"


def scatter_svg(data: Points, *, ranking: scoring.Loss, point: scoring.Loss, title: str) -> str:
    figure = Figure(figsize=(6.4, 4.8), layout="constrained")
    axes = figure.subplots()
    if data.entries:
        xs, ys = zip(*data.entries, strict=True)
        axes.scatter(
            xs,
            ys,
            marker="o",
            s=28,
            facecolors="none",
            edgecolors=ENTRY,
            label=f"entries ({len(xs)})",
            rasterized=len(xs) > RASTER_ABOVE,
        )
    if data.baseline is not None:
        axes.scatter(
            [data.baseline[0]],
            [data.baseline[1]],
            marker="s",
            s=60,
            color=BASELINE,
            label="baseline",
            zorder=3,
        )
    drawn = [x for x, _ in data.entries] + ([data.baseline[0]] if data.baseline else [])
    if drawn and min(drawn) > 0 and max(drawn) / min(drawn) > 100:
        axes.set_xscale("log")
    axes.set(xlabel=_axis_label(point), ylabel=_axis_label(ranking), title=title)
    axes.grid(alpha=0.3)
    if drawn:
        axes.legend(loc="best", frameon=False)
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


def cached_svg(
    dataset: Dataset,
    *,
    split: str,
    ranking: scoring.Loss,
    point: scoring.Loss,
    version: str,
    slice_name: str = "",
) -> str:
    """The plot of the split, or of one of its slices (its "LOSS@SLICE" scores, §8)."""
    keys = [f"{loss.name}@{slice_name}" if slice_name else loss.name for loss in (ranking, point)]
    key = generation.key(dataset, "plot", split, *keys, version)

    def draw() -> str:
        data = points(dataset, split=split, ranking=keys[0], point=keys[1])
        title = f"{dataset.name}, {'validation' if split == 'val' else split} split"
        title += f", slice {slice_name}" if slice_name else ""
        return scatter_svg(data, ranking=ranking, point=point, title=title)

    return cache.get_or_set(key, draw, timeout=CACHE_SECONDS)
