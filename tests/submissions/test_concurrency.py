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

from .helpers import gaussian_lines, predictions, upload_file

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


@pytest.mark.django_db(transaction=True)
def test_entries_of_one_participant_scored_at_once_leave_one_consistent_ladder():
    """Eight validation entries of one participant uploaded and scored at the same moment
    under the Ladder: each run takes the participant's lock before its submission's, so
    none deadlocks, and the stored Ladder is the one of the entries in submission order."""
    import numpy as np

    import scoring.ladder
    from challenge_site.challenges.models import Feedback
    from challenge_site.submissions import terms
    from challenge_site.submissions.models import Score, SplitResult

    threads_count = 8
    with time_machine.travel(VALIDATION, tick=True):
        challenge = make_challenge(feedback=Feedback.LADDER)
        make_dataset(challenge, "gaze", sizes=(20, 60, 5))
        user = User.objects.create_user("ada", "ada@example.org", "a-long-Passphrase-42")
        token = Token.objects.create(user=user).key
        barrier = threading.Barrier(threads_count)
        statuses: list[int] = []
        failures: list[BaseException] = []

        def upload(number: int) -> None:
            try:
                client = APIClient()
                client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
                data = make_zip({"gaze_val_predict.txt": gaussian_lines(60, seed=number)})
                fields = {"challenge": "demo", "method": f"run {number}", "file": upload_file(data)}
                barrier.wait(timeout=30)
                response = client.post("/api/v1/submissions/", fields, format="multipart")
                statuses.append(response.status_code)
            except BaseException as error:
                failures.append(error)
            finally:
                connection.close()

        threads = [threading.Thread(target=upload, args=(n,)) for n in range(threads_count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)

    assert not failures, failures
    assert statuses == [201] * threads_count
    entries = list(Submission.objects.filter(user=user).order_by("created", "pk"))
    assert {entry.status for entry in entries} == {Status.SCORED}
    rows = [Score.objects.get(submission=entry, split="val", loss="nlpd") for entry in entries]
    sequence = [
        terms.load(SplitResult.objects.get(submission=entry, split="val").terms)["nlpd"]
        for entry in entries
    ]
    steps = scoring.ladder.ladder(sequence, min_precision=1 / 60)
    assert [row.ladder_value for row in rows] == [step.shown for step in steps]
    assert [row.ladder_current for row in rows] == [
        index == steps[-1].best for index in range(threads_count)
    ]
    assert np.isfinite([row.ladder_value for row in rows]).all()
