"""Registration options: who may take part (policy), joining and accepting the rules
(participation services), and the join page."""

from datetime import timedelta

import pytest
import time_machine
from django.contrib.auth.models import AnonymousUser
from django.test import Client
from django.urls import reverse

from challenge_site import policy
from challenge_site.challenges import participation
from challenge_site.challenges.models import Participant
from tests.factories import VALIDATION, make_challenge, make_user
from tests.pages import page_text

RULES = policy.RULES_ACCEPTANCE
APPROVAL = policy.APPROVAL
JOIN = reverse("challenge_join", args=["demo"])
SUBMIT = reverse("submit", args=["demo"])

OPTIONS = {
    "none": {},
    "rules": {"require_rules_acceptance": True},
    "approval": {"require_approval": True},
    "both": {"require_rules_acceptance": True, "require_approval": True},
}
# What a user still lacks, by the challenge's options and their Participant row.
STANDINGS = ["no row", "joined", "accepted", "approved", "accepted and approved"]
MISSING = {
    "none": {standing: () for standing in STANDINGS},
    "rules": {
        "no row": (RULES,),
        "joined": (RULES,),
        "accepted": (),
        "approved": (RULES,),
        "accepted and approved": (),
    },
    "approval": {
        "no row": (APPROVAL,),
        "joined": (APPROVAL,),
        "accepted": (APPROVAL,),
        "approved": (),
        "accepted and approved": (),
    },
    "both": {
        "no row": (RULES, APPROVAL),
        "joined": (RULES, APPROVAL),
        "accepted": (APPROVAL,),
        "approved": (RULES,),
        "accepted and approved": (),
    },
}


def _set_options(challenge, options: str):
    for field, value in OPTIONS[options].items():
        setattr(challenge, field, value)
    challenge.save()


def _give_standing(challenge, user, standing: str, *, by=None):
    if standing == "no row":
        return None
    return Participant.objects.create(
        challenge=challenge,
        user=user,
        joined=VALIDATION,
        rules_accepted_at=VALIDATION if "accepted" in standing else None,
        approved_at=VALIDATION if "approved" in standing else None,
        approved_by=by if "approved" in standing else None,
    )


@pytest.fixture
def ada(db):
    return make_user("ada")


@pytest.mark.parametrize("options", list(OPTIONS))
@pytest.mark.parametrize("standing", STANDINGS)
def test_what_each_option_asks(challenge, ada, options, standing):
    _set_options(challenge, options)
    _give_standing(challenge, ada, standing)
    missing = MISSING[options][standing]
    assert policy.participation_missing(challenge, user=ada) == missing
    assert policy.may_take_part(challenge, user=ada) is (missing == ())
    assert (policy.participation_block(challenge, user=ada) is None) is (missing == ())


def test_without_options_nobody_needs_anything_not_even_a_login(challenge):
    anonymous = AnonymousUser()
    assert policy.participation_missing(challenge, user=anonymous) == ()
    assert policy.participation_block(challenge, user=anonymous) is None


