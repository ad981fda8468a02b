from datetime import timedelta

import time_machine

from challenge_site.challenges.models import Challenge
from challenge_site.challenges.services import publish_results, withdraw_results
from tests.factories import DEADLINE, make_challenge

SECOND = timedelta(seconds=1)


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
