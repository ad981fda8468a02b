"""submissions.board_ladder: the board's Ladder (Feedback.BOARD_LADDER) end to end: real
uploads of several accounts, the stored sequence, and the pages, API and exports that
show it (never an unreleased value)."""

import numpy as np
import pytest
import time_machine
from django.db import connection, transaction

import scoring
import scoring.ladder
from challenge_site.challenges.models import Feedback
from challenge_site.submissions import board_ladder, moderation, terms, withdrawal
from challenge_site.submissions.ladder import first_floor
from challenge_site.submissions.models import BoardLadder, BoardStep, Score, SplitResult
from tests.factories import TEST_PHASE, make_dataset, make_user

from .helpers import get_at, stored_file

N_TEST = 400  # 200 in the public part
BOARD = "/challenges/demo/datasets/beta/leaderboard/"
API = "/api/v1/challenges/demo/datasets/beta/leaderboard/?split=public"


@pytest.fixture
def beta(challenge):
    challenge.test_public_fraction = 0.5
    challenge.feedback = Feedback.BOARD_LADDER
    challenge.save()
    return make_dataset(challenge, "beta", task="classification", sizes=(40, 30, N_TEST))


def _lines(p) -> bytes:
    return "".join(f"{x:.6g}\n" for x in p).encode()


def _upload(submit_zip, user, dataset, p, *, method="Model", now=TEST_PHASE):
    files = {"beta_test_predict.txt": _lines(p)}
    return submit_zip(user, dataset.challenge, files, now=now, method=method)


def _quality(dataset, q: float, seed: int) -> np.ndarray:
    """Probability q (jittered) on each example's true class."""
    y = scoring.read_targets(stored_file(dataset, "test", "targets"), path="t")
    jitter = 1 - 0.02 * np.random.default_rng(seed).random(N_TEST)
    return np.where(y == 1, q * jitter, 1 - q * jitter)


def _random(seed: int) -> np.ndarray:
    return 0.05 + 0.9 * np.random.default_rng(seed).random(N_TEST)


def _step(submission, split="public") -> BoardStep:
    return BoardStep.objects.get(submission=submission, board__split=split)


def _exact(submission, split="public") -> float:
    return Score.objects.get(submission=submission, split=split, loss="nlp").value


def _terms(submission, split="public") -> np.ndarray:
    return terms.load(SplitResult.objects.get(submission=submission, split=split).terms)["nlp"]


def _digits(value: float) -> list[str]:
    """The ways a value could be printed: full precision and 3 to 6 decimals."""
    return [repr(value), *(f"{value:.{places}f}" for places in range(3, 7))]


def test_a_second_account_gets_a_value_only_when_it_beats_the_board(
    beta, participant, other, submit_zip
):
    first = _upload(submit_zip, participant, beta, _quality(beta, 0.7, 1), method="First")
    probe = _upload(submit_zip, other, beta, _random(2), method="Probe")
    better = _upload(submit_zip, make_user("alan"), beta, _quality(beta, 0.9, 3), method="Better")
    # The first entry on the board is released (nothing to beat), rounded to its step.
    one, two, three = _step(first), _step(probe), _step(better)
    expected = scoring.ladder.step(
        _terms(first),
        shown=None,
        index=0,
        best=None,
        min_precision=1 / 200,
        first_floor=first_floor(200),
    )
    assert (one.value, one.precision) == (expected.shown, expected.precision)
    assert one.precision == 0.01  # 1/sqrt(200) ≈ 0.07: its first significant digit
    # A random file does not beat it: no value, nothing of its score.
    assert two.value is None and two.precision is None
    # A much better one from a third account does: rounded to the paired step's unit.
    paired = scoring.ladder.step(
        _terms(better),
        shown=one.value,
        best_terms=_terms(first),
        index=1,
        best=0,
        min_precision=1 / 200,
    )
    assert paired.accepted and three.value == paired.shown
    assert three.value == scoring.ladder.round_to(_exact(better), three.precision)
    assert [s.seq for s in (one, two, three)] == [0, 1, 2]
    board = BoardLadder.objects.get(dataset=beta, split="public")
    assert board.holder_id == better.pk and board.next_seq == 3
    assert [one.current, two.current, three.current] == [True, False, True]


