"""leaderboard.statistics_plots: the statistics page's drawings, as SVG with their
numbers, drawn with the snapshot a worker computes (statistics_snapshots) and served
from it (the ``history`` fixture: conftest.py)."""

import pytest
from django.test import Client

from challenge_site.leaderboard import statistics_snapshots
from challenge_site.leaderboard.models import StatisticsSnapshot
from tests.test_headers import POLICY, policy_of

from .helpers import entry, when

KINDS = ("daily", "datasets", "outcomes", "turnaround")
SVGS = [f"/challenges/demo/statistics/{kind}.svg" for kind in KINDS]


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


def test_drawings_are_served_from_the_snapshot_until_it_is_computed_again(
    history, published, ada, catalysis, django_assert_num_queries
):
    client = Client()
    first = client.get(SVGS[0])  # the first view computes the snapshot (in-process)
    with django_assert_num_queries(2):  # the challenge, the snapshot's drawing
        again = client.get(SVGS[0])
    assert again.content == first.content and again["ETag"] == first["ETag"]
    assert client.get(SVGS[0], HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304

    entry(catalysis, user=ada, created=when(1, 10, 20))
    assert "validation phase (4)" in client.get(SVGS[0]).content.decode()
    statistics_snapshots.request(StatisticsSnapshot.objects.get().challenge_id)
    changed = client.get(SVGS[0])
    assert changed["ETag"] != first["ETag"]
    assert "validation phase (5)" in changed.content.decode()
