"""sweep_submissions: the command (and the beat's task) that queues again the
submissions whose scoring stopped (what the sweep picks: test_tasks.py)."""

from datetime import timedelta

import time_machine
from django.conf import settings
from django.core.management import call_command

from challenge_site.submissions import tasks
from challenge_site.submissions.models import Status, Submission
from tests.factories import VALIDATION

from .helpers import queued_submission

TIMEOUT = timedelta(seconds=settings.SUBMISSION_SCORING_TIMEOUT)


def test_sweep_command_and_task(gaze, participant, capsys, django_capture_on_commit_callbacks):
    queued_submission(participant, gaze.challenge)
    with (
        time_machine.travel(VALIDATION + TIMEOUT * 2, tick=False),
        django_capture_on_commit_callbacks(execute=True),
    ):
        call_command("sweep_submissions")
        assert tasks.sweep_submissions.delay().get() == []
    assert capsys.readouterr().out == "Queued 1 submission(s) again.\n"
    assert Submission.objects.get().status == Status.SCORED
