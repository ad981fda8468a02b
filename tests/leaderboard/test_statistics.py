"""The statistics page ("how it is going"): what it counts, its drawings, who sees it and
when, and its constant number of queries."""

from datetime import UTC, date, datetime, timedelta

import pytest
import time_machine
from django.core.cache import cache
from django.test import Client

from challenge_site.leaderboard import statistics
from challenge_site.leaderboard.statistics import Cell, format_duration
from challenge_site.submissions.models import Status, Submission
from tests.factories import AFTER, TEST_PHASE, VALIDATION, make_challenge, make_dataset, make_user
from tests.pages import page_text
from tests.submissions.helpers import predictions
from tests.test_headers import POLICY, inline_code, policy_of

from .helpers import add_entry, cls, reg

PAGE = "/challenges/demo/statistics/"
KINDS = ("daily", "datasets", "outcomes", "turnaround")
SVGS = [f"/challenges/demo/statistics/{kind}.svg" for kind in KINDS]
RESULTS = "/challenges/demo/results/"


def when(month: int, day: int, hour: int = 12, minute: int = 0) -> datetime:
    return datetime(2030, month, day, hour, minute, tzinfo=UTC)


def entry(dataset, *, user, created, seconds=1, status=Status.SCORED) -> Submission:
    """A submission made at ``created`` whose scoring ended ``seconds`` later."""
    scores = cls(0.3, 0.2) if dataset.task == "classification" else reg(0.5, 0.4)
    submission = add_entry(
        dataset,
        user=user,
        created=created,
        val=scores if status == Status.SCORED else None,
        status=status,
    )
    finished = created + timedelta(seconds=seconds) if status != Status.QUEUED else None
    Submission.objects.filter(pk=submission.pk).update(finished_at=finished)
    return submission


@pytest.fixture
def history(challenge, gaze, catalysis, ada, grace, alan, submit_zip):
    """Twelve uploads of three people over both phases and after the deadline, a baseline
    and another challenge's submission (neither counted). Day 1 is 10 Jan 2030, the test
    phase starts on day 23 (1 Feb), the deadline is on day 30 (8 Feb)."""
    add_entry(gaze, created=when(1, 10, 0), val=reg(1.0, 1.0), baseline=True)
    # Validation phase: day 1, day 3 and, through the real pipeline, day 11.
    entry(gaze, user=ada, created=when(1, 10, 9), seconds=20)
    entry(gaze, user=grace, created=when(1, 10, 15), seconds=200)
    entry(catalysis, user=ada, created=when(1, 12, 10), seconds=30)
    entry(gaze, user=ada, created=when(1, 12, 11), status=Status.INVALID)
    with time_machine.travel(VALIDATION, tick=False):  # scored 90 s after the upload
        valid = submit_zip(alan, challenge, predictions("gaze"), now=VALIDATION - timedelta(0, 90))
        broken = {"gaze_val_predict.txt": b"1 0.5 1\n"}  # one row of four
        invalid = submit_zip(alan, challenge, broken, now=VALIDATION)
    assert (valid.status, invalid.status) == (Status.SCORED, Status.INVALID)
    # Test phase: day 25 (3 Feb) and day 30 (8 Feb).
    entry(gaze, user=ada, created=TEST_PHASE, seconds=600)
    entry(gaze, user=grace, created=TEST_PHASE + timedelta(hours=1), seconds=300)
    entry(catalysis, user=grace, created=TEST_PHASE, status=Status.FAILED)
    entry(catalysis, user=ada, created=when(2, 8, 23, 30), seconds=45)
    entry(gaze, user=alan, created=when(2, 8, 23, 50), status=Status.QUEUED)
    # After the deadline.
    entry(gaze, user=grace, created=AFTER - timedelta(days=1), seconds=10)
    other = make_challenge(slug="other", title="Other")
    entry(make_dataset(other, "gaze"), user=ada, created=when(1, 20), seconds=5)


@pytest.fixture
def published(challenge):
    challenge.results_published = True
    challenge.save()
    return challenge


@pytest.fixture
def viewers(challenge, staff, organiser, ada):
    other = make_challenge(slug="elsewhere", title="Elsewhere")
    return {
        "organiser": organiser,
        "other organiser": make_user("elsewhere", organiser_of=other),
        "superuser": staff,
        "participant": ada,
        "anonymous": None,
    }


