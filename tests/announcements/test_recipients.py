"""Who receives a challenge's announcements by e-mail."""

from challenge_site.announcements import services
from challenge_site.challenges.models import Participant
from challenge_site.submissions.models import Submission
from challenge_site.submissions.services import refresh_baseline
from tests.factories import VALIDATION, make_challenge, make_dataset, make_user
from tests.submissions.helpers import queued_submission

from .helpers import joined, submitter


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
