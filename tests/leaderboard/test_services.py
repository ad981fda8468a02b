"""leaderboard.services: the order of the rows: every loss, ties by time, n/a last, ∞
after finite values, the best per participant, and entries with only point predictions
only under point losses."""

import re

import pytest
import time_machine
from django.test import Client

import scoring
from challenge_site.leaderboard import services
from challenge_site.leaderboard.queries import Board, ranked_ids
from challenge_site.submissions.models import Status
from scoring.plugins import is_plugin
from tests.factories import AFTER

from .helpers import INF, add_entry, at, cls, page_ids, point_only_cls, point_only_reg, reg

CLASSIFICATION = [loss.name for loss in scoring.losses_for("classification")]
REGRESSION = [loss.name for loss in scoring.losses_for("regression")]
# The installed plug-in losses (spec §9, e.g. plugins/floorlog), scored like the built-in ones.
PLUGINS = [loss.name for loss in scoring.losses_for("classification") if is_plugin(loss)]


def every_cls(scores: dict) -> dict:
    """``scores`` with a value for every classification loss, as scoring stores them: each
    plug-in loss has brier's (ties, n/a for a point-only file)."""
    return {**scores, **{name: scores["brier"] for name in PLUGINS}}


def board(dataset, sort, *, split="val", best=False) -> Board:
    return Board(dataset, split, scoring.get_loss(dataset.task, sort), best)


def expected_order(entries, sort: str) -> list[int]:
    """The rule, written out: listed entries by (n/a last, value, time, id)."""
    task = entries[0][0].dataset.task
    loss = scoring.get_loss(task, sort)
    probabilistic = [n for n in entries[0][1] if scoring.get_loss(task, n).probabilistic]
    listed = [
        (submission, scores)
        for submission, scores in entries
        if not loss.probabilistic or any(scores[n] is not None for n in probabilistic)
    ]
    listed.sort(
        key=lambda item: (
            item[1][sort] is None,
            item[1][sort] if item[1][sort] is not None else 0,
            item[0].created,
            item[0].pk,
        )
    )
    return [submission.pk for submission, _ in listed]


@pytest.fixture
def classification_entries(catalysis, ada, grace, alan):
    specs = [
        (ada, at(0), cls(0.30, 0.20, lift=0.7, brier=0.21, ece=0.05)),
        (grace, at(1), cls(0.25, 0.20, lift=0.9, brier=0.19, ece=0.05)),
        (alan, at(2), cls(INF, 0.10, lift=0.6, brier=0.30, ece=0.20)),
        (ada, at(3), cls(0.25, 0.30, lift=None, brier=0.19, ece=0.02)),  # ties the 2nd on nlp
        (grace, at(4), point_only_cls(0.15)),
        (alan, at(5), cls(0.40, 0.20, lift=INF, brier=0.25, ece=None)),
        (None, at(-60), cls(0.29, 0.45, lift=1.0, brier=0.25, ece=0.0)),  # the baseline
    ]
    entries = []
    for user, created, scores in specs:
        scores = every_cls(scores)
        submission = add_entry(
            catalysis, user=user, created=created, val=scores, baseline=user is None
        )
        entries.append((submission, scores))
    return entries


@pytest.mark.parametrize("sort", CLASSIFICATION)
def test_every_classification_loss_sorts(classification_entries, catalysis, sort):
    ids = ranked_ids(board(catalysis, sort))
    assert ids == expected_order(classification_entries, sort)
    page = services.leaderboard_page(board=board(catalysis, sort))
    assert [row.entry.pk for row in page.rows] == ids


@pytest.mark.parametrize("sort", REGRESSION)
def test_every_regression_loss_sorts(gaze, ada, grace, sort):
    # Quantile levels, so that every loss applies (wis only with them, spec §8).
    type(gaze).objects.filter(pk=gaze.pk).update(quantile_levels=[0.1, 0.5, 0.9])
    gaze.refresh_from_db()
    specs = [
        (ada, at(0), {**reg(1.2, 0.5, crps=0.31), "wis": 0.6}),
        (grace, at(1), {**reg(-0.4, 0.7, crps=0.25), "wis": 0.5}),
        (ada, at(2), {**reg(None, 0.4, crps=0.20), "wis": 0.4}),  # nlpd n/a, still probabilistic
        (grace, at(3), {**reg(INF, 0.3, crps=0.40), "wis": INF}),  # a zero variance: nlpd inf
        (ada, at(4), {**point_only_reg(0.1), "wis": None}),
        (grace, at(5), {**reg(-0.4, None, crps=0.25), "wis": 0.5}),  # ties the 2nd: nlpd, crps, wis
    ]
    entries = [
        (add_entry(gaze, user=user, created=created, val=scores), scores)
        for user, created, scores in specs
    ]
    assert ranked_ids(board(gaze, sort)) == expected_order(entries, sort)