def test_no_unreleased_value_leaves_the_server(beta, participant, other, submit_zip):
    _upload(submit_zip, participant, beta, _quality(beta, 0.8, 1), method="Leader")
    probe = _upload(submit_zip, other, beta, _random(2), method="Probe")
    hidden = _digits(_exact(probe))
    page = get_at(BOARD + "?split=public", when=TEST_PHASE)
    html = page.content.decode()
    assert page.status_code == 200 and "Shown through the board's Ladder" in html
    assert "no released score" in html and f'href="/submissions/{probe.pk}/"' in html
    assert not [value for value in hidden if value in html]
    api = get_at(API, when=TEST_PHASE).json()
    assert api["feedback"] == "board_ladder"
    probe_row = next(row for row in api["results"] if row["submission"] == probe.pk)
    assert probe_row["rank"] is None and probe_row["scores"] == {"nlp": None}
    assert not [value for value in hidden if value in str(api)]
    csv = b"".join(
        get_at(BOARD[:-1] + ".csv?split=public", when=TEST_PHASE).streaming_content
    ).decode()
    assert "no released score" in csv and not [value for value in hidden if value in csv]
    # Its own participant learns that one bit, and nothing more.
    own = get_at(f"/submissions/{probe.pk}/", user=other, when=TEST_PHASE).content.decode()
    assert "Not released: not better than the board&#x27;s best by the step" in own
    assert not [value for value in hidden if value in own]
    data = get_at(f"/api/v1/submissions/{probe.pk}/", user=other, when=TEST_PHASE).json()
    assert "public" not in data["scores"]
    assert data["ladder"]["public"] == {
        "loss": "nlp",
        "shown": None,
        "precision": None,
        "accepted": False,
        "ladder": "board",
        "note": board_ladder.NOT_RELEASED,
    }
    mine = get_at("/accounts/submissions/", user=other, when=TEST_PHASE).content.decode()
    assert not [value for value in hidden if value in mine]


def test_withdrawing_the_holder_releases_nothing_more(beta, participant, other, submit_zip):
    """A withdrawn entry stays a step (policy.ladder_steps_q): replayed without it, the
    middle entry would beat a weaker best and its score would come out."""
    first = _upload(submit_zip, participant, beta, _quality(beta, 0.6, 1))
    best = _upload(submit_zip, other, beta, _quality(beta, 0.9, 2))
    middle = _upload(submit_zip, make_user("alan"), beta, _quality(beta, 0.75, 3))
    assert _step(best).value is not None and _step(middle).value is None
    with time_machine.travel(TEST_PHASE, tick=False):
        withdrawal.withdraw(submission=best, now=TEST_PHASE)
    assert _step(best).value is not None and _step(middle).value is None
    assert BoardLadder.objects.get(dataset=beta, split="public").holder_id == best.pk
    board = get_at(BOARD + "?split=public", when=TEST_PHASE).content.decode()
    assert f'href="/submissions/{best.pk}/"' not in board  # off the board all the same
    assert _digits(_exact(middle))[0] not in board
    assert _step(first).seq == 0


def test_an_organiser_hiding_the_holder_recomputes_the_board(
    beta, participant, other, staff, submit_zip
):
    # Invalid uploads first: the entries' ids and their steps' ids differ (a recompute
    # once wrote back only the steps whose id matched a submission's by chance).
    for _ in range(4):
        invalid = submit_zip(
            participant, beta.challenge, {"beta_test_predict.txt": b"x\n"}, now=TEST_PHASE
        )
        assert not BoardStep.objects.filter(submission=invalid).exists()
    first = _upload(submit_zip, participant, beta, _quality(beta, 0.6, 1))
    best = _upload(submit_zip, other, beta, _quality(beta, 0.9, 2))
    middle = _upload(submit_zip, make_user("alan"), beta, _quality(beta, 0.75, 3))
    assert _step(best).value is not None and _step(middle).value is None
    assert _step(middle).pk != middle.pk
    with time_machine.travel(TEST_PHASE, tick=False):
        moderation.hide(
            submissions=type(best).objects.filter(pk=best.pk),
            reason="probing",
            user=staff,
            now=TEST_PHASE,
        )
    # The sequence is replayed in its kept order without the hidden holder: the middle
    # entry beats the first by the step now.
    assert not BoardStep.objects.filter(submission=best).exists()
    assert _step(first).seq == 0 and _step(middle).seq == 2
    assert _step(middle).value == scoring.ladder.round_to(_exact(middle), _step(middle).precision)
    assert BoardLadder.objects.get(dataset=beta, split="public").holder_id == middle.pk


def test_entries_scored_together_are_ordered_by_the_boards_row(
    beta, participant, other, submit_zip
):
    """Entries committed before one refresh (scored at once) take their places in
    submission order under the board's row, and give what one at a time gave."""
    a = _upload(submit_zip, participant, beta, _quality(beta, 0.7, 1))
    b = _upload(submit_zip, other, beta, _quality(beta, 0.9, 2))
    one_at_a_time = [(s.seq, s.value, s.precision) for s in (_step(a), _step(b))]
    BoardLadder.objects.all().delete()  # as if neither had been through the board yet
    with transaction.atomic():
        assert board_ladder.refresh(dataset=beta, split="public") == 2
    assert [(s.seq, s.value, s.precision) for s in (_step(a), _step(b))] == one_at_a_time
    assert one_at_a_time[1][1] is not None  # the second beat the first


