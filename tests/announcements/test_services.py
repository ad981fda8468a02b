"""Announcements' services: who receives the e-mail, and e-mailing an announcement:
asked for once, sent in batches by the outbox's task (challenge_site.mailing, tested in
tests/mailing), counted on the announcement."""

import smtplib
from collections import Counter
from datetime import timedelta

import pytest
from django.conf import settings
from django.core.mail.backends.locmem import EmailBackend

from challenge_site.announcements import services
from challenge_site.announcements.models import EmailState
from challenge_site.challenges.models import Participant
from challenge_site.mailing import services as outbox
from challenge_site.mailing import tasks
from challenge_site.mailing.models import Delivery, DeliveryStatus
from challenge_site.submissions.models import Submission
from challenge_site.submissions.services import refresh_baseline
from tests.factories import VALIDATION, make_challenge, make_dataset, make_user
from tests.submissions.helpers import queued_submission

from .helpers import SITE_URL, joined, make_announcement, submitter

# --- Who receives the e-mail ------------------------------------------------------------


def usernames(users):
    return [user.username for user in users]


def test_joined_and_submitters_once_each_without_baselines(challenge, gaze):
    ada = joined(challenge, "ada")
    bob = submitter(challenge, "bob")
    both = submitter(challenge, "both")
    Participant.objects.create(challenge=challenge, user=both)
    queued_submission(submitter(challenge, "twice"), challenge)
    make_user("bystander")
    refresh_baseline(dataset=gaze, now=VALIDATION)
    assert Submission.objects.filter(dataset=gaze, is_baseline=True, user=None).exists()

    recipients = services.recipients(challenge=challenge)
    assert usernames(recipients) == ["ada", "bob", "both", "twice"]
    assert recipients.count() == 4
    assert {ada.pk, bob.pk, both.pk} <= {user.pk for user in recipients}


def test_leaves_out_inactive_users_those_without_address_and_the_unsubscribed(challenge, gaze):
    joined(challenge, "ada")
    inactive = joined(challenge, "inactive")
    inactive.is_active = False
    inactive.save()
    no_address = submitter(challenge, "noaddress")
    no_address.email = ""
    no_address.save()
    services.unsubscribe(user=joined(challenge, "gone"), now=challenge.start)
    services.unsubscribe(user=submitter(challenge, "quiet"), now=challenge.start)

    assert usernames(services.recipients(challenge=challenge)) == ["ada"]


def test_only_this_challenges_participants(challenge, gaze):
    other = make_challenge(slug="other", title="Other challenge")
    make_dataset(other, "gaze")
    joined(challenge, "ours")
    joined(other, "theirs")
    submitter(other, "their_submitter")
    shared = joined(other, "shared")
    Participant.objects.create(challenge=challenge, user=shared)

    assert usernames(services.recipients(challenge=challenge)) == ["ours", "shared"]
    assert usernames(services.recipients(challenge=other)) == [
        "theirs",
        "their_submitter",
        "shared",
    ]


# --- E-mailing an announcement -----------------------------------------------------------


@pytest.fixture
def five(challenge, gaze):
    """Five recipients: three joined, two submitted."""
    return [joined(challenge, name) for name in ("ada", "bob", "cy")] + [
        submitter(challenge, name) for name in ("dee", "eve")
    ]


@pytest.fixture
def queue(monkeypatch):
    """The broker: the (kind, announcement id) pairs queued for a next batch, run by hand."""
    queued = []
    monkeypatch.setattr(outbox, "enqueue", lambda kind, pk: queued.append((kind, pk)))
    return queued


def run(announcement):
    """One run of the outbox's task for the announcement."""
    return tasks.send_batch.delay(services.KIND, announcement.pk)


def ask(announcement, user=None):
    return services.request_email(
        announcement_id=announcement.pk, user=user, site_url=SITE_URL, now=VALIDATION
    )


def addressees(outbox):
    return Counter(address for message in outbox for address in message.to)


def test_one_batch_per_task_run_until_everyone_has_it(
    challenge, five, queue, mailoutbox, django_capture_on_commit_callbacks
):
    announcement = make_announcement(challenge)
    with django_capture_on_commit_callbacks(execute=True):
        ask(announcement)
    assert queue == [("announcement", announcement.pk)] and mailoutbox == []  # on commit
    announcement.refresh_from_db()
    assert (announcement.email_state, announcement.email_recipients) == (EmailState.SENDING, 5)

    counts = []
    while queue:
        assert tasks.send_batch.delay(*queue.pop(0)).get() in (1, 2)
        counts.append(len(mailoutbox))
    assert counts == [2, 4, 5]  # batches of two (the conftest's setting), three runs
    assert addressees(mailoutbox) == Counter(user.email for user in five)
    announcement.refresh_from_db()
    assert announcement.email_state == EmailState.SENT
    assert (announcement.email_sent, announcement.email_failed) == (5, 0)
    assert announcement.emailed_at == VALIDATION
    rows = Delivery.objects.filter(kind="announcement", mailing_id=announcement.pk)
    assert set(rows.values_list("status", flat=True)) == {DeliveryStatus.SENT}
    assert rows.count() == Delivery.objects.count() == 5


