from datetime import UTC, datetime

import pytest
from django.core.cache import cache

from challenge_site.celery import app
from scoring import _accel
from tests.factories import make_challenge, make_dataset, make_user, make_zip

# tests/stack needs gunicorn, Celery, PostgreSQL and Redis: `make test-stack` runs it on
# its own (with --confcutdir=tests/stack, so this file and this list do not apply there).
collect_ignore = ["stack"]


@pytest.fixture(autouse=True)
def storage_roots(settings, tmp_path):
    """Each test stores dataset files in its own folders: public/ and private/."""
    public, private = tmp_path / "public", tmp_path / "private"
    settings.MEDIA_ROOT = public
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(public), "base_url": "/media/"},
        },
        "private": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(private), "base_url": None},
        },
    }
    return {"default": public, "private": private}


@pytest.fixture(autouse=True)
def celery_in_process(request):
    """Tests that use the database run Celery tasks in-process even when CI sets a Redis
    broker: a task sent there would outlive the test database (and no worker reads it)."""
    uses_db = request.node.get_closest_marker("django_db") is not None or bool(
        {"db", "transactional_db"} & set(request.fixturenames)
    )
    if not uses_db:
        yield
        return
    saved = app.conf.task_always_eager, app.conf.task_eager_propagates
    app.conf.task_always_eager = app.conf.task_eager_propagates = True
    yield
    app.conf.task_always_eager, app.conf.task_eager_propagates = saved


@pytest.fixture
def no_native():
    """The scoring package's one switch for its C extension: ``with no_native():`` runs
    the block on the numpy paths, as if the extension were not built (scoring._accel),
    so that a test can compare both paths."""
    return _accel.disabled


@pytest.fixture(autouse=True)
def fresh_cache():
    """Cached plots and pages never leak from one test into the next."""
    cache.clear()


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def challenge(db):
    """Opens 2030-01-10, test phase from 2030-02-01, deadline 2030-02-08 23:59:59 UTC."""
    return make_challenge()


@pytest.fixture
def in_validation():
    return datetime(2030, 1, 20, 12, 0, tzinfo=UTC)


@pytest.fixture
def staff(db):
    """A superuser: organises every challenge (per-challenge organisers: ``organiser``)."""
    return make_user("org", is_superuser=True)


@pytest.fixture
def organiser(challenge):
    """An organiser of ``challenge`` alone (staff status, no other rights)."""
    return make_user("organiser", organiser_of=challenge)


@pytest.fixture
def gaze(challenge):
    """Regression dataset, natural logarithms: 6 training, 4 validation, 5 test rows."""
    return make_dataset(challenge, "gaze", task="regression")


@pytest.fixture
def submit_zip(django_capture_on_commit_callbacks):
    """A zip of ``files`` through services.submit, scored by the pipeline on commit as
    in production (the dataset inferred from the file names unless named); the form's
    fields as in tests.submissions.helpers.form_data unless given."""
    from challenge_site.submissions import services
    from tests.submissions.helpers import form_data

    def run(user, challenge, files, *, now, dataset_name=None, **fields):
        values = form_data(challenge, make_zip(files), **fields)
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
