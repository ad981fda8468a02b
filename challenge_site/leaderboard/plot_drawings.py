"""When the loss-against-loss plots (plots.py) are drawn: by a worker, one at a time per plot.

A request never draws. The page and the plot view, seeing a plot older than its
dataset's generation (or none), call :func:`request`; so does every change of a
dataset's listed scores, once it commits (generation.bump), for each plot the dataset
has. The first request sends one task (``leaderboard.draw_plot``, queue ``boards``);
requests that arrive while one is queued or drawing only raise ``requested``, and the
drawing that finishes sees it went up and sends the next: a burst of changes costs two
drawings, not one each. Meanwhile pages serve the latest finished drawing (BoardPlot.svg)
with its generation. A drawing whose worker died is taken over after DRAW_TIMEOUT, and
the beat's sweep sends a drawing for any plot left behind (a lost task, a broker down).
"""

import logging
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial

from django.db import IntegrityError, transaction
from django.db.models import F, Q, Subquery
from django.db.models.functions import Greatest
from django.utils import timezone
from kombu.exceptions import OperationalError

import scoring
from challenge_site.celery import app as celery_app
from datasets.models import Dataset

from . import plots
from .models import BoardPlot

logger = logging.getLogger(__name__)

TASK = "leaderboard.draw_plot"
# A drawing that started this long ago is taken to have died with its worker (a million
# entries take well under a minute).
DRAW_TIMEOUT = timedelta(minutes=5)
# A drawing sent this long ago and never started is taken to be lost (the sweep sends it
# again; a second copy finds nothing to do).
QUEUE_TIMEOUT = timedelta(minutes=2)


# Plots with a drawing left to do: a later generation asked for, or none drawn yet.
BEHIND = Q(requested__gt=F("drawn")) | Q(drawn_at__isnull=True)


@dataclass(frozen=True)
class Plot:
    """Which plot: a dataset split's ranking against its point loss (Score.loss keys)."""

    dataset_id: int
    split: str
    ranking: str
    point: str

    def rows(self):
        return BoardPlot.objects.filter(
            dataset_id=self.dataset_id, split=self.split, ranking=self.ranking, point=self.point
        )

    def args(self) -> tuple:
        return (self.dataset_id, self.split, self.ranking, self.point)


def send(plot: Plot) -> None:
    """Send the drawing's task (by name); if the broker is down, the sweep sends it later."""
    try:
        celery_app.signature(TASK, args=plot.args()).apply_async()
    except OperationalError:
        logger.warning("broker unavailable: plot %s waits for the sweep", plot)


def _row(plot: Plot) -> BoardPlot:
    defaults = {"dataset_id": plot.dataset_id, "split": plot.split}
    try:
        with transaction.atomic():
            return BoardPlot.objects.get_or_create(
                **defaults, ranking=plot.ranking, point=plot.point
            )[0]
    except IntegrityError:  # created meanwhile by another request
        return plot.rows().defer("svg").get()


def request(plot: Plot, *, generation: int, row: BoardPlot | None = None) -> bool:
    """Ask for a drawing of the dataset as of ``generation`` or later (``row``: the plot's
    row if the caller read it). True if this call sent the task."""
    row = row or _row(plot)
    if row.requested >= generation and (row.queued or row.drawing_since):
        return False  # asked for already: no write at all
    now = timezone.now()
    first = BoardPlot.objects.filter(pk=row.pk, queued=False).update(
        requested=Greatest(F("requested"), generation), queued=True, requested_at=now
    )
    if first:
        send(plot)
        return True
    BoardPlot.objects.filter(pk=row.pk, requested__lt=generation).update(requested=generation)
    return False


def latest(dataset: Dataset, plot: Plot, *, svg: bool = True) -> BoardPlot | None:
    """The plot's row for a page or the plot view, with ``behind`` set (the dataset changed
    since the drawing: a new one is on its way); asks for a drawing when the row is older
    than ``dataset`` (read by this request) or missing. Where tasks run in-process the
    drawing is made by the request's send, and the row read again."""
    rows = plot.rows() if svg else plot.rows().defer("svg")
    row = rows.first()
    if row is None or row.drawn_at is None or row.drawn < dataset.generation:
        sent = request(plot, generation=dataset.generation, row=row)
        if (sent and celery_app.conf.task_always_eager) or row is None:
            row = rows.first()
    if row is not None:
        row.behind = row.drawn_at is not None and row.drawn < dataset.generation
    return row


def dataset_changed(dataset_id: int) -> None:
    """After a change of the dataset's listed scores commits: a drawing for each of its
    plots that is older (the page asks for plots nobody has viewed yet)."""
    # One query: the dataset's generation read with its rows (none if it went).
    generation = Dataset.objects.filter(pk=dataset_id).values("generation")[:1]
    # boardplot_unique_plot leads with the dataset: a few rows per dataset.
    rows = (
        BoardPlot.objects.filter(dataset_id=dataset_id)
        .annotate(current=Subquery(generation))
        .filter(Q(drawn__lt=F("current")) | Q(drawn_at__isnull=True))
        .defer("svg")
    )
    for row in rows:
        request(
            Plot(dataset_id, row.split, row.ranking, row.point), generation=row.current, row=row
        )


