"""leaderboard.statistics_views: the statistics page of a challenge and its drawings:
every number beside its drawing, served from the worker's snapshot in a constant number
of queries, and who sees it when (for its organisers at any time, public once the
results are published). The snapshot itself: test_statistics_snapshots.py."""

import pytest
import time_machine
from django.test import Client

from challenge_site.leaderboard import generation
from challenge_site.submissions.models import Status, Submission
from tests.factories import AFTER, VALIDATION
from tests.pages import page_text
from tests.test_headers import inline_code

from .helpers import client_for, entry, when

PAGE = "/challenges/demo/statistics/"
KINDS = ("daily", "datasets", "outcomes", "turnaround")
SVGS = [f"/challenges/demo/statistics/{kind}.svg" for kind in KINDS]
RESULTS = "/challenges/demo/results/"


def test_the_page_shows_every_number_beside_its_drawing(history, published):
    response = Client().get(PAGE)
    assert response.status_code == 200
    text = page_text(response)
    for expected in (
        "12 uploads by 3 people; 8 valid submissions by 3 participants.",
        "1 Thu 10 Jan 2030 2 0 2",
        "3 Sat 12 Jan 2030 1 0 1",
        "11 Sun 20 Jan 2030 1 0 1",
        "25 Sun 3 Feb 2030 0 2 2",
        "30 Fri 8 Feb 2030 0 1 1",
        "All days 4 3 7",
        "Not drawn: 1 valid post-challenge submission, made after the deadline.",
        "catalysis (classification) 1 1 1 1 0 0 2",
        "gaze (regression) 3 3 2 2 1 1 6",
        "All datasets 4 3 3 2 1 1 8",
        "Validation phase 6 4 (66.7 %) 2 (33.3 %) 0 (0.0 %) 0 (0.0 %) 3",
        "Test phase 5 3 (60.0 %) 0 (0.0 %) 1 (20.0 %) 1 (20.0 %) 3",
        "All phases 12 8 (66.7 %) 2 (16.7 %) 1 (8.3 %) 1 (8.3 %) 3",
        "Validation phase 4 1 min",
        "Test phase 3 5 min",
        "Post-challenge 1 10 s",
        "All phases 8 1 min 8 s",
    ):
        assert expected in text, expected
    assert "For organisers" not in text
    html = response.content.decode()
    for url in SVGS:
        assert f'<img src="{url}"' in html
    assert "4 in the validation phase, 3 in the test phase" in html  # the daily drawing's alt
    assert inline_code(html) == []
    assert "no-cache" in response["Cache-Control"]


def test_an_unknown_drawing_is_404(published, organiser):
    assert client_for(organiser).get("/challenges/demo/statistics/nothing.svg").status_code == 404


def more_history(datasets, users, *, rounds: int) -> None:
    for i in range(rounds):
        for k, dataset in enumerate(datasets):
            for user in users:
                entry(dataset, user=user, created=when(1, 11 + i % 15, k), seconds=i + 1)
                entry(dataset, user=user, created=when(2, 2 + i % 5, k), status=Status.INVALID)


def test_the_page_and_its_drawings_serve_one_row_whatever_the_submissions(
    history,
    published,
    gaze,
    catalysis,
    ada,
    grace,
    alan,
    organiser,
    django_assert_num_queries,
    django_capture_on_commit_callbacks,
):
    anonymous, logged_in = Client(), client_for(organiser)
    assert anonymous.get(PAGE).status_code == 200  # the first view computes (in-process)
    # the challenge, the snapshot: no aggregate over the submissions
    with django_assert_num_queries(2):
        assert anonymous.get(PAGE).status_code == 200
    # + the session, the user and the challenges the user organises
    with django_assert_num_queries(5):
        assert logged_in.get(PAGE).status_code == 200
    more_history([gaze, catalysis], [ada, grace, alan], rounds=10)
    assert Submission.objects.count() > 130
    with django_assert_num_queries(2):  # not seen yet: the snapshot is as of before
        response = anonymous.get(PAGE)
    assert "12 uploads by 3 people; 8 valid submissions by 3 participants." in page_text(response)
    # A change of the listed scores asks for a computation once it commits.
    with django_capture_on_commit_callbacks(execute=True):
        generation.bump(dataset_id=gaze.pk)
    with django_assert_num_queries(2):
        response = anonymous.get(PAGE)
    assert "132 uploads by 3 people; 68 valid submissions by 3 participants." in page_text(response)
    with django_assert_num_queries(5):
        assert logged_in.get(PAGE).status_code == 200
    for url in SVGS:
        with django_assert_num_queries(2):
            assert anonymous.get(url).status_code == 200


