"""Who sees which leaderboard, export, API answer, plot and results page, and when.

Test scores must not leak before publication: every page a non-staff visitor can
request is byte-for-byte the same with and without the test split's Score rows.
"""

import re

import pytest
import time_machine
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from challenge_site.submissions.models import Score
from tests.factories import AFTER, BEFORE_START, TEST_PHASE, VALIDATION
from tests.pages import page_text

from .helpers import add_entry, at, cls, page_ids

BOARD = "/challenges/demo/datasets/catalysis/leaderboard"
API = "/api/v1/challenges/demo/datasets/catalysis/leaderboard/"
PAGES = [
    f"{BOARD}/",
    f"{BOARD}/?view=best",
    f"{BOARD}/?sort=01l",
    f"{BOARD}.csv",
    f"{BOARD}.csv?view=best&sort=brier",
    f"{BOARD}/plot.svg",
    f"{BOARD}/forest.svg",
    f"{BOARD}/forest.svg?view=best&sort=brier",
    API,
    f"{API}?sort=01l&view=best",
]
TEST_PAGES = [
    f"{BOARD}/?split=test",
    f"{BOARD}/?split=test&view=best",
    f"{BOARD}/?split=test&sort=01l",
    f"{BOARD}.csv?split=test",
    f"{BOARD}.csv?split=test&view=best&sort=brier",
    f"{BOARD}/plot.svg?split=test",
    f"{BOARD}/forest.svg?split=test",
    f"{BOARD}/forest.svg?split=test&view=best&sort=01l",
    f"{API}?split=test",
    f"{API}?split=test&sort=01l&view=best",
]
OTHER_PAGES = ["/challenges/demo/results/", "/leaderboards/", "/challenges/demo/"]
VIEWERS = ["anonymous", "participant", "other", "staff"]
# Distinctive test-split values (and their page and CSV spellings).
SECRET = {"nlp": 0.8642097531, "01l": 0.9753108642}
SECRET_TEXT = ["0.8642", "0.9753", "0.8642097531", "0.9753108642"]


@pytest.fixture
def entries(catalysis, ada, grace):
    add_entry(catalysis, created=at(-10), val=cls(0.3, 0.5), test=cls(0.31, 0.52), baseline=True)
    mine = add_entry(
        catalysis,
        user=ada,
        created=VALIDATION,
        val=cls(0.2, 0.25),
        test=cls(SECRET["nlp"], SECRET["01l"]),
    )
    theirs = add_entry(
        catalysis, user=grace, created=TEST_PHASE, val=cls(0.25, 0.3), test=cls(0.4, 0.35)
    )
    return {"mine": mine, "theirs": theirs}


@pytest.fixture
def viewers(ada, grace, staff):
    return {"anonymous": None, "participant": ada, "other": grace, "staff": staff}


def fetch(viewer, users, url, *, when):
    user = users[viewer]
    if url.startswith("/api/"):
        client = APIClient()
        if user is not None:
            token, _ = Token.objects.get_or_create(user=user)
            client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    else:
        client = Client()
        if user is not None:
            client.force_login(user)
    with time_machine.travel(when, tick=False):
        response = client.get(url)
    body = (
        b"".join(response.streaming_content) if response.streaming else response.content
    ).decode()
    return response.status_code, re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", body)


def publish(catalysis, published=True):
    catalysis.challenge.results_published = published
    catalysis.challenge.save()


@pytest.mark.parametrize("viewer", VIEWERS)
def test_before_the_opening_only_staff_see_leaderboards(entries, viewers, viewer):
    for url in PAGES + TEST_PAGES:
        status, _ = fetch(viewer, viewers, url, when=BEFORE_START)
        assert status == (200 if viewer == "staff" else 404), url
    status, body = fetch(viewer, viewers, "/challenges/demo/results/", when=BEFORE_START)
    assert status == 200
    assert ("They are published after the deadline" in body) is (viewer != "staff")