def _claim(plot: Plot, *, now: datetime) -> tuple[int, datetime] | None:
    """Start a drawing: (the dataset's generation it reads, its start), or None if one is
    under way or the latest drawing is current."""
    with transaction.atomic():
        row = plot.rows().defer("svg").select_for_update().first()
        if row is None or (row.drawing_since and row.drawing_since >= now - DRAW_TIMEOUT):
            return None  # a drawing is under way: its end sends the next one if needed
        generation = (
            Dataset.objects.filter(pk=plot.dataset_id).values_list("generation", flat=True).first()
        )
        if generation is None or (row.drawn_at is not None and row.drawn >= generation):
            BoardPlot.objects.filter(pk=row.pk).update(queued=False)
            return None
        BoardPlot.objects.filter(pk=row.pk).update(drawing_since=now, queued=False)
        return generation, now


@dataclass(frozen=True)
class Drawing:
    svg: str
    entries: int
    left_out: int
    seconds: float


def _losses(dataset: Dataset, plot: Plot) -> tuple[scoring.Loss, scoring.Loss, str]:
    """The two losses of the plot's keys ("nlp" or "nlp@SLICE") and the slice's name."""
    known = {loss.name: loss for loss in scoring.losses_for(dataset.task)}
    known |= {loss.name: loss for loss in dataset.shown_losses()}
    ranking, _, slice_name = plot.ranking.partition("@")
    return known[ranking], known[plot.point.partition("@")[0]], slice_name


def _make(plot: Plot) -> Drawing:
    started = time.monotonic()
    dataset = Dataset.objects.get(pk=plot.dataset_id)
    ranking, point, slice_name = _losses(dataset, plot)
    data = plots.points(plot.dataset_id, split=plot.split, ranking=plot.ranking, point=plot.point)
    title = plots.title(dataset, split=plot.split, slice_name=slice_name)
    svg = plots.svg(data, ranking=ranking, point=point, title=title)
    return Drawing(svg, data.x.size, data.left_out, time.monotonic() - started)


def draw(*, dataset_id: int, split: str, ranking: str, point: str) -> bool:
    """The worker's drawing of one plot unless one is under way or current; True if drawn."""
    plot = Plot(dataset_id, split, ranking, point)
    claimed = _claim(plot, now=timezone.now())
    if claimed is None:
        return False
    generation, since = claimed
    try:
        drawing = _make(plot)
    except BaseException:
        _release(plot, generation, since, drawing=None)
        raise
    _release(plot, generation, since, drawing=drawing)
    return True


def _release(plot: Plot, generation: int, since: datetime, *, drawing: Drawing | None) -> None:
    """End a drawing: keep it (``drawing``; None if it failed) unless a later one was kept
    meanwhile, and send the next if requests for a later generation arrived."""
    with transaction.atomic():
        row = plot.rows().defer("svg").select_for_update().first()
        if row is None:  # the dataset went
            return
        fields = ["queued"]
        if row.drawing_since == since:  # not taken over meanwhile
            row.drawing_since = None
            fields.append("drawing_since")
        if drawing is not None and (row.drawn_at is None or generation > row.drawn):
            row.drawn, row.drawn_at, row.svg = generation, timezone.now(), drawing.svg
            row.seconds, row.entries, row.left_out = (
                drawing.seconds,
                drawing.entries,
                drawing.left_out,
            )
            fields += ["drawn", "drawn_at", "svg", "seconds", "entries", "left_out"]
        # A task sent during the drawing found it under way and did nothing: send again.
        again = drawing is not None and row.requested > row.drawn
        row.queued = again
        if again:
            row.requested_at = timezone.now()
            fields.append("requested_at")
            transaction.on_commit(partial(send, plot), robust=True)
        row.save(update_fields=fields)


def sweep(*, now: datetime) -> list[tuple]:
    """Send a drawing for every plot asked for and left behind: sent QUEUE_TIMEOUT ago
    and never started (or never sent: a broker that was down), or drawing since
    DRAW_TIMEOUT (a worker that died)."""
    # boardplot_behind_idx: the few plots with work left.
    behind = BoardPlot.objects.filter(BEHIND).filter(
        Q(drawing_since__isnull=True, requested_at__lt=now - QUEUE_TIMEOUT)
        | Q(drawing_since__isnull=True, requested_at__isnull=True)
        | Q(drawing_since__lt=now - DRAW_TIMEOUT)
    )
    found = list(behind.values_list("pk", "dataset_id", "split", "ranking", "point"))
    for pk, *args in found:
        BoardPlot.objects.filter(pk=pk).update(queued=True, requested_at=now)
        send(Plot(*args))
    return [tuple(args) for _, *args in found]
