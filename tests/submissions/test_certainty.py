"""SplitResult.certain: how many examples an entry claims certainty on (probability 0 or
1), stored by the pipeline for every split and test part (the parts carry the whole test
file's count), shown on the submission's page and in its API by the rules of the split's
scores, and read by the leaderboard's pivot into its rows, API and exports."""

import csv
import io

import numpy as np
import pytest
import time_machine
from django.test import Client
from rest_framework.test import APIClient

import scoring
from challenge_site.challenges.models import Feedback
from challenge_site.leaderboard import queries
from challenge_site.submissions.models import SplitResult, Status
from challenge_site.submissions.visibility import certainty_sentence
from tests.factories import AFTER, TEST_PHASE, VALIDATION, make_dataset

from .helpers import get_at, stored_file

N_VAL, N_TEST = 20, 200
BOARD = "/challenges/demo/datasets/beta/leaderboard/"
API = "/api/v1/challenges/demo/datasets/beta/leaderboard/"


@pytest.fixture
def beta(challenge):
    """Classification, 20 validation and 200 test examples, 30 % of the test public."""
    challenge.test_public_fraction = 0.3
    challenge.save()
    return make_dataset(challenge, "beta", task="classification", sizes=(40, N_VAL, N_TEST))


def _labels(dataset, split: str) -> np.ndarray:
    data = stored_file(dataset, split, "targets")
    return scoring.read_targets(data, path="t", task="classification")


def _claims(dataset, split: str, certain: np.ndarray, *, seed: int) -> bytes:
    """Probabilities in [0.05, 0.95], but 0 or 1 at ``certain`` (the claims hold: 1 where
    the target is +1), and one 1e-300 elsewhere (tiny, but no claim of certainty)."""
    t = _labels(dataset, split)
    p = 0.05 + 0.9 * np.random.default_rng(seed).random(t.size)
    p[certain] = (t[certain] == 1).astype(np.float64)
    p[np.flatnonzero(~np.isin(np.arange(t.size), certain))[0]] = 1e-300
    return "".join(f"{x!r}\n" for x in p.tolist()).encode()


def _private_rows(dataset, count: int) -> np.ndarray:
    """``count`` test examples of the private part: the public part holds none of them."""
    public = scoring.ladder.public_mask(N_TEST, 0.3, dataset.test_parts_seed)
    return np.flatnonzero(~public)[:count]


@pytest.fixture
def claimed(beta, participant, submit_zip):
    """An entry claiming certainty on 2 validation and 5 (private) test examples."""
    files = {
        "beta_val_predict.txt": _claims(beta, "val", np.array([3, 11]), seed=1),
        "beta_test_predict.txt": _claims(beta, "test", _private_rows(beta, 5), seed=2),
    }
    submission = submit_zip(participant, beta.challenge, files, now=TEST_PHASE)
    assert submission.status == Status.SCORED
    return submission


def _results(submission) -> dict[str, SplitResult]:
    return {r.split: r for r in SplitResult.objects.filter(submission=submission)}


def _publish(challenge):
    with time_machine.travel(AFTER, tick=False):
        challenge.results_published = True
        challenge.save()


def test_the_pipeline_stores_the_whole_files_count_on_every_split_and_part(claimed):
    results = _results(claimed)
    assert {split: r.certain for split, r in results.items()} == {
        "val": 2,
        "test": 5,
        "public": 5,  # holds none of the 5 itself: the whole test file's count
        "private": 5,
    }
    assert results["public"].rows == 60 and results["private"].rows == 140
    assert all(not r.non_probabilistic for r in results.values())


def test_a_non_probabilistic_file_stores_no_count(beta, participant, submit_zip):
    labels = _labels(beta, "val")
    hard = "".join("1\n" if t == 1 else "0\n" for t in labels).encode()
    submission = submit_zip(
        participant, beta.challenge, {"beta_val_predict.txt": hard}, now=VALIDATION
    )
    result = _results(submission)["val"]
    assert result.non_probabilistic and result.certain is None
    page = get_at(f"/submissions/{submission.pk}/", when=VALIDATION).content.decode()
    assert "non-probabilistic predictions" in page and "Claims certainty" not in page
    data = get_at(f"/api/v1/submissions/{submission.pk}/", when=VALIDATION).json()
    assert data["certain"] == {"val": None}


