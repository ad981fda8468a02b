"""The ranking-loss-against-point-loss plot: what it reads, what it draws, what it leaves out."""

import re
import struct
import time

import numpy as np
import pytest
from django.test import Client

import scoring
from challenge_site.leaderboard import plots
from challenge_site.leaderboard.plots import DENSITY_ABOVE, RASTER_ABOVE, Points

from .helpers import INF, add_entry, at, cls, point_only_cls, reg

PLOT = "/challenges/demo/datasets/catalysis/leaderboard/plot.svg"
RANKING = scoring.get_loss("classification", "nlp")
POINT = scoring.get_loss("classification", "01l")


def _points(n: int, *, seed: int = 0) -> Points:
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.05, 0.5, n)
    return Points(x, x + rng.normal(0, 0.05, n), (0.5, 0.7), 3)


def test_plot_draws_finite_entries_and_the_baseline_and_says_what_is_left_out(catalysis, ada):
    add_entry(catalysis, created=at(-5), val=cls(0.29, 0.41), baseline=True)
    for i in range(3):
        add_entry(catalysis, user=ada, created=at(i), val=cls(0.2 + i / 10, 0.3))
    add_entry(catalysis, user=ada, created=at(5), val=cls(INF, 0.3))
    add_entry(catalysis, user=ada, created=at(6), val=point_only_cls(0.1))
    response = Client().get(PLOT)
    assert response.status_code == 200 and response["Content-Type"] == "image/svg+xml"
    svg = response.content.decode()
    assert svg.startswith("<?xml") and "</svg>" in svg
    for text in (
        "catalysis, validation split",
        "nlp: negative log probability",
        "01l: 0/1 loss",
        "entries (3)",
        "baseline",
        "Not drawn: 2 entries with an infinite or n/a value",
    ):
        assert text in svg, text
    page = Client().get("/challenges/demo/datasets/catalysis/leaderboard/").content.decode()
    alt = re.search(r'<img src="[^"]*plot\.svg\?split=val"[^>]*alt="([^"]*)"', page).group(1)
    assert "Scatter plot of nlp (negative log probability, vertical) against 01l" in alt
    assert "one circle per entry" in alt
    assert "2 entries with an infinite or n/a value are not drawn." in alt


def test_regression_plot_is_nlpd_against_nmse(gaze, ada):
    add_entry(gaze, created=at(-5), val=reg(1.1, 1.0), baseline=True)
    add_entry(gaze, user=ada, created=at(0), val=reg(-0.5, 0.01))
    add_entry(gaze, user=ada, created=at(1), val=reg(0.3, 0.5))
    svg = Client().get("/challenges/demo/datasets/gaze/leaderboard/plot.svg").content.decode()
    assert "nlpd: negative log predictive density" in svg and "nmse: normalised mean" in svg
    assert "entries (2)" in svg and "Not drawn" not in svg


def test_points_are_read_into_arrays_without_the_baseline_or_non_finite_values(catalysis, ada):
    add_entry(catalysis, created=at(-5), val=cls(0.29, 0.41), baseline=True)
    add_entry(catalysis, user=ada, created=at(0), val=cls(0.2, 0.3))
    add_entry(catalysis, user=ada, created=at(1), val=cls(0.4, 0.1))
    add_entry(catalysis, user=ada, created=at(2), val=cls(-INF, 0.1))
    add_entry(catalysis, user=ada, created=at(3), val=point_only_cls(0.2))
    data = plots.points(catalysis, split="val", ranking="nlp", point="01l")
    assert data.x.dtype == np.float64 and sorted(data.entries) == [(0.1, 0.4), (0.3, 0.2)]
    assert data.baseline == (0.41, 0.29) and data.left_out == 2
    assert plots.left_out_count(catalysis, split="val", ranking="nlp", point="01l") == 2
    empty = plots.points(catalysis.pk, split="test", ranking="nlp", point="01l")
    assert (empty.x.size, empty.baseline, empty.left_out) == (0, None, 0)


def test_many_circles_are_one_embedded_image_and_few_are_vector_circles():
    few = plots.svg(
        Points(np.full(5, 0.1), np.full(5, 0.2), (0.4, 0.3), 0),
        ranking=RANKING,
        point=POINT,
        title="t",
    )
    many = plots.svg(_points(RASTER_ABOVE + 1), ranking=RANKING, point=POINT, title="t")
    assert "<image" not in few and "<image" in many
    assert f"entries ({RASTER_ABOVE + 1})" in many and "as a density" not in many
    assert len(many) < 200_000


def test_a_large_board_is_a_density_with_the_baseline_and_the_top_entries_marked():
    data = _points(DENSITY_ABOVE + 1, seed=4)
    svg = plots.svg(data, ranking=RANKING, point=POINT, title="big")
    assert plots.density(DENSITY_ABOVE + 1) and not plots.density(DENSITY_ABOVE)
    for text in (
        f"entries ({DENSITY_ABOVE + 1}, as a density)",
        "top 10 by ranking loss",
        "baseline",
        "entries per hexagon (log scale)",
        "Not drawn: 3 entries with an infinite or n/a value",
    ):
        assert text in svg, text
    assert "<image" in svg and len(svg) < 200_000


def test_the_drawing_time_does_not_grow_with_the_entries():
    """A hundred thousand points cost about what ten thousand do: the density's grid,
    not the points, is drawn (the legend sits at a fixed place)."""
    timings = []
    for n in (10_000, 100_000):
        data = _points(n, seed=n)
        started = time.perf_counter()
        plots.svg(data, ranking=RANKING, point=POINT, title="t")
        timings.append(time.perf_counter() - started)
    assert timings[1] < 3 * timings[0] + 0.5, timings


def _copy_bytes(rows, *, fields: int = 3) -> bytes:
    """A binary COPY as PostgreSQL writes it: header, rows of (int8, bool, float8), trailer."""
    body = b"".join(
        struct.pack(">hiqibid", fields, 8, submission, 1, ranking, 8, value)
        for submission, ranking, value in rows
    )
    return b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0) + body + struct.pack(">h", -1)


def test_a_binary_copy_is_read_into_arrays_without_python_rows():
    rows = [(7, True, 0.25), (7, False, 0.5), (9, True, INF), (10, False, float("nan"))]
    submission, ranking, value = plots.parse_copy(_copy_bytes(rows))
    assert submission.tolist() == [7, 7, 9, 10] and ranking.tolist() == [1, 0, 1, 0]
    assert value[:3].tolist() == [0.25, 0.5, INF] and np.isnan(value[3])
    empty = plots.parse_copy(_copy_bytes([]))
    assert [part.size for part in empty] == [0, 0, 0]
    with pytest.raises(ValueError, match="layout"):
        plots.parse_copy(_copy_bytes(rows, fields=2))
