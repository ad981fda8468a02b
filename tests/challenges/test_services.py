from datetime import timedelta

import time_machine

from challenge_site.challenges.models import Challenge, ChallengeEvent
from challenge_site.challenges.services import (
    publish_results,
    save_challenge,
    withdraw_results,
)
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


def test_a_copy_loaded_before_a_publication_saves_without_withdrawing_it(db):
    """The admin's form and an import hold a copy while they work: saving it keeps the
    publication made meanwhile (and its record), and still saves what they changed."""
    challenge = make_challenge(slug="a")
    stale = Challenge.objects.get(pk=challenge.pk)
    assert publish_results(challenge=challenge, user=None, now=DEADLINE + SECOND) is True
    stale.title = "Renamed"
    save_challenge(challenge=stale)
    fresh = Challenge.objects.get(pk=challenge.pk)
    assert (fresh.title, fresh.results_published) == ("Renamed", True)
    assert list(ChallengeEvent.objects.values_list("kind", flat=True)) == ["published"]


def test_a_new_challenge_is_saved_whole(db):
    model = make_challenge(slug="model")
    challenge = Challenge(
        slug="new",
        title="New",
        start=model.start,
        test_start=model.test_start,
        deadline=model.deadline,
        results_published=True,
    )
    save_challenge(challenge=challenge)
    assert Challenge.objects.filter(slug="new", title="New", results_published=True).exists()