def test_the_page_and_the_api_show_the_count_where_the_split_is_shown(claimed, participant):
    url, api = f"/submissions/{claimed.pk}/", f"/api/v1/submissions/{claimed.pk}/"
    page = get_at(url, when=TEST_PHASE, user=participant).content.decode()
    assert (
        "Claims certainty on 2 of 20 examples (probability 0 or 1): a single such example"
        " whose outcome then happens makes nlp infinite." in page
    )
    # The public part is shown at once, with the whole test file's count; the test split
    # and its private part wait for the results.
    assert "Claims certainty on 5 examples of the whole test file (probability 0 or 1)" in page
    assert "of 200 examples" not in page
    data = get_at(api, when=TEST_PHASE, user=participant).json()
    assert data["certain"] == {"val": 2, "public": 5}
    _publish(claimed.dataset.challenge)
    page = get_at(url, when=AFTER).content.decode()
    assert "Claims certainty on 5 of 200 examples (probability 0 or 1)" in page
    assert get_at(api, when=AFTER).json()["certain"] == {
        "val": 2,
        "test": 5,
        "public": 5,
        "private": 5,
    }


def test_the_leaderboard_rows_carry_the_count_of_the_boards_split(claimed, beta):
    nlp = scoring.get_loss("classification", "nlp")
    for split, want in (("val", 2), ("test", 5), ("public", 5), ("private", 5)):
        board = queries.Board(beta, split, nlp)
        entries = {entry.pk: entry for entry in queries.pivot(board, queries.ranked_ids(board))}
        assert entries[claimed.pk].certain == want, split
    with time_machine.travel(TEST_PHASE, tick=False):
        rows = APIClient().get(f"{API}?split=val&sort=nlp").json()["results"]
        assert {row["submission"]: row["certain"] for row in rows}[claimed.pk] == 2
        public = APIClient().get(f"{API}?split=public&sort=nlp").json()["results"]
        assert {row["submission"]: row["certain"] for row in public}[claimed.pk] == 5
        text = b"".join(Client().get(f"{BOARD.rstrip('/')}.csv?split=val").streaming_content)
    rows = list(csv.DictReader(io.StringIO(text.decode())))
    mine = next(row for row in rows if row["submission"] == str(claimed.pk))
    assert mine["certain"] == "2" and mine["non_probabilistic"] == "no"


def test_the_pivot_reads_the_count_without_a_query_per_row(
    beta, participant, submit_zip, django_assert_num_queries
):
    for seed in range(3):
        files = {"beta_val_predict.txt": _claims(beta, "val", np.arange(seed + 1), seed=seed)}
        submit_zip(participant, beta.challenge, files, now=VALIDATION)
    nlp = scoring.get_loss("classification", "nlp")
    board = queries.Board(beta, "val", nlp)
    ids = queries.ranked_ids(board)
    with django_assert_num_queries(1):
        entries = queries.pivot(board, ids)
    counts = sorted(entry.certain for entry in entries if not entry.is_baseline)
    assert counts == [1, 2, 3]


def test_under_the_ladder_the_count_waits_with_the_exact_scores(claimed, participant):
    challenge = claimed.dataset.challenge
    challenge.feedback = Feedback.LADDER
    challenge.save()
    url, api = f"/submissions/{claimed.pk}/", f"/api/v1/submissions/{claimed.pk}/"
    # In the test phase (the validation targets released) the public part is shown
    # through the Ladder only: no exact score, no plot, no count.
    assert get_at(api, when=TEST_PHASE, user=participant).json()["certain"] == {"val": 2}
    page = get_at(url, when=TEST_PHASE, user=participant).content.decode()
    assert "Test, public part, shown through the Ladder" in page
    assert "Claims certainty on 2 of 20 examples" in page
    assert "of the whole test file" not in page
    _publish(challenge)
    assert get_at(api, when=AFTER).json()["certain"]["public"] == 5


def test_the_sentence_in_each_tasks_words():
    binary = scoring.get_task("classification")
    regression = scoring.get_task("regression")
    multiclass = scoring.get_task("multiclass")
    assert certainty_sentence(3, rows=2000, spec=binary) == (
        "Claims certainty on 3 of 2,000 examples (probability 0 or 1): a single such example"
        " whose outcome then happens makes nlp infinite."
    )
    assert certainty_sentence(1, rows=None, spec=multiclass) == (
        "Claims certainty on 1 example of the whole test file (some class given probability"
        " 0): a single such example whose true class is one ruled out makes nlp infinite."
    )
    assert certainty_sentence(40, rows=40, spec=regression).startswith(
        "Claims certainty on all 40 examples (zero predictive variance): a single such"
        " example whose target is not exactly the predicted value makes nlpd infinite"
    )
