"""challenges.clock: phases and milestones as functions of an explicit ``now``."""

from datetime import UTC, datetime, timedelta

import pytest

from challenge_site.challenges.clock import current_phase, next_milestone, timeline
from challenge_site.challenges.models import Phase
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


def test_phase_uses_the_given_instant_not_the_wall_clock(db):
    far_future = make_challenge(
        start=datetime(2999, 1, 1, tzinfo=UTC),
        test_start=datetime(2999, 2, 1, tzinfo=UTC),
        deadline=datetime(2999, 3, 1, tzinfo=UTC),
    )
    assert current_phase(far_future, now=datetime(2999, 2, 15, tzinfo=UTC)) == Phase.TEST