def test_the_message(challenge, gaze, queue, mailoutbox, client):
    ada = joined(challenge, "ada")
    announcement = make_announcement(
        challenge, "Test phase\nopens", body="Targets are out.\n\n* one\n* **two**\n"
    )
    ask(announcement)
    run(announcement)
    [message] = mailoutbox
    assert message.to == [ada.email]
    assert message.from_email == settings.DEFAULT_FROM_EMAIL
    assert message.subject == "[Demo challenge] Test phase opens"  # one line
    assert "Targets are out.\n\n* one\n* **two**\n" in message.body  # the Markdown source
    news = f"{SITE_URL}/challenges/demo/news/#announcement-{announcement.pk}"
    assert news in message.body
    unsubscribe_url = f"{SITE_URL}{services.unsubscribe_path(ada)}"
    assert unsubscribe_url in message.body
    assert message.extra_headers["List-Unsubscribe"] == f"<{unsubscribe_url}>"
    assert message.content_subtype == "plain" and not getattr(message, "alternatives", [])
    # Both links work, without logging in.
    assert client.get(news.removeprefix(SITE_URL)).status_code == 200
    assert "Unsubscribe" in client.get(unsubscribe_url.removeprefix(SITE_URL)).content.decode()


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"published_at": None}, "is not published"),
        ({"published_at": VALIDATION + timedelta(hours=1)}, "is not published"),
    ],
)
def test_only_published_announcements_are_emailed(challenge, five, queue, change, reason):
    announcement = make_announcement(challenge, **change)
    with pytest.raises(services.EmailRefused, match=reason):
        ask(announcement)
    announcement.refresh_from_db()
    assert announcement.email_state == EmailState.NOT_SENT and queue == []


def test_announcements_of_a_draft_challenge_are_not_emailed(db, queue):
    draft = make_challenge(slug="draft", opened_at=None)
    with pytest.raises(services.EmailRefused, match="draft challenge"):
        ask(make_announcement(draft))


def test_asking_twice_sends_nothing_more(
    challenge, five, mailoutbox, django_capture_on_commit_callbacks
):
    announcement = make_announcement(challenge)
    with django_capture_on_commit_callbacks(execute=True):
        ask(announcement)
    assert len(mailoutbox) == 5
    with pytest.raises(services.EmailRefused, match="e-mailed only once"):
        ask(announcement)
    assert services.resume_email(announcement_id=announcement.pk) is False
    assert len(mailoutbox) == 5


def test_someone_who_unsubscribes_between_batches_gets_nothing(challenge, five, queue, mailoutbox):
    announcement = make_announcement(challenge)
    ask(announcement)
    run(announcement)  # ada, bob
    services.unsubscribe(user=five[4], now=VALIDATION)
    while queue:
        tasks.send_batch.delay(*queue.pop())
    assert five[4].email not in addressees(mailoutbox)
    assert len(mailoutbox) == 4


def test_other_challenges_participants_are_not_emailed(challenge, five, queue, mailoutbox):
    other = make_challenge(slug="other", title="Other")
    joined(other, "stranger")
    announcement = make_announcement(challenge)
    ask(announcement)
    for _ in range(4):
        run(announcement)
    assert "stranger@example.org" not in addressees(mailoutbox)
    assert len(mailoutbox) == 5


class RefusesBob(EmailBackend):
    def send_messages(self, messages):
        if any(address.startswith("bob@") for message in messages for address in message.to):
            raise smtplib.SMTPRecipientsRefused({"bob@example.org": (550, b"no such user")})
        return super().send_messages(messages)


def test_a_refused_address_is_counted_on_the_announcement(
    challenge, five, queue, mailoutbox, settings
):
    settings.EMAIL_BACKEND = f"{__name__}.RefusesBob"
    announcement = make_announcement(challenge)
    ask(announcement)
    for _ in range(5):
        run(announcement)
    assert sorted(addressees(mailoutbox)) == sorted(u.email for u in five if u.username != "bob")
    refused = Delivery.objects.get(status=DeliveryStatus.FAILED)
    assert (refused.kind, refused.mailing_id) == ("announcement", announcement.pk)
    assert refused.user.username == "bob" and "no such user" in refused.error
    announcement.refresh_from_db()
    assert (announcement.email_sent, announcement.email_failed) == (4, 1)
    assert announcement.email_state == EmailState.SENT


def test_deleting_a_challenge_deletes_its_announcements_log(
    challenge, five, mailoutbox, django_capture_on_commit_callbacks
):
    other = make_challenge(slug="other", title="Other")
    joined(other, "stranger")
    kept = make_announcement(other)
    for announcement in (make_announcement(challenge), kept):
        with django_capture_on_commit_callbacks(execute=True):
            ask(announcement)
    assert Delivery.objects.count() == 6
    challenge.delete()
    assert list(Delivery.objects.values_list("kind", "mailing_id")) == [("announcement", kept.pk)]
