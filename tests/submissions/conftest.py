import pytest
from django.contrib.auth.models import User
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from challenge_site.accounts.models import Profile
from challenge_site.submissions import services
from tests.factories import make_dataset

from .helpers import form_data, make_zip, predictions


@pytest.fixture(autouse=True)
def fresh_plot_cache():
    from django.core.cache import cache

    cache.clear()


@pytest.fixture
def participant(db):
    user = User.objects.create_user("ada", "ada@example.org", "a-long-Passphrase-42")
    Profile.objects.create(user=user, display_name="Ada L.")
    return user


@pytest.fixture
def other(db):
    return User.objects.create_user("grace", "grace@example.org", "a-long-Passphrase-42")


@pytest.fixture
def staff(db):
    return User.objects.create_user("org", "org@example.org", "a-long-Passphrase-42", is_staff=True)


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
