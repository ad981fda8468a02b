"""submissions.admin_scores (issue 30, item 14): the submissions console shows each entry's
ranking loss per split, sortable, hidden test scores included for the challenge's
organisers, in a number of queries that does not grow with the rows listed."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from challenge_site.submissions.models import Score, Status, Submission
from tests.factories import TEST_PHASE, make_challenge, make_dataset, make_user

CHANGELIST = reverse("admin:submissions_submission_changelist")


def entry(dataset, user, scores: dict[str, dict[str, float | None]], *, minute=0):
    """A scored entry with ``scores`` {split: {loss: value}}, as the pipeline stores them."""
    created = TEST_PHASE + timedelta(minutes=minute)
    submission = Submission.objects.create(
        user=user,
        dataset=dataset,
        method=f"{user} {minute}",
        created=created,
        queued_at=created,
        phase="test",
        status=Status.SCORED,
        splits=["val", "test"],
    )
    Score.objects.bulk_create(
        Score(submission=submission, dataset=dataset, split=split, loss=loss, value=value)
        for split, losses in scores.items()
        for loss, value in losses.items()
    )
    return submission


@pytest.fixture
def rows(challenge):
    """gaze (regression, ranked by its default nlpd) and cats (classification ranked by
    brier) in the organiser's challenge; one entry in another challenge."""
    gaze = make_dataset(challenge, "gaze")
    cats = make_dataset(challenge, "cats", task="classification", ranking_loss="brier")
    ada, bob = make_user("ada"), make_user("bob")
    other = make_dataset(make_challenge(slug="other", title="Other"), "secret")
    return {
        "gaze": entry(
            gaze,
            ada,
            {"val": {"nlpd": 0.25, "nmse": 9.0}, "test": {"nlpd": 1.5, "nmse": 8.0}},
        ),
        "gaze_na": entry(gaze, bob, {"val": {"nlpd": None, "nmse": 0.1}}, minute=1),
        "cats": entry(
            cats,
            bob,
            {
                "val": {"nlp": 0.1, "brier": 0.75},
                "public": {"brier": 0.5},
                "private": {"brier": float("inf")},
                "test": {"brier": 0.125},
            },
            minute=2,
        ),
        "secret": entry(other, ada, {"val": {"nlpd": 0.0}}),
    }


@pytest.fixture
def console(challenge):
    client = Client()
    client.force_login(make_user("organiser", organiser_of=challenge))
    return client


def _cells(response) -> dict[int, tuple]:
    """Per listed entry: (ranked by, val, public, private, test) as the columns show them."""
    admin = response.context["cl"].model_admin
    return {
        s.pk: tuple(getattr(admin, name)(s) for name in admin.RANKING_COLUMNS)
        for s in response.context["cl"].result_list
    }


def test_the_ranking_loss_of_each_split_hidden_test_scores_included(rows, console):
    response = console.get(CHANGELIST)
    assert response.status_code == 200
    assert _cells(response) == {
        rows["gaze"].pk: ("nlpd", "0.25", "–", "–", "1.5"),
        rows["gaze_na"].pk: ("nlpd", "–", "–", "–", "–"),  # n/a, and no test score
        rows["cats"].pk: ("brier", "0.75", "0.5", "inf", "0.125"),
    }  # not the other challenge's entry
    page = response.content.decode()
    for header in ("Ranked by", "Validation", "Test, public part", "Test, private part"):
        assert f">{header}</a>" in page  # sortable: the header is a link


@pytest.mark.parametrize(
    ("order", "expected"),
    [
        ("val", ["gaze", "cats", "gaze_na"]),  # no value: last
        ("-val", ["gaze_na", "cats", "gaze"]),
        ("test", ["cats", "gaze", "gaze_na"]),
        ("private", ["cats", "gaze_na", "gaze"]),  # inf before none; then newest first
    ],
)
def test_the_columns_sort(rows, console, order, expected):
    columns = console.get(CHANGELIST).context["cl"].list_display  # as ?o= counts them
    position = list(columns).index("ranking_" + order.lstrip("-"))
    response = console.get(CHANGELIST, {"o": f"{'-' if order[0] == '-' else ''}{position}"})
    names = {s.pk: name for name, s in rows.items()}
    assert [names[s.pk] for s in response.context["cl"].result_list] == expected


def test_the_list_takes_as_many_queries_for_many_rows_as_for_few(
    rows, console, django_assert_num_queries
):
    with CaptureQueriesContext(connection) as few:
        assert console.get(CHANGELIST).status_code == 200
    gaze = rows["gaze"].dataset
    added = [
        entry(gaze, make_user(f"user{minute}"), {"val": {"nlpd": minute / 10}}, minute=minute)
        for minute in range(10, 30)
    ]
    with django_assert_num_queries(len(few)):
        response = console.get(CHANGELIST)
    cells = _cells(response)
    assert len(cells) == 23
    assert [cells[s.pk][1] for s in added] == [f"{minute / 10:g}" for minute in range(10, 30)]
