import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.factories import make_dataset, make_user

from .helpers import PROBE_ROWS, predictions


@pytest.fixture
def participant(db):
    return make_user("ada", display_name="Ada L.")


@pytest.fixture
def other(db):
    return make_user("grace")


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
def val_files():
    return predictions("gaze", ("val",))


@pytest.fixture
def iris(challenge):
    """Classification, 40 validation examples (helpers.PROBE_ROWS)."""
    return make_dataset(challenge, "iris", task="classification", sizes=(6, PROBE_ROWS, 5), seed=4)
