"""Links to a board's whole-board files: their status page (export_views), from the
board's page and the Ladder's."""

from urllib.parse import urlencode

from django import template
from django.urls import reverse

from challenge_site.leaderboard.services import board_params

register = template.Library()


def _url(board, name: str, **changes) -> str:
    dataset = board.dataset
    path = reverse(name, args=[dataset.challenge.slug, dataset.name])
    return f"{path}?{urlencode(board_params(board, **changes))}"


@register.simple_tag
def export_page(board, fmt: str = "csv") -> str:
    """The status page of the board's file in ``fmt`` (csv, json): it says whether the
    file is ready (and links it) or being prepared."""
    return _url(board, "leaderboard_export", format=fmt)


@register.simple_tag
def board_download(board, fmt: str = "csv") -> str:
    """The board's file in ``fmt`` itself (202 while it is being prepared)."""
    return _url(board, f"leaderboard_{fmt}")
