import pytest

from tests.factories import make_user
from tests.submissions.helpers import queued_submission

from .helpers import SITE_URL, opt_in


@pytest.fixture(autouse=True)
def site_url(settings):
    settings.SITE_URL = SITE_URL


@pytest.fixture
def ada(db):
    """A participant who asked for both kinds of e-mail."""
    return opt_in(make_user("ada"), scoring=True, results=True)


@pytest.fixture
def bob(db):
    """A participant who asked for none (the default)."""
    return make_user("bob")


@pytest.fixture
def five(challenge, gaze):
    """Five participants who submitted and asked for the results e-mail."""
    users = [opt_in(make_user(name), results=True) for name in ("ada", "bob", "cy", "dee", "eve")]
    for user in users:
        queued_submission(user, challenge)
    return users
