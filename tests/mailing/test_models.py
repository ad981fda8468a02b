"""The outbox's log: one row per person and mailing, whatever asks twice."""

from datetime import UTC, datetime

import pytest
from django.db import IntegrityError, transaction

from challenge_site.mailing.models import Delivery
from tests.factories import make_user

NOW = datetime(2030, 1, 20, 12, 0, tzinfo=UTC)


def claim(user, *, kind="club", mailing_id=1, **fields):
    return Delivery.objects.create(
        kind=kind, mailing_id=mailing_id, user=user, email=user.email, claimed_at=NOW, **fields
    )


def test_one_row_per_person_and_mailing(db):
    ada = make_user("ada")
    claim(ada)
    with pytest.raises(IntegrityError), transaction.atomic():
        claim(ada)
    claim(ada, mailing_id=2)  # another mailing of the kind
    claim(ada, kind="other")  # the same id, another kind's mailing
    assert Delivery.objects.filter(user=ada).count() == 3


def test_an_unknown_status_is_refused(db):
    with pytest.raises(IntegrityError), transaction.atomic():
        claim(make_user("ada"), status="lost")


def test_a_row_names_its_mailing_and_address(db):
    assert str(claim(make_user("ada"), mailing_id=7)) == "club 7 → ada@example.org"
