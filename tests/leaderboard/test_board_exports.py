"""leaderboard.templatetags.board_exports: the board page's links to its whole-board files."""

from django.template import Context, Template
from django.test import Client

import scoring
from challenge_site.leaderboard.queries import Board

BOARD = "/challenges/demo/datasets/catalysis/leaderboard"


def render(text: str, board: Board) -> str:
    return Template("{% load board_exports %}" + text).render(Context({"board": board}))


def test_the_links_name_the_board_and_the_format(catalysis):
    board = Board(catalysis, "val", scoring.get_loss(catalysis.task, "01l"), best=True)
    assert render('{% export_page board "json" %}', board) == (
        f"{BOARD}/export/?split=val&amp;sort=01l&amp;view=best&amp;format=json"
    )
    assert render("{% board_download board %}", board) == (
        f"{BOARD}.csv?split=val&amp;sort=01l&amp;view=best"
    )


def test_the_board_page_links_the_status_pages(catalysis):
    text = Client().get(f"{BOARD}/?sort=01l").content.decode()
    assert f'href="{BOARD}/export/?split=val&amp;sort=01l&amp;view=all&amp;format=csv"' in text
    assert f'href="{BOARD}/export/?split=val&amp;sort=01l&amp;view=all&amp;format=json"' in text
