"""leaderboard.forest: the forest plot of one leaderboard page (scoring.md §5): each
entry's 95 % interval under the sort loss, in rank order, as SVG; its ETag follows the
intervals, and it is shown under the board's rules.

The bootstrap fields are written on the Score rows directly (helpers.set_interval), as
intervals.py would."""

from django.test import Client

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
