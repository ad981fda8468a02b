"""load_demo_submissions: the demo loader run on the demo challenges by name, a line of
what it sent per challenge (what it sends: tests/leaderboard/demo/test_loader.py)."""

import io
import re

import pytest
from django.core.management import CommandError, call_command


def test_it_says_what_it_sent_and_what_was_already_there(demo, django_capture_on_commit_callbacks):
    out = io.StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_demo_submissions", "epuc", stdout=out)
    sent = (3 * 2 + 1) + (5 * 2 + 1) + (4 * 2 + 1)
    # (Scored on commit: inside this test's transaction, after the command has counted.)
    assert re.fullmatch(
        rf"epuc: {sent} submissions sent \(\d+ scored\), 0 already there",
        out.getvalue().splitlines()[-1],
    )
    again = io.StringIO()
    call_command("load_demo_submissions", "epuc", stdout=again)
    assert again.getvalue().splitlines()[-1] == (
        f"epuc: 0 submissions sent (0 scored), {sent} already there"
    )


def test_unknown_challenges_are_named(db):
    with pytest.raises(CommandError, match="no challenge covshift"):
        call_command("load_demo_submissions", "covshift")