def test_many_accounts_learn_no_more_than_one_account(challenge, submit_zip):
    """The attack of issue 32 at small N with the real services: 20 fresh accounts with
    one random file each under the board's Ladder against one account with 20 random
    files under its own Ladder (seeded). The board's best released score is no better."""
    challenge.test_public_fraction = 0.5
    challenge.feedback = Feedback.BOARD_LADDER
    challenge.test_daily_limit = None
    challenge.save()
    beta = make_dataset(challenge, "beta", task="classification", sizes=(40, 30, N_TEST))
    files = [_random(100 + seed) for seed in range(20)]
    for index, p in enumerate(files):
        _upload(submit_zip, make_user(f"sybil{index}"), beta, p)
    board_best = min(
        BoardStep.objects.filter(board__dataset=beta, value__isnull=False).values_list(
            "value", flat=True
        )
    )
    # The same files from one account under the per-participant Ladder.
    alone = make_user("alone")
    entries = [_upload(submit_zip, alone, beta, p, method="again") for p in files]
    own_best = min(
        Score.objects.filter(submission__in=entries, split="public", loss="nlp")
        .exclude(ladder_value=None)
        .values_list("ladder_value", flat=True)
    )
    assert board_best >= own_best
    # Sharper: the board released exactly what the one account's Ladder shows after the
    # same uploads in the same order, one value per real improvement.
    released = list(
        BoardStep.objects.filter(board__dataset=beta, board__split="public", value__isnull=False)
        .exclude(submission__in=entries)
        .order_by("seq")
        .values_list("value", flat=True)
    )
    accepted = list(
        Score.objects.filter(
            submission__in=entries, split="public", loss="nlp", ladder_accepted=True
        )
        .order_by("submission__created", "submission_id")
        .values_list("ladder_value", flat=True)
    )
    assert released == accepted and len(released) <= 3
    # Under each participant's own Ladder the 20 accounts' first entries are all shown:
    # 20 values (20 probes) where the board released a few.
    firsts = Score.objects.filter(
        submission__user__username__startswith="sybil", split="public", loss="nlp"
    ).exclude(ladder_value=None)
    assert firsts.count() == 20


@pytest.mark.skipif(
    connection.vendor == "sqlite",
    reason="SQLite's in-memory test database cannot be written from several threads at once",
)
@pytest.mark.django_db(transaction=True)
def test_entries_of_many_accounts_scored_at_once_leave_one_consistent_board():
    """Eight accounts' validation entries scored at the same moment under the board's
    Ladder (PostgreSQL: real row locks): each run takes its participant's lock, then the
    board's row, so none deadlocks; the places are distinct and the stored board is the
    Ladder of the entries in that order."""
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    from tests.concurrency import run_at_once
    from tests.factories import VALIDATION, make_challenge, make_zip

    from .helpers import gaussian_lines, upload_file

    count = 8
    statuses: list[int] = []
    with time_machine.travel(VALIDATION, tick=True):
        challenge = make_challenge(feedback=Feedback.BOARD_LADDER)
        make_dataset(challenge, "gaze", sizes=(20, 60, 5))
        tokens = [Token.objects.create(user=make_user(f"u{n}")).key for n in range(count)]

        def job(number: int):
            def run() -> None:
                client = APIClient()
                client.credentials(HTTP_AUTHORIZATION=f"Token {tokens[number]}")
                data = make_zip({"gaze_val_predict.txt": gaussian_lines(60, seed=number)})
                fields = {"challenge": "demo", "method": f"run {number}"}
                fields["file"] = upload_file(data)
                response = client.post("/api/v1/submissions/", fields, format="multipart")
                statuses.append(response.status_code)

            return run

        failures = run_at_once([job(n) for n in range(count)], join_timeout=120)
    assert not failures, failures
    assert statuses == [201] * count
    steps = list(BoardStep.objects.filter(board__split="val").order_by("seq"))
    assert sorted(step.seq for step in steps) == list(range(count))
    dataset = steps[0].submission.dataset
    key = scoring.find_loss(dataset.task, dataset.effective_ranking_loss).terms_key
    names = [SplitResult.objects.get(submission=s.submission, split="val").terms for s in steps]
    replay = scoring.ladder.ladder(
        [terms.load(name)[key] for name in names],
        min_precision=1 / 60,
        first_floor=first_floor(60),
    )
    released = [(step.value, step.precision) for step in steps]
    assert released == [
        (result.shown, result.precision) if result.accepted else (None, None) for result in replay
    ]
