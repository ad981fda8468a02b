"""The logs that keep each notification e-mail to one message: what the database
refuses, how the rows read."""

import pytest
from django.db import IntegrityError, transaction

from challenge_site.challenges.models import ChallengeEvent, EventKind
from challenge_site.mailing.models import DeliveryStatus
from challenge_site.notifications.models import MailingState, ResultsMailing, ScoringNotice
from challenge_site.submissions.models import Status
from tests.factories import AFTER, VALIDATION, make_challenge
from tests.submissions.helpers import queued_submission


@pytest.fixture
def entry(gaze, bob):
    return queued_submission(bob, gaze.challenge)


def notice(submission, user, *, status=Status.SCORED, **fields):
    return ScoringNotice.objects.create(
        submission=submission,
        user=user,
        status=status,
        email=user.email,
        claimed_at=VALIDATION,
        **fields,
    )


# --- ScoringNotice -------------------------------------------------------------------------


def test_one_notice_per_submission_recipient_and_outcome(entry, ada, bob):
    notice(entry, bob)
    with pytest.raises(IntegrityError), transaction.atomic():
        notice(entry, bob)
    notice(entry, bob, status=Status.FAILED)  # another outcome of the same entry
    notice(entry, ada)  # another recipient (a member of its team)
    assert ScoringNotice.objects.count() == 3


def test_a_notice_is_claimed_until_its_message_is_handed_over(entry, bob):
    row = notice(entry, bob)
    assert (row.delivery, row.sent_at, row.error) == (DeliveryStatus.CLAIMED, None, "")
    rows = ScoringNotice.objects.filter(pk=row.pk)
    with pytest.raises(IntegrityError, match="scoringnotice_delivery_valid"), transaction.atomic():
        rows.update(delivery="lost")
    rows.update(delivery=DeliveryStatus.SENT, sent_at=AFTER)
    assert ScoringNotice.objects.get().delivery == DeliveryStatus.SENT


def test_a_notice_names_its_submission_outcome_and_address(entry, bob):
    assert str(notice(entry, bob, status=Status.INVALID)) == (
        f"#{entry.pk} invalid → bob@example.org"
    )


def test_notices_go_with_their_submission_or_their_user(entry, ada, bob):
    notice(entry, ada)
    notice(entry, bob)
    ada.delete()
    assert list(ScoringNotice.objects.values_list("user__username", flat=True)) == ["bob"]
    entry.delete()
    assert not ScoringNotice.objects.exists()


# --- ResultsMailing ------------------------------------------------------------------------


def test_a_new_mailing_is_being_sent_and_counts_nothing(challenge):
    mailing = ResultsMailing.objects.create(challenge=challenge, requested_at=AFTER)
    mailing.refresh_from_db()
    assert mailing.state == MailingState.SENDING
    assert (mailing.recipients, mailing.sent, mailing.failed) == (0, 0, 0)
    assert (mailing.last_batch_at, mailing.finished_at, mailing.event) == (None, None, None)
    assert str(mailing) == "Results of Demo challenge"


def test_one_mailing_per_challenge(challenge):
    ResultsMailing.objects.create(challenge=challenge)
    with pytest.raises(IntegrityError), transaction.atomic():
        ResultsMailing.objects.create(challenge=challenge)
    other = ResultsMailing.objects.create(challenge=make_challenge(slug="other", title="Other"))
    assert ResultsMailing.objects.count() == 2 and str(other) == "Results of Other"


@pytest.mark.parametrize(
    ("fields", "constraint"),
    [
        # Any state but sending and sent breaks both rules; the database names either.
        ({"state": "paused"}, "resultsmailing_(state_valid|finished_when_sent)"),
        ({"state": MailingState.SENT}, "resultsmailing_finished_when_sent"),
        ({"finished_at": AFTER}, "resultsmailing_finished_when_sent"),
    ],
)
def test_finished_exactly_when_sent(challenge, fields, constraint):
    rows = ResultsMailing.objects.filter(pk=ResultsMailing.objects.create(challenge=challenge).pk)
    with pytest.raises(IntegrityError, match=constraint), transaction.atomic():
        rows.update(**fields)
    rows.update(state=MailingState.SENT, finished_at=AFTER)
    assert rows.get().state == MailingState.SENT


def test_the_mailing_outlives_the_event_that_started_it_not_its_challenge(challenge):
    # Not a publication: that would start the challenge's mailing itself (results.py).
    event = ChallengeEvent.objects.create(challenge=challenge, kind=EventKind.OPENED, at=AFTER)
    mailing = ResultsMailing.objects.create(challenge=challenge, event=event)
    event.delete()
    mailing.refresh_from_db()
    assert mailing.event is None
    challenge.delete()
    assert not ResultsMailing.objects.exists()
