"""Announcements, participants and submitters for the announcement tests."""

from datetime import timedelta

from challenge_site.announcements.models import Announcement
from challenge_site.challenges.models import Participant
from tests.factories import VALIDATION, make_user
from tests.submissions.helpers import queued_submission

SITE_URL = "http://testserver"


def make_announcement(
    challenge,
    title="Test phase opens",
    *,
    body="The **test phase** opens.",
    published_at=VALIDATION - timedelta(days=1),
    **fields,
) -> Announcement:
    return Announcement.objects.create(
        challenge=challenge, title=title, body=body, published_at=published_at, **fields
    )


def joined(challenge, username: str, **user_fields):
    """A user with a Participant row in ``challenge``."""
    user = make_user(username, **user_fields)
    Participant.objects.create(challenge=challenge, user=user, joined=VALIDATION)
    return user


def submitter(challenge, username: str, **user_fields):
    """A user who submitted to ``challenge``'s dataset "gaze" (a real queued submission)
    without joining it."""
    user = make_user(username, **user_fields)
    queued_submission(user, challenge)
    return user
