"""leaderboard.forest: the forest plot of one leaderboard page (scoring.md §5): each
entry's 95 % interval under the sort loss, in rank order, as SVG; its ETag follows the
intervals, and it is shown under the board's rules.

The bootstrap fields are written on the Score rows directly (helpers.set_interval), as
intervals.py would."""

import math

import pytest
from django.test import Client

from challenge_site.leaderboard import forest, services
from challenge_site.leaderboard.forest import _sentence
from challenge_site.submissions.models import Score

from .helpers import add_entry, at, cls, set_interval

URL = "/challenges/demo/datasets/catalysis/leaderboard/"
FOREST = URL + "forest.svg"


def test_forest_plot_draws_the_page_rows(board, catalysis, ada):
    long = add_entry(catalysis, user=ada, created=at(9), val=cls(0.6, 0.3), method="M" * 80)
    set_interval(long, own=(0.5, 0.7), leader=(0.3, 0.5), tied=False)
    response = Client().get(FOREST)
    assert response.status_code == 200 and response["Content-Type"] == "image/svg+xml"
    svg = response.content.decode()
    assert svg.startswith("<?xml") and "</svg>" in svg
    for text in (
        "catalysis, validation split, all entries: 95 % intervals of nlp, entries 1–6",
        "1. Ada L. · BNN",
        "2. grace · SVM",
        "3. baseline · Baseline",
        "4. alan · Tree",
        "5. alan · New",
        "nlp: negative log probability (lower is better)",
        "top tier: cannot be told apart from the leader",
        "other entries",
        "An arrow at an edge: the interval reaches ∞",
        "A dot without a bar: its interval is not computed yet.",
    ):
        assert text in svg, text
    assert "6. Ada L. · MMMMMMM" in svg and "M" * 60 not in svg and "…" in svg
    best = Client().get(FOREST + "?view=best").content.decode()
    assert "each participant's best entry" in best and "Tree" in best and "New" not in best


def test_forest_plot_etag_changes_with_an_interval(board, django_assert_num_queries):
    client = Client()
    first = client.get(FOREST)
    assert "no-cache" in first["Cache-Control"] and "private" in first["Cache-Control"]
    assert client.get(FOREST, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304
    with django_assert_num_queries(4):  # dataset, ranking, baseline, pivot: drawn from cache
        again = client.get(FOREST)
    assert again.content == first.content and again["ETag"] == first["ETag"]
    set_interval(board["new"], own=(0.45, 0.55), leader=(0.2, 0.4), tied=False)
    changed = client.get(FOREST, HTTP_IF_NONE_MATCH=first["ETag"])
    assert changed.status_code == 200 and changed["ETag"] != first["ETag"]
    assert "not computed yet" not in changed.content.decode()
    assert "An arrow at an edge" in changed.content.decode()  # Alan's upper bound is ∞


def test_forest_plot_options_and_visibility(board, catalysis, ada):
    client = Client()
    assert client.get(FOREST + "?sort=lift").status_code == 404  # lift has no intervals
    assert client.get(FOREST + "?page=2").status_code == 404
    assert client.get(FOREST + "?split=train").status_code == 400
    add_entry(catalysis, user=ada, created=at(10), test=cls(0.8642, 0.9753), method="Secret")
    hidden = client.get(FOREST + "?split=test")  # after the deadline, not published
    assert hidden.status_code == 403 and "not published" in hidden.content.decode()
    assert "0.8642" not in hidden.content.decode()
    catalysis.challenge.results_published = True
    catalysis.challenge.save()
    assert client.get(FOREST + "?split=test").status_code == 200


def test_a_far_baseline_is_an_arrow_at_the_edge_and_the_top_tier_keeps_the_width(board):
    """A baseline 20 times as far as the top tier is wide no longer squeezes the leaders'
    bars: the range is the top tier's widened twice its width on each side, and the
    baseline is an arrow at the right edge with its score beside it."""
    Score.objects.filter(submission=board["baseline"], split="val", loss="nlp").update(
        value=5.4321, lower=5.2, upper=5.7
    )
    svg = Client().get(FOREST).content.decode()
    assert "5.432" in svg
    assert _sentence(forest.BEYOND) in svg
    data = forest.bars(
        services.leaderboard_page(
            board=services.parse_board(
                dataset=board["ada"].dataset, split="val", sort="nlp", view="all"
            )
        ).rows,
        sort=board["ada"].dataset.shown_losses()[0],
    )
    left, right = forest._limits(data)
    # The top tier (Ada 0.19–0.23, Grace 0.22–0.28) is 0.09 wide: up to 0.28 + 0.18, and
    # down to the lowest bound drawn (0.19), padded by 6 % of the range.
    assert left == pytest.approx(0.19 - 0.27 * 0.06)
    assert right == pytest.approx(0.46 + 0.27 * 0.06)


def test_the_range_is_every_entry_while_they_are_near_the_top_tier():
    near = [
        forest.Bar(1, "1. a", 0.20, (0.19, 0.23), False, True),
        forest.Bar(2, "2. b", 0.40, (0.35, math.inf), False, False),
        forest.Bar(3, "3. c", 0.30, (0.27, 0.33), True, False),
    ]
    # 0.19 to 0.40 is 5.25 times the tier's 0.04: zoomed to 0.19–0.31; at 0.35 it is not.
    assert forest._limits(near) == pytest.approx((0.19 - 0.0072, 0.31 + 0.0072))
    near[1] = forest.Bar(2, "2. b", 0.35, (0.34, 0.36), False, False)
    assert forest._limits(near) == pytest.approx((0.19 - 0.0102, 0.36 + 0.0102))
    # Without intervals the tier is the leader's score alone: its 6 % is the scale.
    points = [
        forest.Bar(1, "1. a", 1.0, None, False, False),
        forest.Bar(2, "2. b", 1.2, None, True, False),
    ]
    assert forest._limits(points) == pytest.approx((1.0 - 0.012, 1.2 + 0.012))
    points.append(forest.Bar(3, "3. c", 100.0, None, False, False))
    assert forest._limits(points)[1] < 2
    # A leader at 0 alone gives no scale to zoom on: every entry is shown.
    zero = [
        forest.Bar(1, "1. a", 0.0, None, False, False),
        forest.Bar(2, "2. b", 3.0, None, False, False),
    ]
    assert forest._limits(zero) == pytest.approx((-0.18, 3.18))