def client_for(user) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


# --- What is counted --------------------------------------------------------------------


def test_valid_submissions_per_day_and_phase(history, challenge):
    daily = statistics.daily(challenge=challenge, now=AFTER)
    assert [day.number for day in daily.days] == list(range(1, 31))
    assert (daily.days[0].date, daily.days[-1].date) == (date(2030, 1, 10), date(2030, 2, 8))
    counted = {day.number: (day.validation, day.test) for day in daily.days if day.total}
    assert counted == {1: (2, 0), 3: (1, 0), 11: (1, 0), 25: (0, 2), 30: (0, 1)}
    assert (daily.validation, daily.test, daily.after_deadline) == (4, 3, 1)
    assert daily.test_start_day == 23


def test_days_end_today_while_the_challenge_runs(challenge, gaze, ada):
    entry(gaze, user=ada, created=when(1, 12))
    daily = statistics.daily(challenge=challenge, now=when(1, 14, 8))
    assert [(day.number, day.total) for day in daily.days] == [
        (1, 0),
        (2, 0),
        (3, 1),
        (4, 0),
        (5, 0),
    ]


def test_valid_submissions_and_participants_per_dataset_and_phase(history, challenge):
    rows = statistics.by_dataset(challenge=challenge)
    assert [(row.name, row.task) for row in rows] == [
        ("catalysis", "classification"),
        ("gaze", "regression"),
    ]
    catalysis, gaze = rows
    # PHASES: validation (Table 1's SV), test (ST), post-challenge.
    assert gaze.cells == (Cell(3, 3), Cell(2, 2), Cell(1, 1)) and gaze.submissions == 6
    assert catalysis.cells == (Cell(1, 1), Cell(1, 1), Cell(0, 0)) and catalysis.submissions == 2


def test_outcomes_count_invalid_failed_and_pending_uploads(history, challenge):
    found = statistics.outcomes(challenge=challenge)
    table = {
        row.label: (
            row.uploads,
            row.scored,
            row.invalid,
            row.failed,
            row.pending,
            row.participants,
            row.uploaders,
        )
        for row in (*found.phases, found.total)
    }
    assert table == {
        "Validation phase": (6, 4, 2, 0, 0, 3, 3),
        "Test phase": (5, 3, 0, 1, 1, 2, 3),
        "Post-challenge": (1, 1, 0, 0, 0, 1, 1),
        "All phases": (12, 8, 2, 1, 1, 3, 3),
    }
    assert found.total.invalid_share == pytest.approx(100 * 2 / 12)
    assert found.total.failed_share == pytest.approx(100 / 12)
    assert found.phases[0].invalid_share == pytest.approx(100 / 3)


def test_median_time_from_upload_to_scored(history, challenge):
    found = statistics.turnaround(challenge=challenge)
    medians = {row.label: (row.scored, row.median) for row in (*found.phases, found.total)}
    assert medians == {
        # 20, 30, 90 (the real upload), 200 s: the middle two.
        "Validation phase": (4, timedelta(seconds=60)),
        # 45, 300, 600 s.
        "Test phase": (3, timedelta(seconds=300)),
        "Post-challenge": (1, timedelta(seconds=10)),
        # 10, 20, 30, 45 | 90, 200, 300, 600 s.
        "All phases": (8, timedelta(seconds=67.5)),
    }


def test_an_empty_challenge_counts_nothing(challenge, gaze):
    found = statistics.challenge_statistics(challenge=challenge, now=VALIDATION)
    assert len(found.daily.days) == 11 and not any(day.total for day in found.daily.days)
    assert found.datasets[0].cells == (Cell(0, 0),) * 3
    assert found.outcomes.total.uploads == 0 and found.outcomes.total.invalid_share is None
    assert found.turnaround.total == statistics.Turnaround("All phases", 0, None)
    assert statistics.daily(challenge=challenge, now=when(1, 1)).days == ()


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (None, "–"),
        (1.5, "1.5 s"),
        (45, "45 s"),
        (60, "1 min"),
        (67.5, "1 min 8 s"),
        (7500, "2 h 5 min"),
        (86400 + 4 * 3600 + 59, "1 d 4 h"),
    ],
)
def test_durations_are_written_with_two_units(seconds, text):
    assert format_duration(None if seconds is None else timedelta(seconds=seconds)) == text


