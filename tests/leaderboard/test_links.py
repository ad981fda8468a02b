"""The leaderboards are reachable: navigation, index, challenge page, dataset page."""

import time_machine
from django.test import Client

from tests.factories import BEFORE_START
from tests.pages import page_text

BOARD = "/challenges/demo/datasets/catalysis/leaderboard/"


def test_navigation_links_the_leaderboards(catalysis):
    html = Client().get("/").content.decode()
    assert '<a href="/leaderboards/">Leaderboards</a>' in html
    index = Client().get("/leaderboards/")
    assert 'href="/leaderboards/" aria-current="page"' in index.content.decode()
    assert f'href="{BOARD}?split=val"' in index.content.decode()
    assert f'href="{BOARD}?split=test"' not in index.content.decode()
    assert "Results (not published yet)" in page_text(index)


def test_challenge_and_dataset_pages_link_their_leaderboards(catalysis, staff):
    challenge = Client().get("/challenges/demo/data/").content.decode()
    assert f'<a href="{BOARD}?split=val">validation</a>' in challenge
    assert f"{BOARD}?split=test" not in challenge
    # The Leaderboards tab of every challenge page opens the first dataset's board.
    overview = Client().get("/challenges/demo/").content.decode()
    assert f'<li><a href="{BOARD}?split=val">Leaderboards</a></li>' in overview
    response = Client().get("/challenges/demo/datasets/catalysis/")
    dataset = response.content.decode()
    assert f'href="{BOARD}?split=val">validation split</a>' in dataset
    assert 'href="/challenges/demo/results/">results of the challenge</a>' in dataset
    assert "(the test split's once the results are published)" in page_text(response)

    staff_client = Client()
    staff_client.force_login(staff)
    assert f"{BOARD}?split=test" in staff_client.get("/challenges/demo/data/").content.decode()
    preview = '(<a href="/challenges/demo/results/">preview</a>)'
    assert preview in staff_client.get("/challenges/demo/").content.decode()

    catalysis.challenge.results_published = True
    catalysis.challenge.save()
    data = Client().get("/challenges/demo/data/").content.decode()
    assert f'<a href="{BOARD}?split=test">test</a>' in data
    challenge = Client().get("/challenges/demo/").content.decode()
    assert '<a href="/challenges/demo/results/">published</a>' in challenge
    assert (
        f'href="{BOARD}?split=test">test split</a>'
        in Client().get("/challenges/demo/datasets/catalysis/").content.decode()
    )
    assert f'href="{BOARD}?split=test"' in Client().get("/leaderboards/").content.decode()


def test_before_the_opening_no_leaderboard_is_linked(catalysis):
    with time_machine.travel(BEFORE_START, tick=False):
        challenge = Client().get("/challenges/demo/").content.decode()
        data = Client().get("/challenges/demo/data/").content.decode()
        index = Client().get("/leaderboards/")
    assert BOARD not in challenge and BOARD not in data and BOARD not in index.content.decode()
    tabs = challenge[challenge.index('<nav class="tabs"') :].split("</nav>")[0]
    assert "Overview" in tabs and "Leaderboards" not in tabs  # no tab while datasets are closed
    assert "The datasets appear when the challenge opens." in page_text(index)
