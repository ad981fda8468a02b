"""submissions.final_views: marking an entry as final on its page and by the API: its
owner only, with the CSRF token, during the test phase (which entries count:
test_finals.py)."""

import numpy as np
import pytest
import time_machine
from django.test import Client

from tests.factories import AFTER, TEST_PHASE, make_dataset

N_TEST = 100


@pytest.fixture
def beta(challenge):
    challenge.test_public_fraction = 0.4
    challenge.save()
    return make_dataset(challenge, "beta", task="classification", sizes=(40, 20, N_TEST))


def _upload(submit_zip, user, dataset, seed, *, method=None):
    p = 0.05 + 0.9 * np.random.default_rng(seed).random(N_TEST)
    files = {"beta_test_predict.txt": "".join(f"{x:.6g}\n" for x in p).encode()}
    return submit_zip(user, dataset.challenge, files, now=TEST_PHASE, method=method or f"m{seed}")


def _post(url, data, *, user, when=TEST_PHASE, csrf=False):
    client = Client(enforce_csrf_checks=csrf)
    with time_machine.travel(when, tick=False):
        client.force_login(user)
        return client.post(url, data)


def test_only_the_owner_chooses_with_csrf_during_the_test_phase(
    beta, participant, other, submit_zip
):
    entry = _upload(submit_zip, participant, beta, 1)
    assert _post(f"/submissions/{entry.pk}/final/", {"final": "1"}, user=other).status_code == 404
    forged = _post(f"/submissions/{entry.pk}/final/", {"final": "1"}, user=participant, csrf=True)
    assert forged.status_code == 403
    api = Client()
    with time_machine.travel(TEST_PHASE, tick=False):
        api.force_login(other)
        response = api.post(
            f"/api/v1/submissions/{entry.pk}/final/",
            {"final": True},
            content_type="application/json",
        )
    assert response.status_code == 404
    late = _post(f"/submissions/{entry.pk}/final/", {"final": "1"}, user=participant, when=AFTER)
    assert late.status_code == 302
    entry.refresh_from_db()
    assert entry.final is False


def test_the_api_marks_an_entry_final(beta, participant, submit_zip):
    entry = _upload(submit_zip, participant, beta, 1)
    client = Client()
    with time_machine.travel(TEST_PHASE, tick=False):
        client.force_login(participant)
        response = client.post(
            f"/api/v1/submissions/{entry.pk}/final/",
            {"final": True},
            content_type="application/json",
        )
        bad = client.post(
            f"/api/v1/submissions/{entry.pk}/final/",
            {"final": "yes"},
            content_type="application/json",
        )
        detail = client.get(f"/api/v1/submissions/{entry.pk}/").json()
    assert response.status_code == 200, response.content
    assert response.json() == {
        "final": True,
        "selectable": True,
        "chosen": 1,
        "limit": 2,
        "in_final_ranking": True,
        "full": False,
    }
    assert bad.status_code == 400
    assert detail["final_selection"]["final"] is True


@pytest.mark.parametrize("body", ["[true]", "true", '"final"'])
def test_a_body_that_is_not_an_object_is_refused_with_400(beta, participant, submit_zip, body):
    """Found by schemathesis: a JSON array reached ``request.data.get`` (500)."""
    entry = _upload(submit_zip, participant, beta, 1)
    client = Client()
    with time_machine.travel(TEST_PHASE, tick=False):
        client.force_login(participant)
        response = client.post(
            f"/api/v1/submissions/{entry.pk}/final/", body, content_type="application/json"
        )
    assert response.status_code == 400
    assert response.json() == {"final": ['expected an object: {"final": true}']}


def test_at_two_of_two_the_page_offers_no_third_mark(beta, participant, submit_zip):
    entries = [_upload(submit_zip, participant, beta, seed) for seed in (1, 2, 3)]
    for entry in entries[:2]:
        assert (
            _post(f"/submissions/{entry.pk}/final/", {"final": "1"}, user=participant).status_code
            == 302
        )
    client = Client()
    with time_machine.travel(TEST_PHASE, tick=False):
        client.force_login(participant)
        third = client.get(f"/submissions/{entries[2].pk}/").content.decode()
        chosen = client.get(f"/submissions/{entries[0].pk}/").content.decode()
    assert "You have chosen 2 of at most 2 final entries" in third
    assert "Mark as final" not in third
    assert "first unmark one of your 2 final entries" in third
    assert "Unmark as final" in chosen


def test_an_invalid_entry_offers_neither_the_final_panel_nor_withdrawal(
    beta, participant, submit_zip
):
    bad = submit_zip(
        participant, beta.challenge, {"beta_test_predict.txt": b"oops\n"}, now=TEST_PHASE
    )
    assert bad.status == "invalid"
    client = Client()
    with time_machine.travel(TEST_PHASE, tick=False):
        client.force_login(participant)
        page = client.get(f"/submissions/{bad.pk}/").content.decode()
        refused = client.post(f"/submissions/{bad.pk}/withdraw/")
    assert "Final entry" not in page and "Mark as final" not in page
    assert "Withdraw this entry" not in page
    assert refused.status_code == 302
    bad.refresh_from_db()
    assert bad.withdrawn_at is None
