"""Honest rankings (scoring.md §5) where people decide: ± intervals on the leaderboard and
the results, the top tier shaded, rank intervals, the forest plot and the results sentence.

The bootstrap fields are written on the Score rows directly (helpers.set_interval), as
intervals.py would."""

import re

import pytest
from django.test import Client

from tests.pages import page_text

from .helpers import INF, add_entry, at, cls, page_exact_values, page_ids, set_interval

URL = "/challenges/demo/datasets/catalysis/leaderboard/"
FOREST = URL + "forest.svg"
RESULTS = "/challenges/demo/results/"


@pytest.fixture
def board(catalysis, ada, grace, alan):
    """Ada leads, Grace cannot be told apart from her, Alan can; one entry still computing."""
    entries = {
        "baseline": add_entry(
            catalysis, created=at(-5), val=cls(0.3, 0.4), baseline=True, method="Baseline"
        ),
        "ada": add_entry(catalysis, user=ada, created=at(0), val=cls(0.2, 0.3), method="BNN"),
        "grace": add_entry(catalysis, user=grace, created=at(1), val=cls(0.25, 0.3), method="SVM"),
        "alan": add_entry(catalysis, user=alan, created=at(2), val=cls(0.4, 0.3), method="Tree"),
        "new": add_entry(catalysis, user=alan, created=at(3), val=cls(0.5, 0.3), method="New"),
    }
    set_interval(entries["ada"], own=(0.19, 0.23), leader=(0.0, 0.0), tied=True, rank=(1, 2))
    set_interval(entries["grace"], own=(0.22, 0.28), leader=(-0.01, 0.09), tied=True, rank=(1, 2))
    set_interval(entries["alan"], own=(0.35, INF), leader=(0.1, 0.3), tied=False, rank=(3, 3))
    set_interval(entries["baseline"], own=(0.27, 0.33), leader=(0.05, 0.15), tied=False)
    return entries


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
    # ± half the width, the bounds in the title and in words for screen readers.
    assert "0.2 ± 0.020 (95 % interval 0.19 to 0.23)" in text
    assert 'title="95 % interval: 0.19 to 0.23" aria-hidden="true">' in html
    assert "0.25 ± 0.030 (95 % interval 0.22 to 0.28)" in text
    assert "0.4 ± ∞ (95 % interval 0.35 to ∞)" in text
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
    assert "Scores shown without ± have no interval yet." in legend
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
    with django_assert_num_queries(7):  # as test_pages.test_queries_do_not_grow_with_submissions
        response = Client().get(URL + path)
    assert response.status_code == 200 and "±" in page_text(response)


# --- Results ---------------------------------------------------------------------------


@pytest.fixture
def final(catalysis, ada, grace):
    catalysis.challenge.results_published = True
    catalysis.challenge.save()
    entries = {
        "ada": add_entry(catalysis, user=ada, created=at(0), test=cls(0.2, 0.3), method="BNN"),
        "ada2": add_entry(catalysis, user=ada, created=at(1), test=cls(0.21, 0.3), method="BNN 2"),
        "grace": add_entry(catalysis, user=grace, created=at(2), test=cls(0.25, 0.3), method="SVM"),
    }
    add_entry(catalysis, created=at(-5), test=cls(0.33, 0.41), baseline=True, method="Baseline")
    set_interval(entries["ada"], split="test", own=(0.18, 0.22), leader=(0.0, 0.0), tied=True)
    return entries


def test_results_say_the_winner_is_ahead_of_the_runner_up(final):
    set_interval(final["grace"], split="test", own=(0.22, 0.28), leader=(0.01, 0.05), tied=False)
    response = Client().get(RESULTS)
    text = page_text(response)
    assert (
        "“BNN” by Ada L. is ahead of the runner-up “SVM” by grace: the difference in nlp is between "
        "0.01 and 0.05 (95 % interval)." in text
    )  # the runner-up is another participant's best, not Ada's second entry
    assert "1 < BNN 0.2 ± 0.020 (95 % interval 0.18 to 0.22) +0.13" in text
    assert 'class="separation separation-ahead"' in response.content.decode()


def test_results_say_when_the_winner_cannot_be_told_apart(final):
    set_interval(final["grace"], split="test", own=(0.2, 0.3), leader=(-0.02, 0.09), tied=True)
    text = page_text(Client().get(RESULTS))
    assert (
        "“BNN” by Ada L. and “SVM” by grace cannot be told apart on this test set: the difference in "
        "nlp is between -0.02 and 0.09 (95 % interval), which holds 0." in text
    )


def test_results_say_when_intervals_are_being_computed(final):
    text = page_text(Client().get(RESULTS))
    assert (
        "Whether “BNN” by Ada L. is ahead of the runner-up “SVM” by grace is not known yet" in text
    )
    assert "being computed" in text and "SVM 0.25 " in text


def test_results_when_the_baseline_leads(catalysis, ada):
    catalysis.challenge.results_published = True
    catalysis.challenge.save()
    add_entry(catalysis, created=at(-5), test=cls(0.1, 0.41), baseline=True, method="Baseline")
    entry = add_entry(catalysis, user=ada, created=at(0), test=cls(0.2, 0.3), method="BNN")
    set_interval(entry, split="test", own=(0.1, 0.3), leader=(-0.01, 0.2), tied=True)
    text = page_text(Client().get(RESULTS))
    assert (
        "The baseline ranks first under nlp, but the best entry “BNN” by Ada L. cannot be told "
        "apart from it on this test set: the difference in nlp is between -0.01 and 0.2" in text
    )
