from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError

from challenge_site.challenges.models import Challenge
from tests.factories import DEADLINE, START, TEST_START, make_challenge


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("start", "test_start", "deadline"),
    [
        (TEST_START, START, DEADLINE),  # test phase before the opening
        (START, DEADLINE, DEADLINE),  # empty test phase
        (START, DEADLINE + timedelta(days=1), DEADLINE),  # deadline before the test phase
    ],
)
def test_database_refuses_dates_out_of_order(start, test_start, deadline):
    with pytest.raises(IntegrityError):
        make_challenge(start=start, test_start=test_start, deadline=deadline)


@pytest.mark.django_db
def test_full_clean_explains_dates_out_of_order():
    challenge = Challenge(
        slug="x", title="X", start=TEST_START, test_start=START, deadline=DEADLINE
    )
    with pytest.raises(ValidationError, match="start ≤ test start < deadline"):
        challenge.full_clean()


@pytest.mark.django_db
def test_defaults_match_the_rules_of_both_challenges():
    challenge = make_challenge()
    assert challenge.val_daily_limit is None
    assert challenge.test_daily_limit == 5
    assert challenge.test_total_limit is None
    assert challenge.results_published is False
    assert challenge.test_inputs_release == "test_start"
    assert challenge.test_targets_release == "never"