@pytest.mark.parametrize("options", ["rules", "approval", "both"])
def test_organisers_and_superusers_need_nothing(challenge, organiser, staff, options):
    _set_options(challenge, options)
    for user in (organiser, staff):
        assert policy.may_take_part(challenge, user=user)
        assert policy.participation_block(challenge, user=user) is None
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
    assert policy.participation_block(challenge, user=ada) == reason


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
    assert policy.participation_block(challenge, user=anonymous) == (
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


# --- The join page --------------------------------------------------------------------


def _logged_in(user) -> Client:
    """Logged in at VALIDATION (a session opened today would have expired by then)."""
    client = Client()
    with time_machine.travel(VALIDATION, tick=False):
        client.force_login(user)
    return client


def test_join_page_shows_the_rules_rendered_and_asks_anonymous_visitors_to_log_in(challenge):
    challenge.rules = "No **hand labelling** of the test inputs."
    _set_options(challenge, "rules")
    with time_machine.travel(VALIDATION, tick=False):
        response = Client().get(JOIN)
    assert response.status_code == 200
    page = response.content.decode()
    assert "No <strong>hand labelling</strong> of the test inputs." in page
    assert 'href="/accounts/login/?next=%2Fchallenges%2Fdemo%2Fjoin%2F"' in page
    assert '<form method="post" class="stacked"' not in page
    assert "participants accept the rules below" in page_text(response)


def test_anonymous_post_goes_to_the_login_page(challenge):
    _set_options(challenge, "rules")
    response = Client().post(JOIN, {"accept_rules": "on"})
    assert response.status_code == 302
    assert response["Location"] == f"/accounts/login/?next={JOIN}"
    assert not Participant.objects.exists()


def test_join_page_needs_the_box_ticked_when_the_rules_must_be_accepted(challenge, ada):
    _set_options(challenge, "rules")
    client = _logged_in(ada)
    with time_machine.travel(VALIDATION, tick=False):
        page = client.get(JOIN).content.decode()
        assert 'name="accept_rules"' in page and "I accept the rules" in page
        response = client.post(JOIN, {})
    assert response.status_code == 400
    assert "Tick “I accept the rules”: this challenge asks for it." in page_text(response)
    assert not Participant.objects.exists()


def test_accepting_the_rules_on_the_join_page_records_the_time(challenge, ada):
    _set_options(challenge, "rules")
    client = _logged_in(ada)
    accepted = VALIDATION + timedelta(minutes=7, seconds=5)
    with time_machine.travel(accepted, tick=False):
        response = client.post(JOIN, {"accept_rules": "on"})
    assert response.status_code == 302 and response["Location"] == JOIN
    participant = Participant.objects.get(challenge=challenge, user=ada)
    assert participant.rules_accepted_at == accepted
    assert policy.may_take_part(challenge, user=ada)
    with time_machine.travel(accepted + DAY, tick=False):
        response = client.get(JOIN)
    text = page_text(response)
    assert "Rules accepted on 20 Jan 2030, 12:07:05 UTC" in text
    assert "You may download the data and submit." in text
    assert 'name="accept_rules"' not in response.content.decode()  # nothing more to do


def test_with_approval_the_participant_waits_for_the_organisers(challenge, ada):
    _set_options(challenge, "both")
    client = _logged_in(ada)
    with time_machine.travel(VALIDATION, tick=False):
        response = client.post(JOIN, {"accept_rules": "on"}, follow=True)
    text = page_text(response)
    assert "You joined. The organisers will approve your participation." in text
    assert "Waiting for the organisers' approval." in text
    assert "Your participation in Demo challenge is waiting for the organisers' approval." in text
    participant = Participant.objects.get()
    assert participant.rules_accepted_at == VALIDATION and participant.approved_at is None


def test_joining_a_challenge_without_options_needs_no_box(challenge, ada):
    client = _logged_in(ada)
    with time_machine.travel(VALIDATION, tick=False):
        page = client.get(JOIN)
        assert "Joining is optional" in page_text(page)
        assert 'name="accept_rules"' not in page.content.decode()
        response = client.post(JOIN, {})
    assert response.status_code == 302
    participant = Participant.objects.get()
    assert (participant.user, participant.joined, participant.rules_accepted_at) == (
        ada,
        VALIDATION,
        None,
    )


@pytest.mark.parametrize(
    ("next_", "expected"),
    [
        (SUBMIT, SUBMIT),
        ("https://evil.example/", JOIN),
        ("//evil.example/", JOIN),
        ("\x00", JOIN),
    ],
)
def test_join_brings_the_user_back_to_a_page_of_the_site(challenge, ada, next_, expected):
    _set_options(challenge, "rules")
    with time_machine.travel(VALIDATION, tick=False):
        response = _logged_in(ada).post(f"{JOIN}?next=x", {"accept_rules": "on", "next": next_})
    assert response.status_code == 302 and response["Location"] == expected


def test_join_needs_the_csrf_token(challenge, ada):
    client = Client(enforce_csrf_checks=True)
    client.force_login(ada)
    assert client.post(JOIN, {}).status_code == 403
    assert not Participant.objects.exists()


def test_join_page_of_a_draft_is_404_but_for_its_organisers(db):
    draft = make_challenge(opened_at=None, require_rules_acceptance=True)
    organiser = make_user("organiser", organiser_of=draft)
    assert _logged_in(make_user("ada")).get(JOIN).status_code == 404
    assert _logged_in(make_user("bob")).post(JOIN, {"accept_rules": "on"}).status_code == 404
    response = _logged_in(organiser).get(JOIN)
    assert response.status_code == 200
    assert "You organise this challenge" in page_text(response)


def test_join_page_answers_only_get_and_post(challenge, ada):
    assert _logged_in(ada).put(JOIN).status_code == 405


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
