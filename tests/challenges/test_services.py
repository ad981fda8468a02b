from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from challenge_site.challenges.models import Challenge, Phase
from challenge_site.challenges.services import (
    current_phase,
    next_milestone,
    publish_results,
    timeline,
    withdraw_results,
)
from tests.factories import DEADLINE, START, TEST_START, make_challenge

SECOND = timedelta(seconds=1)


@pytest.mark.parametrize(
    ("now", "phase"),
    [
        (START - SECOND, Phase.UPCOMING),
        (START, Phase.VALIDATION),
        (TEST_START - SECOND, Phase.VALIDATION),
        (TEST_START, Phase.TEST),
        (DEADLINE, Phase.TEST),
        (DEADLINE + SECOND, Phase.POST),
    ],
)
def test_current_phase_follows_the_clock_at_each_boundary(challenge, now, phase):
    assert current_phase(challenge, now=now) == phase


def test_next_milestone_is_the_first_date_ahead(challenge):
    assert next_milestone(challenge, now=START - SECOND).when == START
    assert next_milestone(challenge, now=START).when == TEST_START
    assert next_milestone(challenge, now=TEST_START).when == DEADLINE
    # The deadline itself still belongs to the test phase.
    assert next_milestone(challenge, now=DEADLINE).when == DEADLINE
    assert next_milestone(challenge, now=DEADLINE + SECOND) is None


def test_timeline_marks_passed_dates_consistently_with_the_phase(challenge):
    passed = [m.passed for m in timeline(challenge, now=TEST_START)]
    assert passed == [True, True, False]
    assert [m.when for m in timeline(challenge, now=TEST_START)] == [START, TEST_START, DEADLINE]


def test_publish_and_withdraw_say_whether_anything_changed(db):
    with time_machine.travel(DEADLINE + SECOND, tick=False):
        a = make_challenge(slug="a", results_published=True)
        b = make_challenge(slug="b")
        now = DEADLINE + SECOND
        assert publish_results(challenge=a, user=None, now=now) is False
        assert publish_results(challenge=b, user=None, now=now) is True
        assert set(Challenge.objects.values_list("results_published", flat=True)) == {True}
        assert withdraw_results(challenge=a, user=None, now=now) is True
        assert withdraw_results(challenge=a, user=None, now=now) is False
    assert Challenge.objects.get(slug="a").results_published is False


def test_phase_uses_the_given_instant_not_the_wall_clock(db):
    far_future = make_challenge(
        start=datetime(2999, 1, 1, tzinfo=UTC),
        test_start=datetime(2999, 2, 1, tzinfo=UTC),
        deadline=datetime(2999, 3, 1, tzinfo=UTC),
    )
    assert current_phase(far_future, now=datetime(2999, 2, 15, tzinfo=UTC)) == Phase.TEST
