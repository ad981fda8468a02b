import pytest
import time_machine

from tests.factories import make_dataset, make_user


@pytest.fixture
def ada(db):
    return make_user("ada", display_name="Ada L.")


@pytest.fixture
def grace(db):
    return make_user("grace")


@pytest.fixture
def alan(db):
    return make_user("alan")


@pytest.fixture
def catalysis(challenge):
    """Classification, base-10 logarithms as in 2004: 6 training, 4 validation, 5 test rows."""
    return make_dataset(challenge, "catalysis", task="classification", seed=3, log_base=10.0)


@pytest.fixture(autouse=True)
def clock():
    """Pages are requested after the deadline unless a test travels elsewhere."""
    from tests.factories import AFTER

    with time_machine.travel(AFTER, tick=False):
        yield


@pytest.fixture
def score_baseline(django_capture_on_commit_callbacks):
    """The dataset's baseline, created and scored by the submission service."""
    from challenge_site.submissions.services import refresh_baseline

    def run(dataset, *, now):
        with django_capture_on_commit_callbacks(execute=True):
            baseline = refresh_baseline(dataset=dataset, now=now)
        baseline.refresh_from_db()
        return baseline

    return run