VIEWERS = ["organiser", "other organiser", "superuser", "participant", "anonymous"]


ORGANISERS = {"organiser", "superuser"}


@pytest.mark.parametrize("viewer", VIEWERS)
def test_drafts_are_404_except_for_their_organisers(challenge, history, viewers, viewer):
    challenge.opened_at = None
    challenge.save()
    client = client_for(viewers[viewer])
    expected = 200 if viewer in ORGANISERS else 404
    for url in (PAGE, *SVGS):
        assert client.get(url).status_code == expected, url


@pytest.mark.parametrize("moment", [VALIDATION, AFTER])
@pytest.mark.parametrize("viewer", VIEWERS)
def test_before_publication_only_organisers_see_a_number(viewers, viewer, moment, request):
    client = client_for(viewers[viewer])
    with time_machine.travel(moment, tick=False):
        empty = page_text(client.get(PAGE))
    request.getfixturevalue("history")
    with time_machine.travel(moment, tick=False):
        response = client.get(PAGE)
        drawings = [client.get(url) for url in SVGS]
        results = client.get(RESULTS).content.decode()
    if viewer in ORGANISERS:
        assert response.status_code == 200
        assert "For organisers:" in page_text(response)
        assert all(drawing.status_code == 200 for drawing in drawings)
        assert f'href="{PAGE}"' in results
        return
    # Everyone else: the same page whatever was submitted, saying when it becomes public.
    assert response.status_code == 403
    assert page_text(response) == empty
    reason = (
        "The statistics are published with the results, after the deadline (08 Feb 2030, 23:59 UTC)."
        if moment == VALIDATION
        else "The statistics are published with the results; the organisers have not published them yet."
    )
    assert reason in page_text(response)
    assert "uploads" not in page_text(response) and "<img" not in response.content.decode()
    for drawing in drawings:
        assert drawing.status_code == 403 and drawing.content.decode() == reason + "\n"
        assert drawing["Content-Type"].startswith("text/plain")
    assert f'href="{PAGE}"' not in results


@pytest.mark.parametrize("viewer", VIEWERS)
def test_after_publication_everyone_sees_the_statistics(history, published, viewers, viewer):
    client = client_for(viewers[viewer])
    response = client.get(PAGE)
    assert response.status_code == 200
    assert "12 uploads by 3 people" in page_text(response)
    assert "For organisers:" not in page_text(response)
    assert all(client.get(url).status_code == 200 for url in SVGS)
    assert f'href="{PAGE}"' in client.get(RESULTS).content.decode()


def test_withdrawn_results_hide_the_statistics_again(history, published, ada):
    published.results_published = False
    published.save()
    assert client_for(ada).get(PAGE).status_code == 403
    assert Client().get(SVGS[1]).status_code == 403


def test_an_unknown_challenge_is_404(db):
    assert Client().get("/challenges/nothing/statistics/").status_code == 404
    assert Client().get("/challenges/nothing/statistics/daily.svg").status_code == 404


def test_a_multiclass_dataset_is_counted_with_its_task(shapes_entries, published):
    text = page_text(Client().get(PAGE))
    assert "shapes (multiclass) 0 0 3 2 0 0 3" in text
    for svg in SVGS:
        assert Client().get(svg).status_code == 200, svg
