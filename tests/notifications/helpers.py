"""Opting in, and reading the e-mails the locmem backend collected."""

from challenge_site.accounts.services import profile_for

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
