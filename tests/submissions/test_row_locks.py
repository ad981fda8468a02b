"""The row locks a change of entries takes on a submission (scoring, withdrawal,
moderation) are FOR NO KEY UPDATE: they change the row, never its key, so they leave
another transaction free to point at it (a foreign key's check takes FOR KEY SHARE)
while the change waits for the board's row (PostgreSQL: real row locks)."""

import threading

import pytest
from django.db import connection, transaction

from challenge_site.submissions import board_ladder, standings, withdrawal
from challenge_site.submissions.models import BoardLadder, Submission
from tests.concurrency import run_at_once
from tests.factories import VALIDATION, make_challenge, make_dataset, make_user
from tests.leaderboard.helpers import entry

pytestmark = pytest.mark.skipif(
    connection.vendor == "sqlite",
    reason="SQLite's in-memory test database cannot be written from several threads at once",
)


@pytest.mark.django_db(transaction=True)
def test_a_withdrawal_waiting_for_the_board_and_a_board_naming_its_entry_do_not_deadlock(
    monkeypatch,
):
    # What CI's PostgreSQL pass once met: a withdrawal holds its entry's row and waits for
    # the board's row, while the board's Ladder, recomputed by another participant's
    # scoring, makes that entry its holder (holder_id: a foreign key to the entry).
    dataset = make_dataset(make_challenge(), "gaze")
    withdrawn = entry(dataset, user=make_user("ada"), created=VALIDATION)
    entry_locked, board_locked = threading.Event(), threading.Event()
    changed = standings.entries_changed

    def entries_changed(**kwargs):  # (the withdrawal's, with its entry's row locked)
        entry_locked.set()
        assert board_locked.wait(timeout=30)
        changed(**kwargs)

    monkeypatch.setattr(standings, "entries_changed", entries_changed)

    def withdraw():
        withdrawal.withdraw(submission=withdrawn, now=VALIDATION)

    def board_names_the_entry():
        assert entry_locked.wait(timeout=30)
        with transaction.atomic():
            board = board_ladder.lock(dataset=dataset, split="val")
            board_locked.set()  # the withdrawal now waits for the board's row
            BoardLadder.objects.filter(pk=board.pk).update(holder_id=withdrawn.pk)

    assert run_at_once([withdraw, board_names_the_entry], join_timeout=60) == []
    assert Submission.objects.get(pk=withdrawn.pk).withdrawn_at == VALIDATION
