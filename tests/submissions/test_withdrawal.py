"""Withdrawing an entry, and the filters of My submissions."""

import pytest
import time_machine
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from challenge_site.submissions.limits import LimitReached
from challenge_site.submissions.models import Submission
from tests.factories import AFTER, VALIDATION
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
