"""Every leaderboard view takes the same number of queries whatever the number of entries
and however deep the page: page 1, a keyset page, best per participant, the API, the
CSV export (per chunk) and the plot."""

import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

import scoring
from challenge_site.leaderboard import services
from challenge_site.leaderboard.queries import Board, ranked_ids
from tests.factories import make_user

from .helpers import INF, add_entry, add_slices, at, cls, point_only_cls, sliced

BOARD = "/challenges/demo/datasets/catalysis/leaderboard/"
API = "/api/v1/challenges/demo/datasets/catalysis/leaderboard/"
NEXT = re.compile(r'<a href="([^"]+)" rel="next"')


def _seed(dataset, count: int, *, offset: int = 0) -> None:
    users = [make_user(f"q{offset + i}") for i in range(6)]
    for i in range(count):
        if i % 11 == 3:
            scores = point_only_cls(0.3)
        elif i % 13 == 5:
            scores = cls(INF, 0.2, lift=None)
        else:
            scores = cls(round(0.1 + (i % 17) / 50, 2), 0.2)
        add_entry(dataset, user=users[i % 6], created=at(offset + i), val=scores)


def _counts(client) -> dict[str, int]:
    def count(url: str) -> int:
        with CaptureQueriesContext(connection) as queries:
            response = client.get(url)
            if response.streaming:
                b"".join(response.streaming_content)
        assert response.status_code == 200, url
        assert not any("OFFSET" in q["sql"].upper() for q in queries.captured_queries) or (
            "page=" in url
        ), url
        return len(queries)

    first = client.get(BOARD).content.decode()
    deep = NEXT.search(first).group(1).replace("&amp;", "&")
    return {
        "page 1": count(BOARD),
        "page 1, sort=lift": count(BOARD + "?sort=lift"),
        "keyset page": count(deep),
        "best": count(BOARD + "?view=best"),
        "api": count(API),
        "plot": count(BOARD + "plot.svg"),
    }


@pytest.mark.parametrize("pages", [1, 3])
def test_views_take_a_constant_number_of_queries(catalysis, monkeypatch, pages):
    """The same counts with 120 entries and with three times as many; the keyset page
    is past the shallow pages."""
    monkeypatch.setattr(services, "SHALLOW_PAGES", 1)
    add_entry(catalysis, created=at(-10), val=cls(0.5, 0.5), baseline=True)
    _seed(catalysis, 120 * pages)
    client = Client()
    client.get(BOARD + "plot.svg")  # drawn once: later requests read the stored drawing
    # A page's five, one for the split's slices file (the slice selector, slices.py) and
    # one for its plot's drawing (BoardPlot: the plot view reads it with the dataset).
    assert _counts(client) == {
        "page 1": 7,
        "page 1, sort=lift": 7,
        "keyset page": 7,
        "best": 7,
        "api": 4,
        "plot": 2,
    }


@pytest.mark.parametrize("pages", [1, 3])
def test_a_slice_board_takes_as_many_queries_as_the_whole_split(catalysis, monkeypatch, pages):
    """?slice=NAME (scoring.md §8): the same counts as the split's board, whatever the
    number of entries (the API reads the slices file to validate the name: one more)."""
    monkeypatch.setattr(services, "SHALLOW_PAGES", 1)
    add_slices(catalysis, "val", ["in", "out", "in", "out"])
    add_entry(
        catalysis,
        created=at(-10),
        val={**cls(0.5, 0.5), **sliced(cls(0.5, 0.5), "in")},
        baseline=True,
    )
    users = [make_user(f"s{i}") for i in range(6)]
    for i in range(120 * pages):
        scores = cls(round(0.1 + (i % 17) / 50, 2), 0.2)
        add_entry(
            catalysis, user=users[i % 6], created=at(i), val={**scores, **sliced(scores, "in")}
        )
    client = Client()
    first = client.get(BOARD + "?slice=in").content.decode()
    deep = NEXT.search(first).group(1).replace("&amp;", "&")
    assert "slice=in" in deep

    def count(url: str) -> int:
        with CaptureQueriesContext(connection) as queries:
            assert client.get(url).status_code == 200, url
        return len(queries)

    assert {
        "page 1": count(BOARD + "?slice=in"),
        "keyset page": count(deep),
        "best": count(BOARD + "?slice=in&view=best"),
        "api": count(API + "?slice=in"),
    } == {"page 1": 7, "keyset page": 7, "best": 7, "api": 5}


def test_csv_reads_chunk_by_chunk(catalysis, monkeypatch):
    """The export reads EXPORT_CHUNK rows at a time from a key (two queries a chunk:
    the ranking's range, the pivot), never the whole ranking at once."""
    monkeypatch.setattr(services, "EXPORT_CHUNK", 25)
    add_entry(catalysis, created=at(-10), val=cls(0.5, 0.5), baseline=True)
    _seed(catalysis, 100)
    with CaptureQueriesContext(connection) as queries:
        response = Client().get(BOARD.rstrip("/") + ".csv?sort=nlp")
        lines = b"".join(response.streaming_content).decode().splitlines()
    board = Board(catalysis, "val", scoring.get_loss(catalysis.task, "nlp"))
    assert response.streaming and len(lines) == 1 + len(ranked_ids(board)) == 1 + 101 - 9
    sql = [q["sql"].upper() for q in queries.captured_queries]
    assert not any("OFFSET" in text for text in sql)
    limits = [text for text in sql if "LIMIT 25" in text]
    assert len(limits) >= 4
