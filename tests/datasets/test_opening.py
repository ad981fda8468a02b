"""datasets.opening: what a draft still lacks before it may open, and opening it once."""

from datetime import UTC, datetime

import pytest
import time_machine

from challenge_site.challenges.models import Challenge, EventKind
from datasets.opening import missing_for_opening, open_challenge
from tests.factories import BEFORE_START, make_challenge, make_dataset

SETUP = datetime(2029, 12, 1, tzinfo=UTC)  # before make_challenge's dates


def test_what_is_missing_before_opening(db):
    challenge = make_challenge(slug="draft", opened_at=None)
    make_dataset(challenge, "gaze")
    with time_machine.travel(BEFORE_START, tick=False):
        assert missing_for_opening(challenge, now=BEFORE_START) == []
    late = datetime(2031, 1, 1, tzinfo=UTC)
    assert missing_for_opening(challenge, now=late) == [
        "The deadline (08 Feb 2030 23:59:59 UTC) has passed: nobody could submit."
    ]
    challenge.datasets.get().files.filter(split="val", kind="targets").delete()
    assert missing_for_opening(challenge, now=BEFORE_START) == [
        "Dataset gaze: no file for val targets."
    ]
    with pytest.raises(Exception, match="no file for val targets"):
        open_challenge(challenge, user=None, now=BEFORE_START)
    assert Challenge.objects.get(pk=challenge.pk).is_draft


def test_opening_twice_is_a_no_op(db):
    challenge = make_challenge(slug="draft", opened_at=None)
    make_dataset(challenge, "gaze")
    assert open_challenge(challenge, user=None, now=BEFORE_START) is True
    assert open_challenge(challenge, user=None, now=SETUP) is False
    assert Challenge.objects.get(pk=challenge.pk).opened_at == BEFORE_START
    assert challenge.events.filter(kind=EventKind.OPENED).count() == 1
