"""Opting in, publishing results, and reading the e-mails the locmem backend collected."""

from collections import Counter

import time_machine

from challenge_site.accounts.services import profile_for
from challenge_site.challenges.services import publish_results
from tests.factories import AFTER

SITE_URL = "https://challenges.example.org"


def opt_in(user, *, scoring: bool = False, results: bool = False):
    profile = profile_for(user)
    profile.email_on_scoring_finished = scoring
    profile.email_on_results_published = results
    profile.save()
    return user


def to(outbox, user) -> list:
    """The messages sent to ``user``."""
    return [message for message in outbox if message.to == [user.email]]


def unsubscribe_path(message) -> str:
    """The path of the message's List-Unsubscribe link (the same link as in its body)."""
    url = message.extra_headers["List-Unsubscribe"].strip("<>")
    assert url.startswith(SITE_URL + "/notifications/unsubscribe/")
    assert url in message.body
    return url.removeprefix(SITE_URL)


def publish(challenge, *, at=AFTER, capture):
    """Publish the challenge's results at ``at``; ``capture`` is pytest-django's
    django_capture_on_commit_callbacks, so the mailing starts as on commit."""
    with time_machine.travel(at, tick=False), capture(execute=True):
        publish_results(challenge=challenge, user=None, now=at, via="test")


def addressees(outbox) -> Counter:
    """How many messages each address received."""
    return Counter(address for message in outbox for address in message.to)
