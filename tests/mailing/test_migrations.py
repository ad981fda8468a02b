"""Upgrading a site whose announcements and results e-mails logged their recipients in
tables of their own: the rows move into the outbox, and nobody claimed is claimed again."""

from datetime import UTC, datetime

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from challenge_site.announcements import services as announcements
from challenge_site.announcements.models import Announcement
from challenge_site.challenges.models import Participant
from challenge_site.mailing.models import Delivery
from challenge_site.notifications import results
from challenge_site.notifications.models import ResultsMailing
from tests.factories import make_challenge, make_user

BEFORE = [("announcements", "0001_initial"), ("notifications", "0001_initial")]
AFTER = [
    ("announcements", "0003_delete_delivery"),
    ("notifications", "0003_delete_resultsdelivery"),
]
CLAIMED = datetime(2030, 1, 20, 12, 0, tzinfo=UTC)
SENT = datetime(2030, 1, 20, 12, 1, tzinfo=UTC)
FIELDS = ("user__username", "email", "status", "claimed_at", "sent_at", "error")


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def old_rows(model, owner: str):
    return sorted(model.objects.values_list(f"{owner}_id", *FIELDS))


def outbox_rows(kind: str):
    return sorted(Delivery.objects.filter(kind=kind).values_list("mailing_id", *FIELDS))


# Schema changes on SQLite cannot run inside the test's transaction.
@pytest.mark.django_db(transaction=True)
def test_the_old_rows_move_into_the_outbox_and_back():
    old = migrate(BEFORE)
    ada, bob, cy = (make_user(name) for name in ("ada", "bob", "cy"))
    challenge = make_challenge()
    for user in (ada, bob, cy):
        Participant.objects.create(challenge=challenge, user=user, joined=CLAIMED)
    news = [Announcement.objects.create(challenge=challenge, title=t, body="x") for t in "AB"]
    mailing = ResultsMailing.objects.create(challenge=challenge)
    OldDelivery = old.get_model("announcements", "Delivery")
    OldResults = old.get_model("notifications", "ResultsDelivery")
    OldDelivery.objects.create(
        announcement_id=news[0].pk, user_id=ada.pk, email="ada@example.org",
        status="sent", claimed_at=CLAIMED, sent_at=SENT,
    )  # fmt: skip
    OldDelivery.objects.create(
        announcement_id=news[0].pk, user_id=bob.pk, email="bob@example.org",
        status="failed", claimed_at=CLAIMED, error="550 no such user",
    )  # fmt: skip
    OldDelivery.objects.create(
        announcement_id=news[1].pk, user_id=ada.pk, email="ada@old.example.org",
        status="claimed", claimed_at=CLAIMED,
    )  # fmt: skip
    OldResults.objects.create(
        mailing_id=mailing.pk, user_id=cy.pk, email="cy@example.org",
        status="sent", claimed_at=CLAIMED, sent_at=SENT,
    )  # fmt: skip
    expected_news = old_rows(OldDelivery, "announcement")
    expected_results = old_rows(OldResults, "mailing")
    assert len(expected_news) == 3 and len(expected_results) == 1

    migrate(AFTER)
    assert outbox_rows(announcements.KIND) == expected_news
    assert outbox_rows(results.KIND) == expected_results
    assert Delivery.objects.count() == 4
    # The outbox takes them as claimed: nobody is sent the same e-mail again.
    assert list(announcements.pending_recipients(news[0])) == [cy]
    assert list(announcements.pending_recipients(news[1])) == [bob, cy]

    old = migrate(BEFORE)  # and back, for a downgrade
    assert old_rows(old.get_model("announcements", "Delivery"), "announcement") == expected_news
    assert old_rows(old.get_model("notifications", "ResultsDelivery"), "mailing") == (
        expected_results
    )
    assert not Delivery.objects.exists()
    migrate(AFTER)
    assert outbox_rows(announcements.KIND) == expected_news
    assert outbox_rows(results.KIND) == expected_results


@pytest.mark.django_db(transaction=True)
def test_a_site_without_deliveries_upgrades_to_an_empty_outbox():
    migrate(BEFORE)
    migrate(AFTER)
    assert not Delivery.objects.exists()