@pytest.mark.parametrize("when", [VALIDATION, TEST_PHASE, AFTER])
@pytest.mark.parametrize("viewer", VIEWERS)
def test_validation_scores_are_public_test_scores_wait_for_publication(
    entries, viewers, viewer, when
):
    for url in PAGES:
        assert fetch(viewer, viewers, url, when=when)[0] == 200, url
    for url in TEST_PAGES:
        status, body = fetch(viewer, viewers, url, when=when)
        if viewer == "staff":
            assert status == 200, url
            continue
        assert status == 403, url
        if when <= TEST_PHASE:
            assert "after the deadline (08 Feb 2030, 23:59 UTC)" in body
        else:
            assert "the organisers have not published them yet" in body


@pytest.mark.parametrize("viewer", ["anonymous", "participant", "other"])
def test_test_scores_never_leak_before_publication(entries, viewers, viewer, catalysis):
    urls = PAGES + TEST_PAGES + OTHER_PAGES + [f"/submissions/{entries['mine'].pk}/"]
    with_test = {url: fetch(viewer, viewers, url, when=AFTER) for url in urls}
    for url, (_, body) in with_test.items():
        for secret in SECRET_TEXT:
            assert secret not in body, (url, secret)
    Score.objects.filter(split="test").delete()
    from django.core.cache import cache

    cache.clear()
    without_test = {url: fetch(viewer, viewers, url, when=AFTER) for url in urls}
    for url in urls:
        assert with_test[url] == without_test[url], url


@pytest.mark.parametrize("viewer", VIEWERS)
def test_after_publication_everyone_sees_the_test_split(entries, viewers, viewer, catalysis):
    publish(catalysis)
    status, body = fetch(viewer, viewers, f"{BOARD}/?split=test", when=AFTER)
    assert status == 200
    assert "0.8642" in body and 'title="0.8642097531"' in body
    status, body = fetch(viewer, viewers, f"{BOARD}.csv?split=test", when=AFTER)
    assert status == 200 and "0.8642097531,0.9753108642" in body
    status, body = fetch(viewer, viewers, f"{API}?split=test", when=AFTER)
    assert status == 200 and "0.8642097531" in body
    assert fetch(viewer, viewers, f"{BOARD}/plot.svg?split=test", when=AFTER)[0] == 200
    assert fetch(viewer, viewers, f"{BOARD}/forest.svg?split=test", when=AFTER)[0] == 200
    status, body = fetch(viewer, viewers, "/challenges/demo/results/", when=AFTER)
    assert "0.8642" in body and "Preview for organisers" not in body


def test_staff_preview_the_results_before_publication(entries, viewers):
    status, body = fetch("staff", viewers, "/challenges/demo/results/", when=AFTER)
    assert status == 200
    assert "Preview for organisers" in body and "0.8642" in body
    for viewer in ("anonymous", "participant"):
        status, body = fetch(viewer, viewers, "/challenges/demo/results/", when=AFTER)
        assert status == 200
        assert "The deadline has passed" in body and "0.8642" not in body


def test_the_test_split_switch_is_a_link_only_when_visible(entries, viewers, catalysis):
    _, body = fetch("participant", viewers, f"{BOARD}/", when=AFTER)
    assert "Test (published with the results)" in body and "split=test&amp;" not in body
    _, body = fetch("staff", viewers, f"{BOARD}/", when=AFTER)
    assert "split=test&amp;sort=nlp&amp;view=all" in body
    publish(catalysis)
    _, body = fetch("anonymous", viewers, f"{BOARD}/", when=AFTER)
    assert "split=test&amp;sort=nlp&amp;view=all" in body


def test_owners_do_not_see_their_unscored_or_hidden_entries(entries, viewers, catalysis, ada):
    queued = add_entry(catalysis, user=ada, created=at(5), val=cls(0.01, 0.01), status="queued")
    invalid = add_entry(catalysis, user=ada, created=at(6), val=cls(0.01, 0.0), status="invalid")
    client = Client()
    client.force_login(ada)
    response = client.get(f"{BOARD}/")
    assert queued.pk not in page_ids(response) and invalid.pk not in page_ids(response)
    assert entries["mine"].pk in page_ids(response)
    assert "Ada L." in page_text(response)
