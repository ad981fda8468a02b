"""leaderboard.display: honest rankings (scoring.md §5) where people decide: ± intervals
on the leaderboard, the top tier shaded, rank intervals, the link to the forest plot, at
no cost in queries (the plot: test_forest.py; the results sentence: test_separation.py).

The bootstrap fields are written on the Score rows directly (helpers.set_interval), as
intervals.py would."""

import re

import pytest
from django.test import Client

from tests.pages import page_text

from .helpers import add_entry, at, cls, page_exact_values, page_ids, set_interval

URL = "/challenges/demo/datasets/catalysis/leaderboard/"
FOREST = URL + "forest.svg"


def _row(html: str, pk: int) -> str:
    return next(
        row
        for row in re.findall(r"<tr[^>]*>.*?</tr>", html, re.S)
        if f'href="/submissions/{pk}/"' in row
    )


def test_scores_show_their_interval_and_the_top_tier_is_shaded(board):
    response = Client().get(URL)
    html, text = response.content.decode(), page_text(response)
    ada, grace, alan, new, baseline = (
        board[k] for k in ("ada", "grace", "alan", "new", "baseline")
    )
    assert page_ids(response) == [ada.pk, grace.pk, baseline.pk, alan.pk, new.pk]
    # Asymmetric about the score: its distances to the bounds (+0.03 up, −0.01 down), the
    # bounds in the title and in words for screen readers.
    assert "0.2 +0.030/−0.010 (95 % interval 0.19 to 0.23)" in text
    assert 'title="95 % interval: 0.19 to 0.23" aria-hidden="true">' in html
    # Symmetric: ± half the width.
    assert "0.25 ± 0.030 (95 % interval 0.22 to 0.28)" in text
    assert "0.4 +∞/−0.050 (95 % interval 0.35 to ∞)" in text
    assert 'title="95 % interval: 0.35 to ∞"' in html
    # Still computing: the score alone, no claim.
    assert "±" not in _row(html, new.pk) and ">0.5</span>" in _row(html, new.pk)
    # The exact values stay where they were.
    assert page_exact_values(response)[0][:1] == ["0.2"]
    # The top tier: the leader and Grace, shaded and marked; Alan and the baseline not.
    assert re.search(r'<tr class="tied">\s*<td class="num"><span class="tie"', _row(html, ada.pk))
    assert "the leader: the top tier" in _row(html, ada.pk)
    tied = (
        'title="cannot be told apart from the leader: the 95 % interval of the difference holds 0"'
    )
    assert tied in _row(html, grace.pk) and '<tr class="tied">' in _row(html, grace.pk)
    assert "tied" not in _row(html, alan.pk) and "≈" not in _row(html, alan.pk)
    assert '<tr class="baseline">' in _row(html, baseline.pk)
    assert html.count('<tr class="tied">') == 2
    # The legend above the table.
    legend = text.split("Shaded rows marked ≈")[1].split("Rank Method")[0]
    assert "B = 1000 paired bootstrap resamples" in legend and "0.231 ± 0.012" in legend
    assert "“0.231 +0.014/−0.009” its distances to the upper and the lower bound" in legend
    assert "Scores shown without an interval have none yet." in legend
    assert "Rank interval" not in text  # the all-submissions view has no rank intervals


def test_no_interval_no_legend_and_other_sorts_have_their_own_tier(catalysis, board):
    html = Client().get(URL + "?sort=01l").content.decode()
    assert 'class="tied"' not in html  # no 01l intervals: no tier claimed
    assert "Forest plot" not in html  # nothing to draw under 01l
    from challenge_site.submissions.models import Score

    Score.objects.update(lower=None, upper=None, tied_with_leader=None, leader_lower=None)
    response = Client().get(URL)
    assert "Shaded rows" not in page_text(response) and "±" not in page_text(response)
    assert "Forest plot" not in page_text(response)


def test_rank_interval_column_in_the_best_view_only(board):
    response = Client().get(URL + "?view=best")
    html, text = response.content.decode(), page_text(response)
    assert page_ids(response) == [
        board["ada"].pk,
        board["grace"].pk,
        board["baseline"].pk,
        board["alan"].pk,
    ]
    assert "Rank Rank interval Method" in text
    assert '<td class="num rank-interval">1–2</td>' in _row(html, board["ada"].pk)
    assert '<td class="num rank-interval">3</td>' in _row(html, board["alan"].pk)
    assert '<td class="num rank-interval">–</td>' in _row(html, board["baseline"].pk)
    assert "the baseline is not ranked" in text
    assert "rank-interval" not in Client().get(URL).content.decode()


def test_the_page_links_a_forest_plot_of_its_rows(board):
    html = Client().get(URL + "?view=best").content.decode()
    src = re.search(r'<img src="([^"]*forest\.svg[^"]*)"[^>]*alt="([^"]*)"', html)
    assert src.group(1) == f"{FOREST}?split=val&amp;sort=nlp&amp;view=best&amp;page=1"
    assert "Forest plot of nlp" in src.group(2) and "same numbers" in src.group(2)
    assert "<summary>Forest plot" in html


@pytest.mark.parametrize("n", [3, 30])
@pytest.mark.parametrize("path", ["", "?view=best", "?sort=brier"])
def test_intervals_cost_the_page_no_query(
    catalysis, ada, grace, alan, n, path, django_assert_num_queries
):
    users = [ada, grace, alan]
    baseline = add_entry(catalysis, created=at(-10), val=cls(0.29, 0.4), baseline=True)
    set_interval(baseline, own=(0.2, 0.4), leader=(0.0, 0.1), tied=True)
    for i in range(n):
        entry = add_entry(catalysis, user=users[i % 3], created=at(i), val=cls(0.2 + i / 100, 0.3))
        for loss in ("nlp", "01l", "brier"):
            set_interval(entry, loss, own=(0.1, 0.5), leader=(0.0, 0.2), tied=i < 2, rank=(1, 3))
    Client().get(URL + path)  # the first view has the plot drawn (in-process tasks)
    with django_assert_num_queries(7):  # as test_views.test_queries_do_not_grow_with_submissions
        response = Client().get(URL + path)
    assert response.status_code == 200 and "±" in page_text(response)


# --- Results ---------------------------------------------------------------------------
