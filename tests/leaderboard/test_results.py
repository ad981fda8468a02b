"""The results page: the chapter's tables per dataset once the results are published."""

import pytest
import time_machine
from django.test import Client

from tests.factories import VALIDATION, make_dataset
from tests.pages import page_text

from .helpers import INF, add_entry, at, cls, point_only_reg, reg

RESULTS = "/challenges/demo/results/"


def test_before_publication_the_page_says_when(challenge, staff):
    with time_machine.travel(VALIDATION, tick=False):
        text = page_text(Client().get(RESULTS))
    assert "They are published after the deadline, 8 Feb 2030, 23:59 UTC" in text
    text = page_text(Client().get(RESULTS))  # after the deadline
    assert "The deadline has passed" in text


def test_leading_ten_with_both_losses_and_the_baseline_below(published, catalysis, ada, grace):
    entries = [
        add_entry(
            catalysis,
            user=(ada, grace)[i % 2],
            created=at(i),
            val=cls(0.1, 0.1),
            test=cls(0.2 + i / 100, 0.3 - i / 100),
            method=f"Method {i}",
        )
        for i in range(12)
    ]
    add_entry(catalysis, created=at(-5), test=cls(0.33, 0.41), baseline=True, method="Baseline")
    response = Client().get(RESULTS)
    text = page_text(response)
    html = response.content.decode()
    table = html.split("<table")[1]
    for i in range(10):
        assert f'href="/submissions/{entries[i].pk}/"' in table
    assert f'href="/submissions/{entries[10].pk}/"' not in table
    assert "1 < Method 0 0.2 +0.13 0.3 Ada L." in text
    # The baseline ranks 13th, after the twelve entries (0.20 to 0.31), and is shown below.
    assert "… 13 Baseline baseline 0.33 0 0.41" in text
    assert "by 01l" not in text  # no point-only entries: no second table


def test_baseline_in_its_place_and_a_table_for_point_predictions(published, challenge, ada):
    gaze = make_dataset(challenge, "gaze", task="regression")
    good = add_entry(gaze, user=ada, created=at(0), test=reg(-1.5, 0.05), method="GP")
    base = add_entry(gaze, created=at(-5), test=reg(4.94, 1.002), baseline=True, method="Baseline")
    bad = add_entry(gaze, user=ada, created=at(1), test=reg(209.4, 2.49e-4), method="Physics")
    point = add_entry(gaze, user=ada, created=at(2), test=point_only_reg(1e-4), method="Point")
    add_entry(gaze, user=ada, created=at(3), test=reg(INF, 0.5), method="Overconfident")
    text = page_text(Client().get(RESULTS))
    ranking = text.split("best 10 test entries by nlpd")[1].split("best 10 test entries by nmse")[0]
    assert "1 < GP -1.5 +6.44 0.05 Ada L." in ranking
    assert "2 Baseline baseline 4.94 0 1.002" in ranking
    assert "3 < Physics 209.4 -204.5 0.000249" in ranking
    assert "4 < Overconfident ∞ −∞ 0.5" in ranking
    assert "Point" not in ranking
    point_table = text.split("best 10 test entries by nmse")[1]
    assert "1 < Point point predictions 0.0001" in point_table
    assert "2 < Physics 0.000249" in point_table and "Baseline baseline 1.002" in point_table
    html = Client().get(RESULTS).content.decode()
    for submission in (good, base, bad, point):
        assert f'href="/submissions/{submission.pk}/"' in html


@pytest.mark.parametrize("n", [3, 30])
def test_results_queries_do_not_grow_with_submissions(
    published, catalysis, gaze, ada, n, django_assert_num_queries
):
    for dataset, scores in ((catalysis, cls(0.2, 0.2)), (gaze, reg(0.2, 0.2))):
        add_entry(dataset, created=at(-5), test=scores, baseline=True)
        for i in range(n):
            add_entry(dataset, user=ada, created=at(i), test=scores)
    # challenge, datasets, 5 per dataset (4 and whether final selections are in force)
    with django_assert_num_queries(12):
        assert Client().get(RESULTS).status_code == 200


