"""The kept best-per-participant table stays right when entries of one participant (a
team whose members upload at once) are scored, rescored and withdrawn at the same moment
(PostgreSQL: real row locks; each change takes the participant's lock first)."""

import pytest
import time_machine
from django.db import connection
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from challenge_site.submissions import services, withdrawal
from challenge_site.submissions.models import Status, Submission
from challenge_site.teams import services as teams
from tests.concurrency import run_at_once
from tests.factories import VALIDATION, make_challenge, make_dataset, make_user, make_zip
from tests.submissions.helpers import gaussian_lines, upload_file

from .test_best import from_scratch, kept

EACH = 3

pytestmark = pytest.mark.skipif(
    connection.vendor == "sqlite",
    reason="SQLite's in-memory test database cannot be written from several threads at once",
)


def _at_once(jobs) -> list[BaseException]:
    return run_at_once(jobs, join_timeout=180)


@pytest.mark.django_db(transaction=True)
def test_best_entries_stay_right_under_concurrent_scoring_rescoring_and_withdrawal():
    with time_machine.travel(VALIDATION, tick=True):
        challenge = make_challenge(val_daily_limit=50)
        gaze = make_dataset(challenge, "gaze", sizes=(20, 60, 5))
        ada, bob, cy = (make_user(name) for name in ("ada", "bob", "cy"))
        team = teams.create(challenge=challenge, user=ada, name="Gaze", now=VALIDATION)
        teams.join(team=team, user=bob, now=VALIDATION)
        tokens = {user.pk: Token.objects.create(user=user).key for user in (ada, bob, cy)}

        def upload(user, number: int):
            def job():
                client = APIClient()
                client.credentials(HTTP_AUTHORIZATION=f"Token {tokens[user.pk]}")
                data = make_zip({"gaze_val_predict.txt": gaussian_lines(60, seed=number)})
                fields = {"challenge": "demo", "method": f"run {number}", "file": upload_file(data)}
                response = client.post("/api/v1/submissions/", fields, format="multipart")
                assert response.status_code == 201, response.content

            return job

        jobs = [
            upload(user, 10 * i + n) for i, user in enumerate((ada, bob, cy)) for n in range(EACH)
        ]
        assert not _at_once(jobs)
        entries = list(Submission.objects.filter(dataset=gaze, is_baseline=False).order_by("pk"))
        assert len(entries) == 3 * EACH
        assert {entry.status for entry in entries} == {Status.SCORED}
        assert kept(gaze) == from_scratch(gaze)

        # Rescore the team's entries while withdrawing two and uploading more, all at once.
        team_entries = [entry for entry in entries if entry.team_id == team.pk]

        def rescore(entry):
            return lambda: services.score_submission(submission_id=entry.pk, force=True)

        def withdraw(entry):
            return lambda: withdrawal.withdraw(
                submission=Submission.objects.get(pk=entry.pk), now=VALIDATION
            )

        jobs = [rescore(entry) for entry in team_entries[:4]]
        jobs += [withdraw(entry) for entry in team_entries[4:]]
        jobs += [upload(ada, 100), upload(bob, 101), upload(cy, 102)]
        assert not _at_once(jobs)
    assert kept(gaze) == from_scratch(gaze)
    team_rows = [row for row in kept(gaze) if row[3] == f"t{team.pk}"]
    assert team_rows  # the team is on the board once per split and loss
