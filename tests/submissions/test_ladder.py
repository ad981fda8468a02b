"""submissions.ladder: Ladder feedback (Challenge.feedback = ladder) end to end: real
uploads, the stored Ladder, and every place a score of a feedback split is shown (the
board's rows on their own: tests/leaderboard/test_ladder_board.py)."""

import numpy as np
import pytest
import time_machine

import scoring.ladder
from challenge_site.challenges.models import Feedback
from challenge_site.submissions import moderation, terms
from challenge_site.submissions.models import Score, SplitResult
from tests.factories import AFTER, TEST_PHASE, VALIDATION, make_dataset, make_user

from .helpers import get_at, stored_file

N_TEST, N_VAL = 400, 300
BOARD = "/challenges/demo/datasets/beta/leaderboard/"


@pytest.fixture
def beta(challenge):
    challenge.test_public_fraction = 0.5
    challenge.feedback = Feedback.LADDER
    challenge.save()
    return make_dataset(challenge, "beta", task="classification", sizes=(40, N_VAL, N_TEST))


def _lines(p) -> bytes:
    return "".join(f"{x:.6g}\n" for x in p).encode()


def _probabilities(rows: int, seed: int) -> np.ndarray:
    return 0.05 + 0.9 * np.random.default_rng(seed).random(rows)


def _upload(submit_zip, user, dataset, p, *, split="test", now=TEST_PHASE, method="Model"):
    files = {f"beta_{split}_predict.txt": _lines(p)}
    return submit_zip(user, dataset.challenge, files, now=now, method=method)


def _get(url, *, user=None, when=TEST_PHASE):
    return get_at(url, user=user, when=when)


def _row(submission, split="public"):
    return Score.objects.get(submission=submission, split=split, loss="nlp")


def _terms(submission, split="public"):
    name = SplitResult.objects.get(submission=submission, split=split).terms
    return terms.load(name)["nlp"]


