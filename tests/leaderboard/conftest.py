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
def staff(db):
    return make_user("org", is_staff=True)


@pytest.fixture
def catalysis(challenge):
    """Classification, base-10 logarithms as in 2004: 6 training, 4 validation, 5 test rows."""
    return make_dataset(challenge, "catalysis", task="classification", seed=3, log_base=10.0)


@pytest.fixture
def gaze(challenge):
    """Regression, natural logarithms."""
    return make_dataset(challenge, "gaze", task="regression")


@pytest.fixture(autouse=True)
def clock():
    """Pages are requested after the deadline unless a test travels elsewhere."""
    from .helpers import AFTER

    with time_machine.travel(AFTER, tick=False):
        yield


@pytest.fixture
def submit(django_capture_on_commit_callbacks):
    """A zip through the submission service, scored by the pipeline on commit."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    from challenge_site.submissions import services

    from .helpers import make_zip

    def run(user, dataset, files, *, now, method="Method", authors="", description=""):
        upload = SimpleUploadedFile("p.zip", make_zip(files), content_type="application/zip")
        with django_capture_on_commit_callbacks(execute=True):
            submission = services.submit(
                user=user,
                challenge=dataset.challenge,
                dataset_name=dataset.name,
                method=method,
                description=description,
                authors=authors,
                upload=upload,
                now=now,
            )
        submission.refresh_from_db()
        return submission

    return run


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
