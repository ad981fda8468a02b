"""Withdrawing an entry, and the filters of My submissions."""

from datetime import timedelta

import numpy as np
import pytest
import time_machine
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from challenge_site.submissions.limits import LimitReached
from challenge_site.submissions.models import Submission
from tests.factories import AFTER, DEADLINE, TEST_PHASE, VALIDATION
from tests.pages import page_text

from .helpers import predictions

BOARD = "/challenges/demo/datasets/gaze/leaderboard/"


def _client(user):
    client = Client()
    client.force_login(user)
    return client


def test_a_withdrawn_entry_leaves_the_board_and_still_counts(
    challenge, gaze, participant, other, submit_zip
):
    challenge.val_daily_limit = 2
    challenge.save()
    entry = submit_zip(
        participant, challenge, predictions("gaze"), method="Withdrawn GP", now=VALIDATION
    )
    with time_machine.travel(VALIDATION, tick=False):
        assert "Withdrawn GP" in page_text(Client().get(BOARD))
        # Someone else's entry: the same 404 as a missing one.
        assert _client(other).post(f"/submissions/{entry.pk}/withdraw/").status_code == 404
        response = _client(participant).post(f"/submissions/{entry.pk}/withdraw/")
        assert response.status_code == 302
        assert "Withdrawn GP" not in page_text(Client().get(BOARD))
        # Its page is its owner's now, and says so.
        assert Client().get(f"/submissions/{entry.pk}/").status_code == 404
        page = page_text(_client(participant).get(f"/submissions/{entry.pk}/"))
        assert "Withdrawn on" in page and "Withdraw this entry" not in page
    entry.refresh_from_db()
    assert entry.withdrawn_at == VALIDATION
    submit_zip(participant, challenge, predictions("gaze"), now=VALIDATION)
    with pytest.raises(LimitReached):
        submit_zip(participant, challenge, predictions("gaze"), now=VALIDATION)


def test_withdrawing_by_api_and_not_after_publication(challenge, gaze, participant, submit_zip):
    first = submit_zip(participant, challenge, predictions("gaze"), now=VALIDATION)
    second = submit_zip(participant, challenge, predictions("gaze"), now=VALIDATION)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=participant).key}")
    with time_machine.travel(VALIDATION, tick=False):
        response = api.post(f"/api/v1/submissions/{first.pk}/withdraw/")
        assert response.status_code == 200 and response.json()["id"] == first.pk
        again = api.post(f"/api/v1/submissions/{first.pk}/withdraw/")
        assert again.status_code == 400 and "withdrawn already" in again.json()["detail"]
    with time_machine.travel(AFTER, tick=False):
        challenge.results_published = True
        challenge.save()
        late = api.post(f"/api/v1/submissions/{second.pk}/withdraw/")
    assert late.status_code == 400 and "published" in late.json()["detail"]
    second.refresh_from_db()
    assert second.withdrawn_at is None


def test_my_submissions_filters(challenge, gaze, participant, submit_zip):
    scored = submit_zip(participant, challenge, predictions("gaze"), method="Good", now=VALIDATION)
    submit_zip(
        participant, challenge, {"gaze_val_predict.txt": b"no\n"}, method="Bad", now=VALIDATION
    )
    assert Submission.objects.filter(status="invalid").count() == 1
    client = _client(participant)
    everything = page_text(client.get("/accounts/submissions/"))
    assert "Good" in everything and "Bad" in everything
    hidden = page_text(client.get("/accounts/submissions/?hide_invalid=on"))
    assert "Good" in hidden and " Bad " not in hidden
    only_invalid = page_text(client.get("/accounts/submissions/?status=invalid"))
    assert "Bad" in only_invalid and "Good" not in only_invalid
    nothing = page_text(client.get("/accounts/submissions/?status=withdrawn"))
    assert "None of your submissions match these filters." in nothing
    wrong = client.get("/accounts/submissions/?status=sideways")
    assert wrong.status_code == 400
    assert "Select a valid choice. sideways is not one of the available choices." in page_text(
        wrong
    )
    assert scored.pk


def test_withdrawing_keeps_the_ladder_as_it_was(challenge, participant, submit_zip):
    """Taken out of the Ladder, a withdrawn best would make the Ladder judge the later
    entries again and show the rounded score of one that did not beat it."""
    from tests.factories import dataset_files, make_dataset

    challenge.feedback = "ladder"
    challenge.save()
    make_dataset(challenge, "beta", task="classification", sizes=(40, 200, 20))
    rng = np.random.default_rng(0)
    targets = dataset_files("beta", task="classification", sizes=(40, 200, 20))
    y = np.array(targets["beta_val_targets.txt"].split(), dtype=float)
    good = np.where(y > 0, 0.8, 0.2)
    bad = np.clip(good + rng.normal(0, 0.25, y.size), 0.05, 0.95)
    first = submit_zip(
        participant, challenge, {"beta_val_predict.txt": _lines(good)}, now=VALIDATION
    )
    worse = submit_zip(
        participant, challenge, {"beta_val_predict.txt": _lines(bad)}, now=VALIDATION
    )
    before = _ladder(worse)
    assert before[2] is False  # did not beat the first: shows the first's score
    with time_machine.travel(VALIDATION, tick=False):
        assert _client(participant).post(f"/submissions/{first.pk}/withdraw/").status_code == 302
    assert _ladder(worse) == before


def test_test_entries_stay_after_the_deadline(challenge, gaze, participant, submit_zip):
    entry = submit_zip(participant, challenge, predictions("gaze", ("test",)), now=TEST_PHASE)
    with time_machine.travel(DEADLINE + timedelta(hours=1), tick=False):
        response = _client(participant).post(f"/submissions/{entry.pk}/withdraw/")
        page = page_text(_client(participant).get(f"/submissions/{entry.pk}/"))
    assert response.status_code == 302
    assert "Withdraw this entry" not in page
    entry.refresh_from_db()
    assert entry.withdrawn_at is None


def _lines(p) -> bytes:
    return "".join(f"{x:.6g}\n" for x in p).encode()


def _ladder(submission):
    from challenge_site.submissions.models import Score

    row = Score.objects.get(
        submission=submission, split="val", loss=submission.dataset.effective_ranking_loss
    )
    return (row.ladder_value, row.ladder_precision, row.ladder_accepted)