def test_a_multiclass_dataset_s_results_rank_by_nlp_with_01l_beside(shapes_entries):
    """Final rankings of a multiclass dataset: each participant's best test entry by nlp
    (Ada's better one of two), its gain over the class-frequency baseline and its 01l."""
    shapes, (baseline, first, second, third) = shapes_entries
    shapes.challenge.results_published = True
    shapes.challenge.save()
    response = Client().get(RESULTS)
    assert response.status_code == 200
    text = page_text(response)
    assert "best 10 test entries by nlp" in text
    html = response.content.decode()
    table = html.split("<table")[1]
    nlp = {s.pk: s.scores.get(split="test", loss="nlp").value for s in (first, second, third)}
    for submission in (first, second, third, baseline):
        assert f'href="/submissions/{submission.pk}/"' in table
    best = min((first, second, third), key=lambda s: nlp[s.pk])
    assert table.index(f"/submissions/{best.pk}/") < min(
        table.index(f"/submissions/{s.pk}/") for s in (first, second, third) if s != best
    )


def test_a_column_block_per_slice_once_the_test_targets_are_out(published, catalysis, ada, grace):
    """As the 2006 results showed in-domain and shifted scores side by side: each row's
    ranking and point losses on every slice of the test split, with their intervals."""
    from challenge_site.challenges.models import TestTargetsRelease

    from .helpers import add_slices, set_interval, sliced

    add_slices(catalysis, "test", ["in", "in", "shifted", "in", "shifted"])

    def scores(whole, inside, shifted):
        return {**cls(*whole), **sliced(cls(*inside), "in"), **sliced(cls(*shifted), "shifted")}

    first = add_entry(
        catalysis, user=ada, created=at(0), test=scores((0.2, 0.1), (0.1, 0.05), (0.45, 0.25))
    )
    add_entry(
        catalysis, user=grace, created=at(1), test=scores((0.3, 0.2), (0.35, 0.3), (0.22, 0.05))
    )
    add_entry(
        catalysis, created=at(-5), test=scores((0.5, 0.4), (0.5, 0.4), (0.5, 0.4)), baseline=True
    )
    set_interval(first, "nlp@shifted", split="test", own=(0.4, 0.5))
    # The test targets are never released: the slices stay unnamed, even with the results.
    html = Client().get(RESULTS).content.decode()
    assert "on shifted" not in html and "slice=" not in html
    published.test_targets_release = TestTargetsRelease.AFTER_PUBLICATION
    published.save()
    response = Client().get(RESULTS)
    text = page_text(response)
    assert "nlp 01l nlp on in 01l on in nlp on shifted 01l on shifted" in text.replace(
        "Gain over baseline (bans) ", ""
    )
    assert "1 < Entry 0.2 +0.3 0.1 0.1 0.05 0.45 ± 0.050 (95 % interval 0.4 to 0.5) 0.25" in text
    assert "2 < Entry 0.3 +0.2 0.2 0.35 0.3 0.22 0.05" in text
    assert "3 Entry baseline 0.5 0 0.4 0.5 0.4 0.5 0.4" in text
    html = response.content.decode()
    assert "?split=test&amp;slice=shifted" in html


