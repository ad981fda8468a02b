"""leaderboard.display, the rules of issue 28: an interval shown as "± h" only when it is
symmetric about its score, "+a/−b" when not, its bounds when the score lies outside it,
"no spread" when every resample gives the same score; a gain that is rounding noise shows
as 0; the heavy-tail "†" and the "certain ×k" tag with their legends and words for screen
readers.

The bootstrap fields are written on the Score rows directly (helpers.set_interval), as
intervals.py would; the certainty count on the SplitResult row, as the pipeline would."""

import math
import re
from dataclasses import fields, replace

import pytest
from django.test import Client

from challenge_site.leaderboard import display
from challenge_site.leaderboard.queries import Interval
from challenge_site.submissions.models import Score, SplitResult
from tests.pages import page_text

from .helpers import add_entry, at, cls, point_only_cls, set_interval

URL = "/challenges/demo/datasets/catalysis/leaderboard/"
RESULTS = "/challenges/demo/results/"
LOG2 = math.log(2)


def _row(html: str, pk: int) -> str:
    return next(
        row
        for row in re.findall(r"<tr[^>]*>.*?</tr>", html, re.S)
        if f'href="/submissions/{pk}/"' in row
    )


def _interval(lower, upper, **marks) -> Interval:
    """An Interval of its own bounds and ``marks`` (heavy_tail, leader_heavy_tail, ...)."""
    interval = Interval(**{field.name: None for field in fields(Interval)})
    return replace(interval, lower=lower, upper=upper, **marks)


def _shown(value, lower, upper, **marks) -> str:
    """What follows the score, as a reader sees it (the visible part only)."""
    html = str(display.interval_html(value, _interval(lower, upper, **marks)))
    return re.sub(r"<[^>]+>", "", re.sub(r'<span class="visually-hidden">.*?</span>', "", html))


@pytest.mark.parametrize(
    ("value", "lower", "upper", "shown"),
    [
        # Symmetric, or asymmetric by less than 5 % of the width: ± half the width.
        (0.231, 0.219, 0.243, " ± 0.012"),
        (0.231, 0.2195, 0.2430, " ± 0.012"),
        # The issue's [1.0000, 1.0005] about 1: once "1 ± 0.00027", now its offsets.
        (1.0, 1.0, 1.0005, " +0.00050/−0"),
        (0.231, 0.222, 0.245, " +0.014/−0.0090"),
        (0.4, 0.35, math.inf, " +∞/−0.050"),
        (0.4, -math.inf, 0.45, " +0.050/−∞"),
        # A score outside its own percentile interval: the bounds.
        (0.5, 0.51, 0.6, " [0.51, 0.6]"),
        # A constant loss: every resample the same up to rounding (TIE_RTOL).
        (LOG2, LOG2, LOG2 + 5.6e-17 * 2, " no spread"),
        (LOG2, LOG2, LOG2, " no spread"),
    ],
)
def test_an_interval_is_shown_by_its_offsets_unless_symmetric(value, lower, upper, shown):
    assert _shown(value, lower, upper).replace("\u00a0", " ") == shown


def test_heavy_tail_dagger_after_the_interval_with_words_for_screen_readers():
    html = str(display.interval_html(0.231, _interval(0.219, 0.243, heavy_tail=True)))
    # Inside the ± (a block of its own on the leaderboard), its words after the bounds'.
    assert (
        f'±\u00a00.012<span class="tail" title="{display.OWN_TAIL}" aria-hidden="true">†</span>'
        "</span>" in html
    )
    assert html.endswith(f'<span class="visually-hidden"> ({display.OWN_TAIL})</span>')
    for flag in (False, None):
        assert "†" not in str(
            display.interval_html(0.231, _interval(0.219, 0.243, heavy_tail=flag))
        )
    # No interval, no mark.
    assert str(display.interval_html(0.231, _interval(None, None, heavy_tail=True))) == ""


def test_a_constant_baseline_shows_no_spread_and_a_noise_gain_shows_zero(board, catalysis, ada):
    baseline = board["baseline"]
    Score.objects.filter(submission=baseline, split="val", loss="nlp").update(value=LOG2)
    set_interval(baseline, own=(LOG2, math.nextafter(LOG2, 1)), leader=(0.45, 0.5), tied=False)
    # An entry identical to the baseline up to the rounding of its sum (3e-13 relative).
    twin = add_entry(
        catalysis, user=ada, created=at(8), val=cls(LOG2 * (1 + 3e-13), 0.4), method="Twin"
    )
    set_interval(twin, own=(0.68, 0.71), leader=(0.45, 0.5), tied=False)
    response = Client().get(URL)
    html, text = response.content.decode(), page_text(response)
    row = _row(html, baseline.pk)
    assert "±" not in row and "−" not in row and row.count('class="pm"') == 1
    assert f'title="{display.NO_SPREAD}" aria-hidden="true">no spread</span>' in row
    assert f"(95 % interval: {display.NO_SPREAD})" in row
    assert '<td class="num gain">0</td>' in _row(html, twin.pk)
    assert '<td class="num gain">0</td>' in row
    # A gain beyond the tolerance is still shown.
    assert '<td class="num gain">+0.4931</td>' in _row(html, board["ada"].pk)
    assert "“no spread”: every resample gives the same score" in text
    # The API and the CSV say 0 too.
    api = Client().get("/api/v1/challenges/demo/datasets/catalysis/leaderboard/").json()
    gains = {row["submission"]: row["information_gain"] for row in api["results"]}
    assert gains[twin.pk] == 0.0 and gains[baseline.pk] == 0.0


