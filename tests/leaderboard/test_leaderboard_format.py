"""leaderboard's ``leaderboard_format`` filters: differences to the baseline as people
read them, and one loss of a row for tables that show only some losses."""

import math

from django.template import Context, Template

from challenge_site.leaderboard import services
from challenge_site.leaderboard.display import score_html

from .helpers import add_entry, at, cls, set_interval


def render(text: str, **context) -> str:
    return Template("{% load leaderboard_format %}" + text).render(Context(context))


def test_signed_differences():
    values = [None, math.inf, -math.inf, 0.0, 0.0123456, -2.5]
    assert [render("{{ v|signed }}", v=v) for v in values] == [
        "n/a",
        "+∞",
        "−∞",
        "0",
        "+0.01235",
        "-2.5",
    ]


def test_one_loss_of_a_row_with_its_exact_value_and_interval(catalysis, ada):
    entry = add_entry(catalysis, user=ada, created=at(0), val=cls(0.25, 0.5, brier=None))
    set_interval(entry, "nlp", own=(0.2, 0.3), leader=(0.0, 0.0), tied=True)
    board = services.parse_board(dataset=catalysis, split="val", sort=None, view=None)
    (row,) = services.leaderboard_page(board=board).rows
    assert render("{{ row|row_value:'01l' }}", row=row) == "0.5"
    assert render("{{ row|row_value:'brier' }}", row=row) == "None"
    html = render("{{ row|row_score:'nlp' }}", row=row)
    assert html == str(score_html(0.25, row.interval("nlp")))
    assert 'title="0.25"' in html and "±" in html
