import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from challenge_site.submissions import services
from tests.factories import make_dataset, make_user

from .helpers import form_data, make_zip, predictions


@pytest.fixture
def participant(db):
    return make_user("ada", display_name="Ada L.")


@pytest.fixture
def other(db):
    return make_user("grace")


@pytest.fixture
def staff(db):
    return make_user("org", is_staff=True)


@pytest.fixture
def gaze(challenge):
    """Regression dataset: 6 training, 4 validation, 5 test rows."""
    return make_dataset(challenge, "gaze", task="regression")


@pytest.fixture
def catalysis(challenge):
    """Classification dataset: 6 training, 4 validation, 5 test rows."""
    return make_dataset(challenge, "catalysis", task="classification", seed=3)


@pytest.fixture
def api_client(participant):
    client = APIClient()
    token = Token.objects.create(user=participant)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


@pytest.fixture
def submit_zip(django_capture_on_commit_callbacks):
    """services.submit with the scoring task run on commit, as in production."""

    def run(user, challenge, files, *, now, dataset_name=None, **fields):
        values = form_data(challenge, make_zip(files))
        values.update(fields)
        with django_capture_on_commit_callbacks(execute=True):
            submission = services.submit(
                user=user,
                challenge=challenge,
                dataset_name=dataset_name,
                method=values["method"],
                description=values["description"],
                authors=values["authors"],
                upload=values["file"],
                now=now,
            )
        submission.refresh_from_db()
        return submission

    return run


@pytest.fixture
def val_files():
    return predictions("gaze", ("val",))
