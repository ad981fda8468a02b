import pytest
import time_machine
from rest_framework.test import APIClient

from challenge_site.submissions import finals, withdrawal
from challenge_site.submissions.models import Submission
from tests.factories import AFTER, DEADLINE, TEST_PHASE, VALIDATION, make_dataset, make_user
from tests.submissions.helpers import predictions
from datetime import timedelta


def test_api_rows_hidden(challenge, gaze):
    with time_machine.travel(VALIDATION, tick=False):
        body = APIClient().get("/api/v1/challenges/demo/").json()
    print(challenge.test_inputs_release, body["datasets"][0]["rows"], [f["filename"] for f in body["datasets"][0]["files"]])
    assert body["datasets"][0]["rows"]["test"] is None


def test_withdraw_after_deadline_changes_final_set(challenge, submit_zip):
    challenge.test_public_fraction = 0.5
    challenge.final_entries = 1
    challenge.save()
    ds = make_dataset(challenge, "beta", task="classification", sizes=(40, 30, 40))
    ada = make_user("ada")
    from tests.submissions.helpers import probability_lines
    subs = [submit_zip(ada, challenge, {"beta_test_predict.txt": probability_lines(40, seed=s)}, now=TEST_PHASE, method=f"m{s}") for s in (1, 2, 3)]
    finals.choose(submission=subs[0], final=True, now=TEST_PHASE)
    for s in subs:
        s.refresh_from_db()
    before = [s.in_final_ranking for s in subs]
    after_deadline = DEADLINE + timedelta(hours=1)
    withdrawal.withdraw(submission=subs[0], now=after_deadline)
    for s in subs:
        s.refresh_from_db()
    after = [s.in_final_ranking for s in subs]
    print("before", before, "after", after)
    assert after[1:] == before[1:], "final ranking set changed after the deadline"
