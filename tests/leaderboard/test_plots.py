"""The ranking-loss-against-point-loss plot: what it draws, what it leaves out, its cache."""

import re

from django.test import Client

import scoring
from challenge_site.leaderboard.plots import RASTER_ABOVE, Points, scatter_svg

from .helpers import INF, add_entry, at, cls, point_only_cls, reg

PLOT = "/challenges/demo/datasets/catalysis/leaderboard/plot.svg"


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
    assert "2 entries with an infinite or n/a value are not drawn." in alt


def test_regression_plot_is_nlpd_against_nmse(gaze, ada):
    add_entry(gaze, created=at(-5), val=reg(1.1, 1.0), baseline=True)
    add_entry(gaze, user=ada, created=at(0), val=reg(-0.5, 0.01))
    add_entry(gaze, user=ada, created=at(1), val=reg(0.3, 0.5))
    svg = Client().get("/challenges/demo/datasets/gaze/leaderboard/plot.svg").content.decode()
    assert "nlpd: negative log predictive density" in svg and "nmse: normalised mean" in svg
    assert "entries (2)" in svg and "Not drawn" not in svg


def test_plot_is_cached_until_a_score_changes(catalysis, ada, django_assert_num_queries):
    add_entry(catalysis, user=ada, created=at(0), val=cls(0.3, 0.2))
    client = Client()
    with django_assert_num_queries(2):  # dataset (its generation), the points
        first = client.get(PLOT)
    with django_assert_num_queries(1):  # dataset: drawn from the cache (same generation)
        again = client.get(PLOT)
    assert again.content == first.content and again["ETag"] == first["ETag"]
    assert client.get(PLOT, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304
    assert "no-cache" in first["Cache-Control"]

    add_entry(catalysis, user=ada, created=at(1), val=cls(0.4, 0.25))
    changed = client.get(PLOT)
    assert changed["ETag"] != first["ETag"] and "entries (2)" in changed.content.decode()


def test_many_entries_are_drawn_as_one_embedded_image():
    ranking = scoring.get_loss("classification", "nlp")
    point = scoring.get_loss("classification", "01l")
    few = scatter_svg(
        Points([(0.1, 0.2)] * 5, (0.4, 0.3), 0), ranking=ranking, point=point, title="t"
    )
    many = Points([(i / 3000, i / 2000) for i in range(RASTER_ABOVE + 1)], (0.4, 0.3), 0)
    svg = scatter_svg(many, ranking=ranking, point=point, title="t")
    assert "<image" not in few and "<image" in svg
    assert len(svg) < 200_000