def test_slice_blocks_of_a_private_ranking_cover_the_whole_test_split(
    published, catalysis, ada, grace
):
    """With a public part the ranking is the private part's, but slices label the whole
    test split (spec §8): the blocks show each entry's scores on a slice's test examples of
    both parts, the note says so, and each slice's board is the test split's (a private
    board has no slices: the link must not lead to a 400)."""
    from challenge_site.challenges.models import TestTargetsRelease
    from challenge_site.submissions import standings
    from challenge_site.submissions.entrants import Entrant
    from challenge_site.submissions.models import Score

    from .helpers import add_slices, sliced

    published.test_public_fraction = 0.5
    published.test_targets_release = TestTargetsRelease.AFTER_PUBLICATION
    published.save()
    add_slices(catalysis, "test", ["in", "in", "shifted", "in", "shifted"])
    entries = []
    for user, minute, whole, private, shifted in (
        (ada, 0, (0.2, 0.1), (0.25, 0.1), (0.45, 0.25)),
        (grace, 1, (0.3, 0.2), (0.15, 0.2), (0.22, 0.05)),
    ):
        entry = add_entry(
            catalysis,
            user=user,
            created=at(minute),
            test={**cls(*whole), **sliced(cls(*shifted), "shifted"), **sliced(cls(*whole), "in")},
        )
        Score.objects.bulk_create(
            Score(submission=entry, dataset=catalysis, split="private", loss=loss, value=value)
            for loss, value in cls(*private).items()
        )
        standings.listing_changed(dataset=catalysis, entrant=Entrant.of(entry))
        entries.append(entry)
    response = Client().get(RESULTS)
    text = page_text(response)
    # Ranked by the private part's nlp (grace's 0.15 first), the shifted block the whole
    # test split's slice scores.
    assert "1 < Entry 0.15 " in text and " 0.22 0.05" in text
    assert "2 < Entry 0.25 " in text and " 0.45 0.25" in text
    assert "covers its examples in both the public and the private part" in text
    html = response.content.decode()
    assert "?split=test&amp;slice=shifted" in html and "split=private&amp;slice" not in html
    board = Client().get(
        "/challenges/demo/datasets/catalysis/leaderboard/?split=test&slice=shifted"
    )
    assert board.status_code == 200


def test_the_baseline_s_rank_below_is_counted_once_per_generation(
    published, catalysis, ada, grace, monkeypatch
):
    """The count behind the baseline's rank grows with the board: it is kept until the
    board's listed scores change (the dataset's generation), then counted again."""
    from challenge_site.leaderboard import queries

    calls = []
    counted = queries.position
    monkeypatch.setattr(
        queries, "position", lambda *args, **kwargs: calls.append(1) or counted(*args, **kwargs)
    )
    for i in range(12):
        add_entry(catalysis, user=(ada, grace)[i % 2], created=at(i), test=cls(0.2 + i / 100, 0.3))
    add_entry(catalysis, created=at(-5), test=cls(0.33, 0.41), baseline=True, method="Baseline")
    for _ in range(3):
        assert "… 13 Baseline baseline 0.33" in page_text(Client().get(RESULTS))
    assert len(calls) == 1
    add_entry(catalysis, user=ada, created=at(20), test=cls(0.32, 0.3))  # ahead of it
    assert "… 14 Baseline baseline 0.33" in page_text(Client().get(RESULTS))
    assert len(calls) == 2


def test_whether_the_point_table_is_shown_is_decided_once_per_generation(
    published, challenge, ada, monkeypatch
):
    """Whether some entry is point-only reads the split's n/a scores, work that grows with
    the board: kept until the board's listed scores change, then read again, so that the
    first point-only entry brings its table at once."""
    from challenge_site.leaderboard import queries

    calls = []
    found = queries.has_point_only_entries
    monkeypatch.setattr(
        queries, "has_point_only_entries", lambda board: calls.append(1) or found(board)
    )
    gaze = make_dataset(challenge, "gaze", task="regression")
    add_entry(gaze, user=ada, created=at(0), test=reg(-1.5, 0.05), method="GP")
    for _ in range(3):
        assert "by nmse" not in page_text(Client().get(RESULTS))
    assert len(calls) == 1
    add_entry(gaze, user=ada, created=at(2), test=point_only_reg(1e-4), method="Point")
    point_table = page_text(Client().get(RESULTS)).split("best 10 test entries by nmse")[1]
    assert "1 < Point point predictions 0.0001" in point_table
    assert len(calls) == 2