def _certain(submission, count, split="val") -> None:
    SplitResult.objects.create(submission=submission, split=split, rows=100, certain=count)


def test_the_certainty_tag_and_its_legend(board, catalysis, alan):
    _certain(board["grace"], 3)
    _certain(board["ada"], 0)
    _certain(board["alan"], None)
    point = add_entry(catalysis, user=alan, created=at(7), val=point_only_cls(0.2), method="Pt")
    _certain(point, 5)
    response = Client().get(URL)
    html, text = response.content.decode(), page_text(response)
    grace = _row(html, board["grace"].pk)
    assert 'aria-hidden="true">certain\u00a0×3</span>' in grace
    assert "(claims certainty on 3 examples)" in grace
    assert 'title="gives probability 0 or 1 (or zero variance) to 3 examples: should' in grace
    for name in ("ada", "alan", "baseline"):
        assert "certain" not in _row(html, board[name].pk)
    assert "An entry so tagged gives probability 0 or 1 (or zero variance) to k examples" in text
    # Sorted by a point loss the point-only entry is listed: "point predictions" says it.
    by_01l = Client().get(URL + "?sort=01l").content.decode()
    assert "point predictions" in _row(by_01l, point.pk)
    assert "certain" not in _row(by_01l, point.pk)
    # No count on the page, no legend.
    SplitResult.objects.filter(submission=board["grace"]).update(certain=None)
    assert "certain ×" not in page_text(Client().get(URL))


def test_the_heavy_tail_marks_on_a_page(board):
    """The tier mark and the rank interval of a row whose difference to the leader (or own
    interval) has heavy-tailed terms carry the "†" too, and the legend explains it."""
    html = Client().get(URL + "?view=best").content.decode()
    assert "†" not in html and "heavy tails" not in html
    nlp = Score.objects.filter(split="val", loss="nlp")
    nlp.filter(submission=board["grace"]).update(heavy_tail=True, leader_heavy_tail=True)
    nlp.filter(submission=board["alan"]).update(heavy_tail=False, leader_heavy_tail=True)
    response = Client().get(URL + "?view=best")
    html, text = response.content.decode(), page_text(response)
    grace, alan, ada = (_row(html, board[name].pk) for name in ("grace", "alan", "ada"))
    # Grace: ≈ then the leader-difference dagger; her own interval and rank interval too.
    tier = re.search(r'<span class="tie".*?≈</span>.*?<span class="tail" title="([^"]*)"', grace)
    assert tier.group(1) == display.LEADER_TAIL
    assert grace.count(display.OWN_TAIL) == 2 * 2  # title + words, after nlp and rank interval
    assert '<tr class="tied">' in grace
    # Alan is not in the top tier: the dagger alone, and his row is not shaded.
    assert display.LEADER_TAIL in alan and "≈" not in alan and "tied" not in alan
    assert display.OWN_TAIL not in alan
    assert "†" not in ada
    assert "so the interval may be too narrow. † before a rank: the same holds" in text


def test_the_results_page_shows_the_marks_and_explains_them(published, catalysis, ada, grace):
    leader = add_entry(catalysis, user=ada, created=at(0), test=cls(0.2, 0.3), method="BNN")
    other = add_entry(catalysis, user=grace, created=at(1), test=cls(0.25, 0.3), method="SVM")
    add_entry(catalysis, created=at(-5), test=cls(0.33, 0.41), baseline=True, method="Baseline")
    set_interval(leader, split="test", own=(0.19, 0.23), leader=(0.0, 0.0), tied=True)
    set_interval(other, split="test", own=(0.22, 0.28), leader=(0.0, 0.1), tied=True)
    _certain(other, 2, split="test")
    text = page_text(Client().get(RESULTS))
    assert "BNN 0.2 +0.030/−0.010 (95 % interval 0.19 to 0.23)" in text
    assert "SVM certain ×2 (claims certainty on 2 examples) 0.25 ± 0.030" in text
    assert "“0.231 +0.014/−0.009” its distances to the upper and the lower bound" in text
    assert "to k examples of its file under a probabilistic loss" in text
    assert "after an interval: a few examples dominate" not in text
