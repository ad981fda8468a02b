"""A team's limit holds when its members upload at the same moment, and while one of
them joins (PostgreSQL: real row locks)."""

from collections import Counter

import pytest
import time_machine
from django.db import connection
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from challenge_site.submissions.models import Submission
from challenge_site.teams import services
from tests.concurrency import run_at_once
from tests.factories import VALIDATION, make_challenge, make_dataset, make_user, make_zip
from tests.submissions.helpers import predictions, upload_file

LIMIT = 4
MEMBERS = 4
EACH = 3  # uploads per member, all at once: 12 against a team limit of 4

pytestmark = pytest.mark.skipif(
    connection.vendor == "sqlite",
    reason="SQLite's in-memory test database cannot be written from several threads at once",
)


def _run_at_once(jobs) -> list[BaseException]:
    return run_at_once(jobs, join_timeout=120)


@pytest.mark.django_db(transaction=True)
def test_members_uploading_at_once_and_one_joining_stay_within_the_team_limit():
    with time_machine.travel(VALIDATION, tick=True):
        challenge = make_challenge(val_daily_limit=LIMIT)
        make_dataset(challenge, "gaze")
        members = [make_user(f"member{i}") for i in range(MEMBERS)]
        joiner = make_user("late")
        team = services.create(challenge=challenge, user=members[0], name="T", now=VALIDATION)
        for member in members[1:]:
            services.join(team=team, user=member, now=VALIDATION)
        data = make_zip(predictions("gaze"))
        statuses: list[int] = []
        refusals: list[str] = []

        def upload(user, number):
            def job():
                client = APIClient()
                client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get(user=user)}")
                fields = {"challenge": "demo", "method": f"{user} {number}"}
                fields["file"] = upload_file(data)
                response = client.post("/api/v1/submissions/", fields, format="multipart")
                statuses.append(response.status_code)

            return job

        def join():
            try:
                services.join(team=team, user=joiner, now=VALIDATION)
            except services.TeamError as refusal:
                refusals.append(str(refusal))

        for user in [*members, joiner]:
            Token.objects.create(user=user)
        # The joiner uploads once alone first: joining then brings one more entry along.
        jobs = [upload(user, n) for user in members for n in range(EACH)]
        jobs += [upload(joiner, 0), join]
        failures = _run_at_once(jobs)

    assert not failures, failures
    stored = Submission.objects.filter(is_baseline=False)
    assert Counter(statuses)[201] == stored.count()
    # Twelve tries fill the team's limit, never more, however the join and the uploads
    # interleaved: a join that would take the team over its limit is refused.
    assert stored.filter(team=team).count() == LIMIT
    joined = not refusals
    if joined:
        assert not stored.filter(team__isnull=True).exists()
    else:
        assert "over its daily limit" in refusals[0]
        assert stored.filter(user=joiner, team__isnull=True).count() == 1
