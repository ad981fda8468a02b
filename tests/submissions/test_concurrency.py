"""Submission limits hold when uploads arrive at the same moment (PostgreSQL: real row locks)."""

import threading
from collections import Counter

import pytest
import time_machine
from django.contrib.auth.models import User
from django.db import connection
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from challenge_site.submissions.models import Status, Submission
from tests.factories import VALIDATION, make_challenge, make_dataset, make_zip

from .helpers import predictions, upload_file

THREADS = 20
LIMIT = 5

pytestmark = pytest.mark.skipif(
    connection.vendor == "sqlite",
    reason="SQLite's in-memory test database cannot be written from several threads at once",
)


@pytest.mark.django_db(transaction=True)
def test_twenty_simultaneous_uploads_against_a_limit_of_five_leave_exactly_five():
    with time_machine.travel(VALIDATION, tick=True):
        challenge = make_challenge(val_daily_limit=LIMIT)
        make_dataset(challenge, "gaze")
        user = User.objects.create_user("ada", "ada@example.org", "a-long-Passphrase-42")
        token = Token.objects.create(user=user).key
        data = make_zip(predictions("gaze"))
        barrier = threading.Barrier(THREADS)
        statuses: list[int] = []
        failures: list[BaseException] = []

        def upload(number: int) -> None:
            try:
                client = APIClient()
                client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
                fields = {"challenge": "demo", "method": f"run {number}"}
                fields["file"] = upload_file(data)
                barrier.wait(timeout=30)
                response = client.post("/api/v1/submissions/", fields, format="multipart")
                statuses.append(response.status_code)
            except BaseException as error:  # reported below, in the test's thread
                failures.append(error)
            finally:
                connection.close()  # each thread had its own connection

        threads = [threading.Thread(target=upload, args=(n,)) for n in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)

    assert not failures, failures
    assert Counter(statuses) == {201: LIMIT, 429: THREADS - LIMIT}
    accepted = Submission.objects.filter(user=user)
    assert accepted.count() == LIMIT
    assert set(accepted.values_list("status", flat=True)) == {Status.SCORED}