def test_ties_go_by_submission_time_not_by_id(catalysis, ada, grace):
    later = add_entry(catalysis, user=ada, created=at(10), val=cls(0.3, 0.2))
    earlier = add_entry(catalysis, user=grace, created=at(5), val=cls(0.3, 0.2))
    same_time = add_entry(catalysis, user=grace, created=at(5), val=cls(0.3, 0.2))
    assert later.pk < earlier.pk < same_time.pk
    assert ranked_ids(board(catalysis, "nlp")) == [earlier.pk, same_time.pk, later.pk]


def test_infinity_after_finite_values_and_na_last(catalysis, ada):
    na = add_entry(catalysis, user=ada, created=at(0), val=cls(0.2, 0.1, lift=None))
    infinite = add_entry(catalysis, user=ada, created=at(1), val=cls(0.2, 0.1, lift=INF))
    large = add_entry(catalysis, user=ada, created=at(2), val=cls(0.2, 0.1, lift=1e300))
    small = add_entry(catalysis, user=ada, created=at(3), val=cls(0.2, 0.1, lift=0.5))
    assert ranked_ids(board(catalysis, "lift")) == [small.pk, large.pk, infinite.pk, na.pk]
    rows = services.leaderboard_page(board=board(catalysis, "lift")).rows
    assert [row.rank for row in rows] == [1, 2, 3, None]


def test_the_page_sorts_by_the_clicked_header(classification_entries, catalysis):
    for sort in CLASSIFICATION:
        response = Client().get(f"/challenges/demo/datasets/catalysis/leaderboard/?sort={sort}")
        assert response.status_code == 200
        assert page_ids(response) == expected_order(classification_entries, sort)
        sorted_headers = re.findall(
            r'<th[^>]*aria-sort="ascending"[^>]*>\s*<a href="[^"]*sort=([^&"]+)',
            response.content.decode(),
        )
        assert sorted_headers == [sort]


def test_default_sort_is_the_ranking_loss(classification_entries, catalysis):
    response = Client().get("/challenges/demo/datasets/catalysis/leaderboard/")
    assert page_ids(response) == expected_order(classification_entries, "nlp")
    catalysis.ranking_loss = "brier"
    catalysis.save()
    response = Client().get("/challenges/demo/datasets/catalysis/leaderboard/")
    assert page_ids(response) == expected_order(classification_entries, "brier")


def test_point_only_entries_appear_only_under_point_losses(classification_entries, catalysis):
    point_only = classification_entries[4][0]
    for sort in CLASSIFICATION:
        listed = point_only.pk in ranked_ids(board(catalysis, sort))
        assert listed is (not scoring.get_loss(catalysis.task, sort).probabilistic), sort
    text = Client().get("/challenges/demo/datasets/catalysis/leaderboard/?sort=01l").content
    assert b"point predictions</span>" in text
    text = Client().get("/challenges/demo/datasets/catalysis/leaderboard/?sort=nlp").content
    assert b"point predictions</span>" not in text
    assert b"they are listed when sorting by" in text


def test_only_scored_submissions_are_listed(catalysis, ada):
    scored = add_entry(catalysis, user=ada, created=at(0), val=every_cls(cls(0.3, 0.2)))
    for status in (Status.QUEUED, Status.RUNNING, Status.INVALID, Status.FAILED):
        # A rescore in progress keeps its previous Score rows: still not listed.
        scores = every_cls(cls(0.1, 0.1))
        add_entry(catalysis, user=ada, created=at(1), val=scores, status=status)
    for sort in CLASSIFICATION:
        assert ranked_ids(board(catalysis, sort)) == [scored.pk]
    assert ranked_ids(board(catalysis, "nlp", best=True)) == [scored.pk]


