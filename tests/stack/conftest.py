"""The stack suite: gunicorn, a Celery worker and beat on this machine's PostgreSQL and Redis.

`make test-stack` runs it as ``pytest -p no:django --confcutdir=tests/stack tests/stack``:
without pytest-django (this process talks to the stack's own database through the ORM,
not to a test database) and without tests/conftest.py (whose ``collect_ignore`` keeps
this folder out of the plain `make test` run).

One stack serves the whole session; the challenge "stack" (three datasets, validation
phase) is imported with manage.py import_challenge before the first test. Process logs
are copied to test-output/stack-logs/ at the end.
"""

import contextlib
import os
import sys
import time

import pytest
import redis

from .harness import REPO, Stack, redis_client, wait_until
from .mailbox import Mailbox
from .s3 import SeaweedS3

if "pytest_django.plugin" in sys.modules:
    raise pytest.UsageError(
        "tests/stack runs without pytest-django: python -m pytest -p no:django "
        "--confcutdir=tests/stack tests/stack (or make test-stack)"
    )

MAILBOX = Mailbox()  # every e-mail the stack sends (announcements) lands here
STACK = Stack(scoring_timeout=20, sweep_interval=2, extra_env=MAILBOX.env)
# Playwright's sync API keeps an event loop in this thread, which Django's ORM refuses
# by default; the ORM calls here are plain blocking queries between browser steps.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
STACK.setup_django()

# Imported once Django is set up.
from django.contrib.auth.models import Permission, User  # noqa: E402
from django.db import Error as DatabaseError  # noqa: E402
from django.db import connections  # noqa: E402
from rest_framework.authtoken.models import Token  # noqa: E402

from challenge_site.accounts.models import Profile  # noqa: E402
from challenge_site.submissions.models import FINAL, Submission  # noqa: E402

from .client import Client  # noqa: E402
from .data import DatasetSpec, in_validation, write_challenge  # noqa: E402

PASSWORD = "a-long-Passphrase-42"
DATASETS = {
    "sines": DatasetSpec("regression", (200, 100, 100), dim=2, seed=1),
    "coins": DatasetSpec("classification", (200, 100, 100), dim=2, seed=2),
    # 20,000 validation rows: a large valid file to score (worker kill, bench).
    "big": DatasetSpec("regression", (500, 20_000, 100), dim=1, seed=3),
}
SCREENSHOTS = REPO / "test-output" / "screenshots"


def pytest_unconfigure(config):
    """STACK claimed a Redis database when this module loaded; a run that never started it
    (only tests with stacks of their own, such as test_s3.py) gives the claim back here."""
    client = redis_client(STACK.redis_db)
    with contextlib.suppress(redis.RedisError):  # Redis down: nothing to give back
        if client.get("stack:claimed") == str(os.getpid()).encode():
            client.delete("stack:claimed")


def pytest_collection_modifyitems(items):
    for item in items:
        item.add_marker(pytest.mark.stack)


@pytest.fixture(scope="session")
def stack():
    STACK.start()
    try:
        yield STACK
    finally:
        connections.close_all()
        STACK.stop(keep_logs_in=REPO / "test-output" / "stack-logs")


@pytest.fixture(scope="module")
def seaweed(tmp_path_factory):
    """A SeaweedFS S3 server with the site's two buckets (tests/stack/s3.py); a stack uses
    it with ``Stack(extra_env=seaweed.storage_env())``."""
    s3 = SeaweedS3(tmp_path_factory.mktemp("seaweed")).start()
    try:
        yield s3
    finally:
        s3.stop()


def orm(query, *, attempts: int = 50):
    """Run ``query()``; after a database restart, reconnect and try again (bounded)."""
    for attempt in range(attempts):
        try:
            return query()
        except DatabaseError:
            connections.close_all()
            if attempt == attempts - 1:
                raise
            time.sleep(0.2)
    raise AssertionError("unreachable")


def statuses(ids) -> dict[int, str]:
    return orm(lambda: dict(Submission.objects.filter(pk__in=ids).values_list("pk", "status")))


def wait_final(stack, ids, *, timeout: float = 120) -> dict[int, str]:
    """Wait until every submission in ``ids`` is scored, invalid or failed."""
    ids = list(ids)

    def done():
        stack.check_alive()
        found = statuses(ids)
        return found if len(found) == len(ids) and set(found.values()) <= set(FINAL) else None

    return wait_until(done, timeout=timeout, interval=0.2, what=f"submissions {ids} to finish")


def import_challenge(stack, spec) -> dict:
    folder = stack.root / "import" / spec.slug
    files = write_challenge(spec, folder)
    stack.manage("import_challenge", str(folder))
    baselines = orm(
        lambda: list(
            Submission.objects.filter(
                is_baseline=True, dataset__challenge__slug=spec.slug
            ).values_list("pk", flat=True)
        )
    )
    assert len(baselines) == len(spec.datasets)
    assert set(wait_final(stack, baselines).values()) == {"scored"}
    return files


@pytest.fixture(scope="session")
def challenge(stack):
    """The "stack" challenge, in its validation phase: {"slug", "datasets", "files"}."""
    spec = in_validation("stack", "Stack test challenge", DATASETS)
    return {"slug": spec.slug, "datasets": DATASETS, "files": import_challenge(stack, spec)}


def make_user(username: str, *, staff: bool = False, founder: bool = False) -> tuple[User, str]:
    """A user with a token; ``staff``: a superuser; ``founder``: staff allowed only to start
    challenges (each one they start they organise, and nothing else)."""

    def create():
        if staff:
            user = User.objects.create_superuser(username, f"{username}@example.org", PASSWORD)
        else:
            user = User.objects.create_user(
                username, f"{username}@example.org", PASSWORD, is_staff=founder
            )
            if founder:
                user.user_permissions.add(Permission.objects.get(codename="add_challenge"))
        Profile.objects.create(user=user, display_name=username.capitalize())
        return user, Token.objects.create(user=user).key

    return orm(create)


@pytest.fixture(scope="session")
def participant(stack):
    user, token = make_user("ada")
    return {"user": user, "username": "ada", "token": token}


@pytest.fixture
def api(stack, participant):
    return Client(stack.base_url, token=participant["token"])


@pytest.fixture(scope="session")
def screenshots():
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS
