"""leaderboard.cursors: deep pages start after (or before) a row, never at an OFFSET:
walking the next links (or the previous ones back) gives every row once, in the board's
order, with the ranks of a walk by page numbers; ties of value and time, ∞ and n/a
included. A cursor's token reads back as the position it was made from."""

import math
import re
from datetime import UTC, datetime

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

import scoring
from challenge_site.leaderboard import services
from challenge_site.leaderboard.cursors import Cursor
from challenge_site.leaderboard.queries import Board, Key, ranked_ids
from tests.factories import make_user

from .helpers import INF, add_entry, at, cls, page_ids, point_only_cls

BOARD = "/challenges/demo/datasets/catalysis/leaderboard/"
API = "/api/v1/challenges/demo/datasets/catalysis/leaderboard/"
NEXT = re.compile(r'<a href="([^"]+)" rel="next"')
PREV = re.compile(r'<a href="([^"]+)" rel="prev"')


@pytest.fixture
def tied(catalysis):
    """47 entries of fourteen participants: equal values at equal times (ids decide), ∞,
    n/a under lift, point-only files, and the baseline among them."""
    add_entry(catalysis, created=at(-10), val=cls(0.5, 0.5), baseline=True)
    users = [make_user(f"u{i}") for i in range(14)]
    for i in range(46):
        if i % 9 == 4:
            scores = point_only_cls(0.3)
        elif i % 7 == 2:
            scores = cls(INF, 0.2, lift=None)
        else:
            scores = cls(0.1 * (i % 4), 0.25 - 0.05 * (i % 3), lift=0.4 + (i % 2) / 10)
        add_entry(catalysis, user=users[i % 14], created=at(i // 5), val=scores)


@pytest.mark.parametrize("value", [0.1, 1e-300, -2.5, math.inf, -math.inf, None])
def test_a_token_reads_back_as_the_position_it_names(value):
    created = datetime(2030, 1, 9, 12, 30, 15, 123456, tzinfo=UTC)
    cursor = Cursor(False, 51, Key(value, created, 7))
    assert Cursor.parse(cursor.token(), before=False) == cursor
    assert Cursor.parse(cursor.token(), before=True) == Cursor(True, 51, cursor.key)
    assert cursor.params() == {"after": cursor.token()}
    assert Cursor(True, 1, cursor.key).params() == {"before": "1" + cursor.token()[2:]}
    # rank~value~microseconds since 1970 (calendar.timegm of the time, then its µs)~id
    shown = {None: "na", math.inf: "inf", -math.inf: "-inf"}.get(value, repr(value))
    assert cursor.token() == f"51~{shown}~1894192215123456~7"


def _walk(board: Board, *, size: int) -> list[services.Page]:
    pages = [services.leaderboard_page(board=board, size=size)]
    while pages[-1].has_next:
        last = pages[-1]
        cursor = services.Cursor(
            False, last.last, services.queries.Key.of(board, last.rows[-1].entry)
        )
        # Through the token, as a link carries it.
        cursor = services.parse_cursor(after=cursor.token(), before=None)
        pages.append(services.leaderboard_page(board=board, size=size, cursor=cursor))
    return pages


@pytest.mark.parametrize(
    ("sort", "best"),
    [("nlp", False), ("01l", False), ("lift", False), ("nlp", True), ("lift", True)],
)
def test_keyset_walk_equals_the_ranking_both_ways(catalysis, tied, sort, best):
    board = Board(catalysis, "val", scoring.get_loss(catalysis.task, sort), best)
    expected = ranked_ids(board)
    assert len(expected) > 10
    pages = _walk(board, size=4)
    assert [row.entry.pk for page in pages for row in page.rows] == expected
    positions = [page.first + i for page in pages for i in range(len(page.rows))]
    assert positions == list(range(1, len(expected) + 1))
    # The same ranks as the walk by numbers (n/a rows unranked).
    by_number = [
        row.rank
        for number in range(1, len(expected) // 4 + 2)
        for row in services.leaderboard_page(board=board, number=number, size=4).rows
    ]
    assert [row.rank for page in pages for row in page.rows] == by_number
    # Back from the last page by "before" cursors: the same pages.
    back = [pages[-1]]
    while back[-1].has_previous:
        page = back[-1]
        key = services.queries.Key.of(board, page.rows[0].entry)
        cursor = services.parse_cursor(
            after=None, before=services.Cursor(True, page.first, key).token()
        )
        back.append(services.leaderboard_page(board=board, size=4, cursor=cursor))
    back_ids = [row.entry.pk for page in reversed(back) for row in page.rows]
    assert back_ids == expected
    assert [row.rank for page in reversed(back) for row in page.rows] == by_number


def test_deep_pages_follow_links_without_offset(catalysis, tied, ada, monkeypatch):
    """Past the shallow pages, the HTML links carry a cursor; no query of a cursor page
    has an OFFSET; back to a shallow page, the link is its number again."""
    monkeypatch.setattr(services, "SHALLOW_PAGES", 1)
    for i in range(70):
        add_entry(catalysis, user=ada, created=at(100 + i), val=cls(2 + (i % 9) / 100, 0.5))
    expected = ranked_ids(Board(catalysis, "val", scoring.get_loss(catalysis.task, "nlp")))
    client = Client()
    assert client.get(BOARD + "?page=2").status_code == 400  # past the shallow pages
    first = client.get(BOARD)
    assert page_ids(first) == expected[:50]
    link = NEXT.search(first.content.decode()).group(1).replace("&amp;", "&")
    assert "after=" in link and "page=" not in link
    with CaptureQueriesContext(connection) as queries:
        second = client.get(link)
    assert not any("OFFSET" in q["sql"].upper() for q in queries.captured_queries)
    assert page_ids(second) == expected[50:100]
    text = second.content.decode()
    assert "<span>Page 2</span>" in text and "entries 51–100" in text
    back = PREV.search(text).group(1).replace("&amp;", "&")
    assert "before=" not in back and "page=1" in back
    assert page_ids(client.get(back)) == expected[:50]
    third = client.get(NEXT.search(text).group(1).replace("&amp;", "&"))
    assert page_ids(third) == expected[100:]
    before = PREV.search(third.content.decode()).group(1).replace("&amp;", "&")
    assert "before=" in before
    assert page_ids(client.get(before)) == expected[50:100]


def test_api_walks_deep_pages_by_cursor(catalysis, tied, monkeypatch):
    monkeypatch.setattr(services, "SHALLOW_PAGES", 1)
    users = [make_user(f"w{i}") for i in range(5)]
    for i in range(110):
        add_entry(
            catalysis, user=users[i % 5], created=at(100 + i), val=cls(2 + (i % 20) / 100, 0.5)
        )
    board = Board(catalysis, "val", scoring.get_loss(catalysis.task, "nlp"), True)
    expected_best = ranked_ids(board)
    everything = ranked_ids(Board(catalysis, "val", scoring.get_loss(catalysis.task, "nlp")))
    client = APIClient()
    url, ids, ranks, numbers = f"{API}?sort=nlp", [], [], []
    while url:
        body = client.get(url).json()
        ids += [row["submission"] for row in body["results"]]
        ranks += [row["rank"] for row in body["results"]]
        numbers.append(body["page"])
        url = body["next"]
    assert ids == everything and len(everything) > 150
    assert numbers == list(range(1, (len(everything) + 49) // 50 + 1))
    finite = [rank for rank in ranks if rank is not None]
    assert finite == list(range(1, len(finite) + 1))
    # And back: previous from the third page (after row 100) is the second.
    last = client.get(f"{API}?sort=nlp&after=" + body_after(client, everything)).json()
    previous = client.get(last["previous"]).json()
    assert [row["submission"] for row in previous["results"]] == everything[50:100]
    assert client.get(f"{API}?view=best").json()["results"][0]["submission"] == expected_best[0]


def body_after(client, everything) -> str:
    """The cursor after row 100, as the second page's next link carries it."""
    second = client.get(client.get(f"{API}?sort=nlp").json()["next"]).json()
    return second["next"].split("after=")[1]


@pytest.mark.parametrize(
    "token",
    ["x", "1~0.1~5", "0~0.1~5~7", "1~nan~5~7", "1~0.1~5~0", "1~" + "9" * 50 + "~1~1"],
)
def test_malformed_cursors_are_a_bad_request(catalysis, token):
    assert Client().get(f"{BOARD}?after={token}").status_code == 400
    assert APIClient().get(f"{API}?before={token}").status_code == 400
    assert Client().get(f"{BOARD}?after=1~0.1~5~7&before=1~0.1~5~7").status_code == 400