def test_best_per_participant(catalysis, ada, grace, alan):
    a1 = add_entry(catalysis, user=ada, created=at(0), val=cls(0.30, 0.10))
    a2 = add_entry(catalysis, user=ada, created=at(1), val=cls(0.20, 0.30))
    a3 = add_entry(catalysis, user=ada, created=at(2), val=cls(0.20, 0.40))  # ties a2: later
    g1 = add_entry(catalysis, user=grace, created=at(3), val=cls(INF, 0.05))
    g2 = add_entry(catalysis, user=grace, created=at(4), val=point_only_cls(0.01))
    l1 = add_entry(catalysis, user=alan, created=at(5), val=point_only_cls(0.02))
    base = add_entry(catalysis, created=at(-9), val=cls(0.25, 0.5), baseline=True)

    assert ranked_ids(board(catalysis, "nlp", best=True)) == [a2.pk, base.pk, g1.pk]
    assert ranked_ids(board(catalysis, "01l", best=True)) == [g2.pk, l1.pk, a1.pk, base.pk]
    assert ranked_ids(board(catalysis, "nlp")) == [a2.pk, a3.pk, base.pk, a1.pk, g1.pk]

    response = Client().get("/challenges/demo/datasets/catalysis/leaderboard/?view=best")
    assert page_ids(response) == [a2.pk, base.pk, g1.pk]
    assert '<strong aria-current="page">Best per participant</strong>' in response.content.decode()
    response = Client().get("/challenges/demo/datasets/catalysis/leaderboard/?view=all")
    assert page_ids(response) == [a2.pk, a3.pk, base.pk, a1.pk, g1.pk]


def test_best_keeps_a_participant_whose_only_probabilistic_entry_lacks_the_sort_loss(
    gaze, ada, grace
):
    """A point-only entry does not hide the same participant's sample-based one (nlpd n/a)."""
    point = add_entry(gaze, user=ada, created=at(0), val=point_only_reg(0.1))
    samples = add_entry(gaze, user=ada, created=at(1), val=reg(None, 0.3, crps=0.2))
    gaussian = add_entry(gaze, user=grace, created=at(2), val=reg(0.5, 0.4))
    assert ranked_ids(board(gaze, "nlpd", best=True)) == [gaussian.pk, samples.pk]
    assert ranked_ids(board(gaze, "nmse", best=True)) == [point.pk, gaussian.pk]


def test_test_split_is_ranked_on_its_own_scores(catalysis, ada, grace):
    a = add_entry(catalysis, user=ada, created=at(0), val=cls(0.1, 0.1), test=cls(0.9, 0.1))
    g = add_entry(catalysis, user=grace, created=at(1), val=cls(0.5, 0.1), test=cls(0.2, 0.1))
    only_val = add_entry(catalysis, user=grace, created=at(2), val=cls(0.05, 0.1))
    assert ranked_ids(board(catalysis, "nlp")) == [only_val.pk, a.pk, g.pk]
    assert ranked_ids(board(catalysis, "nlp", split="test")) == [g.pk, a.pk]


def test_pages_of_fifty(catalysis, ada):
    entries = [
        add_entry(catalysis, user=ada, created=at(i), val=cls(1 + i / 1000, 0.2))
        for i in range(120)
    ]
    client = Client()
    url = "/challenges/demo/datasets/catalysis/leaderboard/"
    first = client.get(url)
    assert page_ids(first) == [e.pk for e in entries[:50]]
    assert 'rel="next"' in first.content.decode() and 'rel="prev"' not in first.content.decode()
    third = client.get(url + "?page=3")
    assert page_ids(third) == [e.pk for e in entries[100:]]
    assert '<td class="num">101</td>' in third.content.decode()
    assert 'rel="next"' not in third.content.decode()
    assert client.get(url + "?page=4").status_code == 404
    for bad in ("0", "x", "-1", "²", "1" * 30):
        assert client.get(url + f"?page={bad}").status_code == 400


@pytest.mark.parametrize(
    "query", ["sort=nlpd", "sort=bogus", "split=train", "split=x", "view=mine"]
)
def test_wrong_options_are_a_bad_request(catalysis, query):
    with time_machine.travel(AFTER, tick=False):
        response = Client().get(f"/challenges/demo/datasets/catalysis/leaderboard/?{query}")
    assert response.status_code == 400
    assert "expected one of" in response.content.decode()