# --- The page and its drawings ------------------------------------------------------------


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


@pytest.mark.parametrize(
    ("kind", "texts"),
    [
        ("daily", ["valid submissions per day", "validation phase (4)", "test phase (3)"]),
        ("datasets", ["per dataset and phase", "catalysis", "gaze", "participants"]),
        ("outcomes", ["Validation phase (6)", "Test phase (5)", "All phases (12)", "invalid"]),
        ("turnaround", ["Post-challenge (1)", "All phases (8)", "1 min 8 s", "5 min"]),
    ],
)
def test_drawings_are_svg_with_their_numbers(history, published, kind, texts):
    response = Client().get(f"/challenges/demo/statistics/{kind}.svg")
    assert response.status_code == 200 and response["Content-Type"] == "image/svg+xml"
    svg = response.content.decode()
    assert svg.startswith("<?xml") and "</svg>" in svg
    for text in ["Demo challenge", *texts]:
        assert text in svg, text
    assert policy_of(response) == {**POLICY, "style-src": "'self' 'unsafe-inline'"}
    assert "no-cache" in response["Cache-Control"]


def test_the_daily_drawing_says_what_it_leaves_out(history, published):
    svg = Client().get(SVGS[0]).content.decode()
    assert "Not drawn: 1 valid post-challenge submission" in svg


def test_drawings_of_an_empty_challenge(challenge, gaze, published):
    texts = {
        "daily": "No valid submission yet",
        "datasets": "gaze",
        "outcomes": "No upload yet",
        "turnaround": "No scored submission yet",
    }
    for kind, text in texts.items():
        response = Client().get(f"/challenges/demo/statistics/{kind}.svg")
        assert response.status_code == 200 and text in response.content.decode(), kind


def test_an_unknown_drawing_is_404(published, organiser):
    assert client_for(organiser).get("/challenges/demo/statistics/nothing.svg").status_code == 404


def test_drawings_are_cached_until_a_number_changes(
    history, published, ada, catalysis, django_assert_num_queries
):
    client = Client()
    with django_assert_num_queries(2):  # the challenge, the counts per day
        first = client.get(SVGS[0])
    again = client.get(SVGS[0])
    assert again.content == first.content and again["ETag"] == first["ETag"]
    assert client.get(SVGS[0], HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304
    key = "statistics-plot:" + first["ETag"].strip('"')
    assert cache.get(key) == first.content.decode()

    entry(catalysis, user=ada, created=when(1, 10, 20))
    changed = client.get(SVGS[0])
    assert changed["ETag"] != first["ETag"]
    assert "validation phase (5)" in changed.content.decode()


# --- Constant query count -----------------------------------------------------------------


def more_history(datasets, users, *, rounds: int) -> None:
    for i in range(rounds):
        for k, dataset in enumerate(datasets):
            for user in users:
                entry(dataset, user=user, created=when(1, 11 + i % 15, k), seconds=i + 1)
                entry(dataset, user=user, created=when(2, 2 + i % 5, k), status=Status.INVALID)


def test_the_page_costs_the_same_queries_with_more_submissions(
    history, published, gaze, catalysis, ada, grace, alan, organiser, django_assert_num_queries
):
    anonymous, logged_in = Client(), client_for(organiser)
    # challenge; per day; datasets, per dataset; per phase, whole challenge; medians
    with django_assert_num_queries(7):
        assert anonymous.get(PAGE).status_code == 200
    # + the session, the user and the challenges the user organises
    with django_assert_num_queries(10):
        assert logged_in.get(PAGE).status_code == 200
    more_history([gaze, catalysis], [ada, grace, alan], rounds=10)
    assert Submission.objects.count() > 130
    with django_assert_num_queries(7):
        response = anonymous.get(PAGE)
    assert "132 uploads by 3 people; 68 valid submissions by 3 participants." in page_text(response)
    with django_assert_num_queries(10):
        assert logged_in.get(PAGE).status_code == 200
    for url, queries in zip(SVGS, (2, 3, 3, 2), strict=True):
        with django_assert_num_queries(queries):
            assert anonymous.get(url).status_code == 200


# --- Who sees it, and when ------------------------------------------------------------------

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