def test_the_stored_ladder_is_the_scoring_packages(beta, participant, submit_zip):
    p = _probabilities(N_TEST, 1)
    first = _upload(submit_zip, participant, beta, p)
    second = _upload(submit_zip, participant, beta, p)  # the same file again
    third = _upload(submit_zip, participant, beta, np.full(N_TEST, 0.5))
    steps = scoring.ladder.ladder(
        [_terms(s) for s in (first, second, third)], min_precision=1 / (N_TEST // 2)
    )
    rows = [_row(s) for s in (first, second, third)]
    for row, step in zip(rows, steps, strict=True):
        assert row.ladder_value == step.shown
        assert row.ladder_precision == pytest.approx(steps[step.best].precision)
        assert row.ladder_accepted is step.accepted
    assert rows[0].ladder_accepted and not rows[1].ladder_accepted
    assert [row.ladder_current for row in rows] == [i == steps[-1].best for i in range(3)]
    # The shown score is the first entry's, rounded to its threshold's precision.
    assert rows[1].ladder_value == rows[0].ladder_value
    assert rows[0].ladder_value == scoring.ladder.round_to(rows[0].value, rows[0].ladder_precision)
    assert rows[0].ladder_precision == scoring.ladder.rounding_unit(steps[0].threshold, 1 / 200)
    # Only that power of ten is published, never the threshold (a statistic of the terms).
    board = _get("/api/v1/challenges/demo/datasets/beta/leaderboard/?split=public").json()
    assert board["results"][0]["precision"] == rows[0].ladder_precision
    assert "threshold" not in board["results"][0]
    assert repr(steps[0].threshold) not in _get(BOARD + "?split=public").content.decode()
    assert rows[0].ladder_value != rows[0].value


def test_the_public_board_shows_the_ladder_not_the_exact_scores(
    beta, participant, other, staff, submit_zip
):
    p = _probabilities(N_TEST, 1)
    first = _upload(submit_zip, participant, beta, p, method="First")
    # A probe a little worse on every example: the Ladder keeps the first entry's score.
    y = scoring.read_targets(stored_file(beta, "test", "targets"), path="t")
    worse = np.clip(p - 0.01 * y, 0.01, 0.99)
    probe = _upload(submit_zip, participant, beta, worse, method="Probe")
    exact = [repr(_row(s).value) for s in (first, probe)]
    shown = _row(probe).ladder_value
    page = _get(BOARD + "?split=public")
    html = page.content.decode()
    assert page.status_code == 200 and "Shown through the Ladder" in html
    assert not any(value in html for value in exact), [
        html[html.index(v) - 200 : html.index(v) + 50] for v in exact if v in html
    ]
    assert scoring.ladder.decimals(_row(first).ladder_precision) is not None
    assert f'href="/submissions/{first.pk}/"' in html  # the entry that set the score
    assert f'href="/submissions/{probe.pk}/"' not in html
    assert _row(probe).value > _row(first).value and shown == _row(first).ladder_value
    api = _get("/api/v1/challenges/demo/datasets/beta/leaderboard/?split=public").json()
    assert api["feedback"] == "ladder"
    assert [row["submission"] for row in api["results"]] == [first.pk]
    assert api["results"][0]["scores"]["nlp"] == pytest.approx(shown)
    csv = b"".join(_get(BOARD[:-1] + ".csv?split=public").streaming_content).decode()
    assert not any(value in csv for value in exact)
    assert str(first.pk) in csv
    for extra in ("plot.svg", "forest.svg"):
        response = _get(BOARD + f"{extra}?split=public")
        assert response.status_code == 403
    # The owner's page and API: the shown score, not the exact one, no plot.
    own = _get(f"/submissions/{probe.pk}/", user=participant).content.decode()
    assert "did not beat your shown score" in own
    assert not any(value in own for value in exact)
    data = _get(f"/api/v1/submissions/{probe.pk}/", user=participant).json()
    assert "public" not in data["scores"] and data["ladder"]["public"]["accepted"] is False
    assert _get(f"/submissions/{probe.pk}/plots/public.svg", user=participant).status_code == 404
    # Organisers see the exact scores.
    assert exact[1] in _get(BOARD + "?split=public&sort=nlp", user=staff).content.decode()
    # So does everyone once the results are published.
    with time_machine.travel(AFTER, tick=False):
        beta.challenge.results_published = True
        beta.challenge.save()
    assert exact[1] in _get(BOARD + "?split=public", when=AFTER).content.decode()


def test_validation_scores_go_through_the_ladder_until_their_targets_are_released(
    beta, participant, submit_zip
):
    entry = _upload(
        submit_zip, participant, beta, _probabilities(N_VAL, 2), split="val", now=VALIDATION
    )
    exact = repr(_row(entry, "val").value)
    during = _get(BOARD + "?split=val", when=VALIDATION).content.decode()
    assert "Shown through the Ladder" in during and exact not in during
    after = _get(BOARD + "?split=val", when=TEST_PHASE).content.decode()
    assert "Shown through the Ladder" not in after and exact in after


def test_a_real_improvement_moves_the_shown_score_and_hiding_it_moves_it_back(
    beta, participant, staff, submit_zip
):
    rng = np.random.default_rng(3)
    first = _upload(submit_zip, participant, beta, _probabilities(N_TEST, 1))
    # Much better: the probability of each true class is raised to 0.9.
    targets = scoring.read_targets(stored_file(beta, "test", "targets"), path="t")
    good = np.where(targets == 1, 0.9, 0.1) * (1 - 0.02 * rng.random(N_TEST))
    better = _upload(submit_zip, participant, beta, good)
    assert _row(better).ladder_accepted is True and _row(better).ladder_current
    assert _row(better).ladder_value < _row(first).ladder_value
    with time_machine.travel(TEST_PHASE, tick=False):
        moderation.hide(
            submissions=type(better).objects.filter(pk=better.pk),
            reason="probing",
            user=staff,
            now=TEST_PHASE,
        )
    assert _row(first).ladder_current and _row(better).ladder_current is False


def test_two_participants_each_have_their_own_ladder(beta, participant, submit_zip):
    other = make_user("grace")
    a = _upload(submit_zip, participant, beta, _probabilities(N_TEST, 1))
    b = _upload(submit_zip, other, beta, _probabilities(N_TEST, 2))
    assert _row(a).ladder_current and _row(b).ladder_current
    assert _row(b).ladder_accepted is True


def test_a_fresh_accounts_first_entry_is_rounded_like_an_honest_one(beta, participant, submit_zip):
    """Issue 32: p = 0.99 on one row and 0.5 elsewhere has a threshold of ~0 on its own,
    so at 1,000 public examples it was shown to 1/n = 0.001, which tells that row's label
    and part (one row moves the mean by ~0.004). Its first shown score is now rounded with
    at least 1/sqrt(n) ≈ 0.03: to 0.01, the unit of an honest first entry."""
    wide = make_dataset(beta.challenge, "wide", task="classification", sizes=(40, 30, 2000))
    p = np.full(2000, 0.5)
    p[7] = 0.99
    files = {"wide_test_predict.txt": _lines(p)}
    probe = submit_zip(participant, beta.challenge, files, now=TEST_PHASE, method="Probe")
    row = _row(probe)
    alone = scoring.ladder.threshold(_terms(probe))
    assert scoring.ladder.rounding_unit(alone, 1 / 1000) == 0.001  # what it used to get
    assert row.ladder_precision == 0.01
    assert row.ladder_value == scoring.ladder.round_to(row.value, 0.01)
    rng = np.random.default_rng(4)
    honest_p = 0.05 + 0.9 * rng.random(2000)
    honest = submit_zip(
        make_user("honest"),
        beta.challenge,
        {"wide_test_predict.txt": _lines(honest_p)},
        now=TEST_PHASE,
        method="Honest",
    )
    assert _row(honest).ladder_precision == 0.01
    assert wide.pk == probe.dataset_id


def test_a_step_reads_the_current_entrys_terms_kept_in_memory(
    beta, participant, submit_zip, storage_roots
):
    """The Ladder's step reads one array of the current entry's terms file, kept in
    terms.COMPARED: whole files written since (terms.KEPT emptied) and the file itself
    gone, the next entry gets the step it gets from the storage."""
    p = _probabilities(N_TEST, 2)
    first = _upload(submit_zip, participant, beta, p)
    public = SplitResult.objects.get(submission=first, split="public").terms
    assert terms.COMPARED.peek(public) is not None
    terms.KEPT.clear()
    saved = (storage_roots["private"] / public).read_bytes()
    (storage_roots["private"] / public).unlink()
    better = np.where(np.random.default_rng(3).random(N_TEST) < 0.5, p, 0.5)
    second = _upload(submit_zip, participant, beta, better)
    (storage_roots["private"] / public).write_bytes(saved)
    steps = scoring.ladder.ladder(
        [_terms(s) for s in (first, second)], min_precision=1 / (N_TEST // 2)
    )
    row = _row(second)
    assert (row.ladder_value, row.ladder_accepted) == (steps[1].shown, steps[1].accepted)
