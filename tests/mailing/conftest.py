import pytest
from django.contrib.auth.models import Group
from django.db.models.signals import post_delete

from challenge_site.mailing import services as outbox
from tests.factories import make_user

from .helpers import CLUB, KIND, LEDGERS


@pytest.fixture(autouse=True)
def club_kind(monkeypatch):
    """The tests' kind, registered for one test (the registry as it was afterwards)."""
    monkeypatch.setattr(outbox, "_kinds", dict(outbox._kinds))
    outbox.register(CLUB)
    yield CLUB
    post_delete.disconnect(sender=Group, dispatch_uid=f"mailing.forget.{KIND}")
    LEDGERS.clear()


@pytest.fixture(autouse=True)
def batches_of_two(settings):
    settings.ANNOUNCEMENT_EMAIL_BATCH_SIZE = 2


@pytest.fixture
def club(db):
    return Group.objects.create(name="Reading club")


@pytest.fixture
def five(club):
    """Five members of the club, in the order they are claimed."""
    users = [make_user(name) for name in ("ada", "bob", "cy", "dee", "eve")]
    club.user_set.add(*users)
    return users


@pytest.fixture
def queue(monkeypatch):
    """The broker: the (kind, mailing id) pairs queued for a next batch, run by hand."""
    queued = []
    monkeypatch.setattr(outbox, "enqueue", lambda kind, pk: queued.append((kind, pk)))
    return queued
