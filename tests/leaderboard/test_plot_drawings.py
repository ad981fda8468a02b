"""plot_drawings: the plots are drawn by a worker, one drawing per plot at a time; pages
serve the latest finished drawing and never draw."""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from challenge_site.leaderboard import generation, plot_drawings, plots
from challenge_site.leaderboard.models import BoardPlot
from challenge_site.leaderboard.plot_drawings import Plot
from datasets.models import Dataset
from tests.factories import AFTER

from .helpers import add_entry, at, cls

BOARD = "/challenges/demo/datasets/catalysis/leaderboard/"
PLOT = BOARD + "plot.svg"


@pytest.fixture
def sent(monkeypatch):
    """Tasks sent, as a broker would hold them: nothing is drawn until a test draws."""
    found = []
    monkeypatch.setattr(plot_drawings, "send", lambda plot: found.append(plot))
    return found


@pytest.fixture
def board(catalysis, ada):
    add_entry(catalysis, created=at(-5), val=cls(0.5, 0.5), baseline=True)
    add_entry(catalysis, user=ada, created=at(0), val=cls(0.3, 0.2))
    return Plot(catalysis.pk, "val", "nlp", "01l")


def _generation(dataset) -> int:
    return Dataset.objects.get(pk=dataset.pk).generation


def board_dataset(plot: Plot) -> Dataset:
    return Dataset.objects.get(pk=plot.dataset_id)


def _draw(plot: Plot) -> bool:
    return plot_drawings.draw(
        dataset_id=plot.dataset_id, split=plot.split, ranking=plot.ranking, point=plot.point
    )


def test_before_the_first_drawing_the_plot_answers_503_and_the_page_has_no_image(board, sent):
    response = Client().get(PLOT)
    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert response.content.decode() == "The plot is being drawn; try again in a few seconds.\n"
    page = Client().get(BOARD).content.decode()
    assert "The plot is being drawn." in page and "plot.svg" not in page
    row = BoardPlot.objects.get()
    assert sent == [board]  # the page's request found the drawing queued: no second task
    assert (row.requested, row.drawn, row.queued) == (_generation(board_dataset(board)), 0, True)


def test_the_worker_draws_and_the_view_serves_the_drawing_with_an_etag(
    board, sent, django_assert_num_queries
):
    Client().get(PLOT)
    assert _draw(board) is True
    row = BoardPlot.objects.get()
    assert row.drawn == _generation(board_dataset(board)) and not row.queued
    assert (row.entries, row.left_out, row.drawing_since) == (1, 0, None)
    assert row.seconds > 0 and row.drawn_at is not None and "entries (1)" in row.svg
    client = Client()
    with django_assert_num_queries(2):  # the dataset, the plot's row: nothing drawn
        response = client.get(PLOT)
    assert response.content.decode() == row.svg and response["ETag"].endswith(f'-{row.drawn}"')
    assert "no-cache" in response["Cache-Control"]
    assert client.get(PLOT, HTTP_IF_NONE_MATCH=response["ETag"]).status_code == 304
    assert _draw(board) is False  # current already: a second copy of the task does nothing
    assert sent == [board]


def test_a_change_serves_the_old_drawing_with_a_note_until_the_new_one(board, sent, catalysis, ada):
    Client().get(PLOT)
    _draw(board)
    old = BoardPlot.objects.get()
    add_entry(catalysis, user=ada, created=at(1), val=cls(0.4, 0.25))
    response = Client().get(PLOT)
    assert response.status_code == 200 and response.content.decode() == old.svg
    page = Client().get(BOARD).content.decode()
    assert "Being redrawn:</strong> the dataset's entries changed since this drawing." in page
    # Never how many changes, nor the generation: that would count hidden test entries.
    assert "generation" not in page and " time" not in page.split("Being redrawn")[1][:80]
    assert sent == [board, board]  # one more drawing asked for, once
    _draw(board)
    response = Client().get(PLOT)
    assert "entries (2)" in response.content.decode()
    assert "Being redrawn" not in Client().get(BOARD).content.decode()


def test_requests_during_a_drawing_make_one_more_drawing_after_it(
    board, sent, catalysis, ada, django_capture_on_commit_callbacks
):
    Client().get(PLOT)
    claimed = plot_drawings._claim(board, now=timezone.now())
    assert claimed is not None and claimed[0] == _generation(catalysis)
    add_entry(catalysis, user=ada, created=at(1), val=cls(0.4, 0.25))
    for _ in range(3):  # three views during the drawing: one task, found busy
        Client().get(BOARD)
    assert sent == [board, board] and _draw(board) is False
    drawing = plot_drawings.Drawing("<svg>first</svg>", 1, 0, 0.1)
    with django_capture_on_commit_callbacks(execute=True):
        plot_drawings._release(board, claimed[0], claimed[1], drawing=drawing)
    row = BoardPlot.objects.get()
    assert (row.drawn, row.svg, row.queued) == (claimed[0], "<svg>first</svg>", True)
    assert sent == [board] * 3  # the release sent the next drawing
    assert _draw(board) is True
    assert BoardPlot.objects.get().drawn == _generation(catalysis)


def test_a_change_that_commits_asks_to_redraw_the_datasets_plots(
    board, sent, catalysis, django_capture_on_commit_callbacks
):
    Client().get(PLOT)
    _draw(board)
    with django_capture_on_commit_callbacks(execute=False) as pending:
        generation.bump(dataset_id=catalysis.pk)
    assert len(sent) == 1  # nothing before the commit
    for callback in pending:
        callback()
    row = BoardPlot.objects.get()
    assert sent == [board, board] and row.queued and row.requested == _generation(catalysis)
    plot_drawings.dataset_changed(catalysis.pk)  # a second bump of the same change
    assert len(sent) == 2


def test_the_sweep_sends_lost_drawings_and_takes_over_dead_ones(board, sent, catalysis):
    Client().get(PLOT)
    now = timezone.now()
    assert plot_drawings.sweep(now=now) == []  # sent just now: not lost yet
    later = now + plot_drawings.QUEUE_TIMEOUT + timedelta(seconds=1)
    assert plot_drawings.sweep(now=later) == [board.args()]
    assert len(sent) == 2
    dead = plot_drawings._claim(board, now=now)
    assert plot_drawings._claim(board, now=now) is None  # single flight
    assert plot_drawings.sweep(now=later) == []  # drawing, not dead yet
    taken = now + plot_drawings.DRAW_TIMEOUT + timedelta(seconds=1)
    assert plot_drawings.sweep(now=taken) == [board.args()]
    fresh = plot_drawings._claim(board, now=taken)
    assert fresh is not None
    plot_drawings._release(board, *fresh, drawing=plot_drawings.Drawing("<svg>new</svg>", 1, 0, 1))
    # The dead worker's late end keeps neither its drawing over the newer one nor a lock.
    plot_drawings._release(board, *dead, drawing=plot_drawings.Drawing("<svg>old</svg>", 1, 0, 9))
    row = BoardPlot.objects.get()
    assert (row.svg, row.drawing_since, row.seconds) == ("<svg>new</svg>", None, 1)


def test_a_failed_drawing_is_logged_and_left_for_the_sweep(board, sent, monkeypatch, caplog):
    from challenge_site.leaderboard import tasks

    Client().get(PLOT)

    def broken(*args, **kwargs):
        raise RuntimeError("out of memory")

    monkeypatch.setattr(plots, "svg", broken)
    assert tasks.draw_plot(*board.args()) is False
    row = BoardPlot.objects.get()
    assert (row.drawn, row.queued, row.drawing_since) == (0, False, None)
    assert "out of memory" in caplog.text
    assert Client().get(PLOT).status_code == 503
    later = timezone.now() + plot_drawings.QUEUE_TIMEOUT + timedelta(seconds=1)
    assert tasks.sweep_boards()["plots"] == []  # not lost yet: the clock stands still
    assert plot_drawings.sweep(now=later) == [board.args()]


def test_a_hidden_split_is_never_served_nor_asked_for(board, sent, catalysis):
    catalysis.challenge.results_published = False
    catalysis.challenge.save()
    with_test = Plot(catalysis.pk, "test", "nlp", "01l")
    response = Client().get(PLOT + "?split=test")
    assert response.status_code == 403 and "<svg" not in response.content.decode()
    assert not BoardPlot.objects.filter(split="test").exists() and with_test not in sent


def test_in_process_tasks_draw_within_the_request(board):
    """The embedded default (no broker): the request's send draws at once."""
    response = Client().get(PLOT)
    assert response.status_code == 200 and "entries (1)" in response.content.decode()
    assert BoardPlot.objects.get().drawn == _generation(board_dataset(board))


def test_a_slices_plot_is_drawn_even_before_any_entry(catalysis, ada, sent):
    plot = Plot(catalysis.pk, "val", "nlp@shifted", "01l@shifted")
    dataset = Dataset.objects.get(pk=catalysis.pk)
    plot_drawings.request(plot, generation=dataset.generation)
    assert _draw(plot) is True
    row = BoardPlot.objects.get(ranking="nlp@shifted")
    assert "slice shifted" in row.svg and "No entry with finite values yet" in row.svg
    assert row.drawn_at == AFTER and row.seconds > 0  # the clock stands still at AFTER
