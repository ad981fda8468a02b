"""Registration options: joining and accepting the rules (participation services), the
reason in words why a user may not take part yet, and where the user stands on the
challenge's page (the participation tag). Who may take part is challenges.policy's: its
truth table (MISSING) is in test_policy.py; the join page is in test_participation_views.py."""

from datetime import timedelta

import pytest
import time_machine
from django.contrib.auth.models import AnonymousUser
from django.test import Client
from django.urls import reverse

from challenge_site.challenges import participation, policy
from challenge_site.challenges.models import Participant
from tests.challenges.test_policy import MISSING, OPTIONS, STANDINGS
from tests.challenges.test_policy import give_standing as _give_standing
from tests.challenges.test_policy import set_options as _set_options
from tests.factories import VALIDATION, make_challenge, make_user
from tests.pages import page_text

JOIN = reverse("challenge_join", args=["demo"])


@pytest.fixture
def ada(db):
    return make_user("ada")


@pytest.mark.parametrize("options", list(OPTIONS))
@pytest.mark.parametrize("standing", STANDINGS)
def test_a_reason_exactly_when_something_is_missing(challenge, ada, options, standing):
    _set_options(challenge, options)
    _give_standing(challenge, ada, standing)
    missing = MISSING[options][standing]
    assert (participation.participation_block(challenge, user=ada) is None) is (missing == ())


def test_without_options_nobody_needs_anything_not_even_a_login(challenge):
    anonymous = AnonymousUser()
    assert policy.participation_missing(challenge, user=anonymous) == ()
    assert participation.participation_block(challenge, user=anonymous) is None


@pytest.mark.parametrize("options", ["rules", "approval", "both"])
def test_organisers_and_superusers_need_nothing(challenge, organiser, staff, options):
    _set_options(challenge, options)
    for user in (organiser, staff):
        assert policy.may_take_part(challenge, user=user)
        assert participation.participation_block(challenge, user=user) is None
    other = make_challenge(slug="other", title="Other", **OPTIONS[options])
    assert not policy.may_take_part(other, user=organiser)  # organisers of *this* one only


@pytest.mark.parametrize(
    ("options", "standing", "reason"),
    [
        ("rules", "no row", "Accept the rules of Demo challenge first."),
        (
            "both",
            "joined",
            "Accept the rules of Demo challenge first; the organisers then approve "
            "your participation.",
        ),
        (
            "approval",
            "no row",
            "Ask to join Demo challenge first: the organisers approve each participant.",
        ),
        (
            "both",
            "accepted",
            "Your participation in Demo challenge is waiting for the organisers' approval.",
        ),
    ],
)
def test_the_reason_in_words(challenge, ada, options, standing, reason):
    _set_options(challenge, options)
    _give_standing(challenge, ada, standing)
    assert participation.participation_block(challenge, user=ada) == reason


@pytest.mark.parametrize(
    ("options", "what"),
    [
        ("rules", "its participants accept its rules"),
        ("approval", "the organisers approve each participant"),
        ("both", "its participants accept its rules and the organisers approve each one"),
    ],
)
def test_anonymous_visitors_are_asked_to_log_in(challenge, options, what):
    _set_options(challenge, options)
    anonymous = AnonymousUser()
    assert participation.participation_block(challenge, user=anonymous) == (
        f"Log in and join Demo challenge first: {what}."
    )
    assert policy.participation_missing(challenge, user=anonymous) == policy.participation_asks(
        challenge
    )


# --- Services -------------------------------------------------------------------------


def test_join_records_the_moment_the_rules_were_accepted(challenge, ada):
    with time_machine.travel(VALIDATION, tick=False):
        participant = participation.join(
            challenge=challenge, user=ada, accept_rules=False, now=VALIDATION
        )
    assert (participant.joined, participant.rules_accepted_at) == (VALIDATION, None)
    later = VALIDATION + timedelta(hours=3)
    participation.join(challenge=challenge, user=ada, accept_rules=True, now=later)
    participation.join(challenge=challenge, user=ada, accept_rules=True, now=later + timedelta(1))
    participant.refresh_from_db()
    # Joined at first, accepted 3 hours later; accepting again keeps the first moment.
    assert (participant.joined, participant.rules_accepted_at) == (VALIDATION, later)
    assert Participant.objects.count() == 1


def test_approve_and_revoke_record_who_and_when_for_their_own_challenges(challenge, organiser, ada):
    other = make_challenge(slug="other", title="Other")
    mine = _give_standing(challenge, ada, "joined")
    theirs = _give_standing(other, ada, "joined")
    rows = Participant.objects.all()
    assert participation.approve(participants=rows, by=organiser, now=VALIDATION) == 1
    mine.refresh_from_db(), theirs.refresh_from_db()
    assert (mine.approved_at, mine.approved_by) == (VALIDATION, organiser)
    assert (theirs.approved_at, theirs.approved_by) == (None, None)
    # Approving again changes nothing: the first approval is the one on record.
    assert participation.approve(participants=rows, by=organiser, now=VALIDATION + 2 * DAY) == 0
    assert participation.revoke_approval(participants=rows, by=organiser) == 1
    mine.refresh_from_db()
    assert (mine.approved_at, mine.approved_by) == (None, None)


DAY = timedelta(days=1)


def _logged_in(user) -> Client:
    """Logged in at VALIDATION (a session opened today would have expired by then)."""
    client = Client()
    with time_machine.travel(VALIDATION, tick=False):
        client.force_login(user)
    return client


# --- The status box on the challenge's page -------------------------------------------

DETAIL = reverse("challenge_detail", args=["demo"])


@pytest.mark.parametrize(
    ("options", "standing", "client_of", "shown"),
    [
        ("none", "no row", "anonymous", "Joining is optional: join to receive"),
        (
            "both",
            "no row",
            "ada",
            "To download the data and submit, accept the rules; the organisers then approve "
            "your participation. Join the challenge",
        ),
        (
            "approval",
            "no row",
            "ada",
            "To download the data and submit, ask to join: the organisers approve each "
            "participant. Join the challenge",
        ),
        (
            "both",
            "accepted",
            "ada",
            "accepted the rules. Your participation in Demo challenge is waiting for the "
            "organisers' approval.",
        ),
        ("rules", "accepted", "ada", "accepted the rules. You may download the data and submit."),
        (
            "both",
            "no row",
            "organiser",
            "You organise this challenge: you may download and submit without joining; "
            "participants must accept the rules and be approved.",
        ),
    ],
)
def test_challenge_page_shows_where_the_user_stands(
    challenge, ada, organiser, options, standing, client_of, shown
):
    _set_options(challenge, options)
    _give_standing(challenge, ada, standing)
    client = Client() if client_of == "anonymous" else _logged_in(locals()[client_of])
    with time_machine.travel(VALIDATION, tick=False):
        response = client.get(DETAIL)
    assert response.status_code == 200
    text = page_text(response)
    assert "Taking part" in text
    assert shown in text
    assert f'href="{JOIN}"' in response.content.decode()
