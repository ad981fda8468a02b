"""ParticipantAdmin: organisers approve (and stop approving) the participants of their own
challenges; those of other challenges are invisible to them."""

from datetime import timedelta

import pytest
import time_machine
from django.test import Client
from django.urls import reverse

from challenge_site.accounts.models import Profile
from challenge_site.challenges import policy
from challenge_site.challenges.models import Participant
from tests.factories import VALIDATION, make_challenge, make_user

CHANGELIST = reverse("admin:challenges_participant_changelist")
LATER = VALIDATION + timedelta(hours=5)


@pytest.fixture
def other(db):
    return make_challenge(slug="other", title="Other challenge", require_approval=True)


@pytest.fixture
def rows(challenge, other):
    """ada and bob joined ``challenge`` (ada accepted its rules); cyd joined ``other``."""
    challenge.require_rules_acceptance = challenge.require_approval = True
    challenge.save()
    ada, bob, cyd = make_user("ada"), make_user("bob"), make_user("cyd")
    return {
        "ada": Participant.objects.create(
            challenge=challenge, user=ada, joined=VALIDATION, rules_accepted_at=VALIDATION
        ),
        "bob": Participant.objects.create(challenge=challenge, user=bob, joined=VALIDATION),
        "cyd": Participant.objects.create(challenge=other, user=cyd, joined=VALIDATION),
    }


def _admin(user) -> Client:
    client = Client()
    with time_machine.travel(VALIDATION, tick=False):
        client.force_login(user)
    return client


def _listed(response) -> set[str]:
    return {str(p.user) for p in response.context["cl"].result_list}


def _get(client, url=CHANGELIST, **params):
    with time_machine.travel(VALIDATION, tick=False):
        return client.get(url, params)


def _action(client, action, *participants):
    selected = [p.pk for p in participants]
    with time_machine.travel(LATER, tick=False):
        return client.post(
            CHANGELIST, {"action": action, "_selected_action": selected}, follow=True
        )


def test_organisers_see_only_their_challenges_participants(organiser, staff, rows):
    response = _get(_admin(organiser))
    assert response.status_code == 200
    assert _listed(response) == {"ada", "bob"}
    page = response.content.decode()
    assert "ada@example.org" in page and "Other challenge" not in page
    assert _listed(_get(_admin(staff))) == {"ada", "bob", "cyd"}
    # Another challenge's row is not reachable by its URL either.
    url = reverse("admin:challenges_participant_change", args=[rows["cyd"].pk])
    response = _get(_admin(organiser), url)
    assert response.status_code == 302 and response["Location"] == reverse("admin:index")


def test_organiser_of_nothing_and_participants_cannot_open_it(rows):
    assert _get(_admin(make_user("staffer", is_staff=True))).status_code == 403
    assert _get(_admin(rows["ada"].user)).status_code == 302  # to the admin's log-in


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"approved": "no"}, {"ada", "bob"}),
        ({"rules_accepted": "yes"}, {"ada"}),
        ({"rules_accepted": "no"}, {"bob"}),
        ({"q": "bob@example"}, {"bob"}),
        ({"q": "ad"}, {"ada"}),
    ],
)
def test_filters_and_search(organiser, rows, params, expected):
    assert _listed(_get(_admin(organiser), **params)) == expected


def test_challenge_filter_offers_only_their_challenges(organiser, rows):
    response = _get(_admin(organiser))
    filters = {spec.title: spec for spec in response.context["cl"].filter_specs}
    assert [title for _, title in filters["challenge"].lookup_choices] == ["Demo challenge"]


def test_approve_selected_records_who_and_when(organiser, rows):
    response = _action(_admin(organiser), "approve_selected", rows["ada"], rows["bob"])
    assert "Approved 2 participants." in response.content.decode()
    for name in ("ada", "bob"):
        rows[name].refresh_from_db()
        assert (rows[name].approved_at, rows[name].approved_by) == (LATER, organiser)
    approved = _listed(_get(_admin(organiser), approved="yes"))
    assert approved == {"ada", "bob"}


def test_approving_again_keeps_the_first_approval(organiser, staff, rows):
    _action(_admin(organiser), "approve_selected", rows["ada"])
    with time_machine.travel(LATER + timedelta(days=1), tick=False):
        client = Client()
        client.force_login(staff)
        response = client.post(
            CHANGELIST,
            {"action": "approve_selected", "_selected_action": [rows["ada"].pk, rows["bob"].pk]},
            follow=True,
        )
    assert "Approved 1 participant. 1 already approved." in response.content.decode()
    rows["ada"].refresh_from_db(), rows["bob"].refresh_from_db()
    assert (rows["ada"].approved_at, rows["ada"].approved_by) == (LATER, organiser)
    assert (rows["bob"].approved_at, rows["bob"].approved_by) == (
        LATER + timedelta(days=1),
        staff,
    )


def test_organisers_cannot_approve_another_challenges_participant(organiser, rows):
    _action(_admin(organiser), "approve_selected", rows["cyd"], rows["bob"])
    rows["cyd"].refresh_from_db(), rows["bob"].refresh_from_db()
    assert rows["cyd"].approved_at is None and rows["cyd"].approved_by is None
    assert rows["bob"].approved_by == organiser


def test_revoke_approval(organiser, rows):
    client = _admin(organiser)
    _action(client, "approve_selected", rows["ada"], rows["bob"])
    response = _action(client, "revoke_approval", rows["bob"])
    assert "Revoked the approval of 1 participant." in response.content.decode()
    rows["ada"].refresh_from_db(), rows["bob"].refresh_from_db()
    assert rows["ada"].approved_at == LATER
    assert (rows["bob"].approved_at, rows["bob"].approved_by) == (None, None)
    assert rows["bob"].joined == VALIDATION  # the row stays, to be approved again


def test_approval_lets_the_participant_download(organiser, rows):
    """The admin's approval is what the policy asks for (ada accepted the rules)."""
    challenge = rows["ada"].challenge
    ada = rows["ada"].user
    assert not policy.may_take_part(challenge, user=ada)
    _action(_admin(organiser), "approve_selected", rows["ada"])
    assert policy.may_take_part(challenge, user=ada)
    _action(_admin(organiser), "revoke_approval", rows["ada"])
    assert not policy.may_take_part(challenge, user=ada)


def test_participants_are_not_added_in_the_admin(organiser, rows):
    url = reverse("admin:challenges_participant_add")
    assert _get(_admin(organiser), url).status_code == 403
    change = reverse("admin:challenges_participant_change", args=[rows["ada"].pk])
    page = _get(_admin(organiser), change)
    assert page.status_code == 200
    assert 'name="rules_accepted_at' not in page.content.decode()  # a record, read only


# --- Issue 30, item 12: who they are, a CSV of them, a refusal's reason, a message -----


def _post(client, action, *participants, **data):
    with time_machine.travel(LATER, tick=False):
        return client.post(
            CHANGELIST,
            {"action": action, "_selected_action": [p.pk for p in participants], **data},
            follow=True,
        )


@pytest.fixture
def profiles(rows):
    Profile.objects.create(user=rows["ada"].user, display_name="Ada L.", affiliation="=HYPERLINK")
    Profile.objects.create(user=rows["cyd"].user, display_name="Cyd", affiliation="Elsewhere")
    return rows


def test_the_list_shows_display_name_affiliation_rules_and_approval(organiser, profiles):
    client = _admin(organiser)
    _action(client, "approve_selected", profiles["ada"])
    response = _get(client)
    columns = response.context["cl"].list_display
    for name in ("display_name", "affiliation", "rules_accepted_at", "approved_at"):
        assert name in columns
    page = response.content.decode()
    assert "Ada L." in page and "=HYPERLINK" in page
    assert "Elsewhere" not in page  # cyd's challenge is not theirs
    assert _listed(_get(client, q="Ada L")) == {"ada"}  # by display name too


def test_the_csv_export_holds_their_challenges_participants_only(organiser, profiles):
    client = _admin(organiser)
    _action(client, "approve_selected", profiles["ada"])
    everyone = [profiles[name] for name in ("ada", "bob", "cyd")]
    response = _post(client, "export_csv", *everyone)
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="participants.csv"'
    lines = response.content.decode().splitlines()
    assert lines == [
        "challenge,username,display_name,affiliation,email,joined,rules_accepted_at,"
        "approved_at,approved_by",
        "demo,ada,Ada L.,'=HYPERLINK,ada@example.org,2030-01-20T12:00:00+00:00,"
        "2030-01-20T12:00:00+00:00,2030-01-20T17:00:00+00:00,organiser",
        "demo,bob,,,bob@example.org,2030-01-20T12:00:00+00:00,,,",
    ]  # not cyd (another challenge); a formula is kept from running


def test_a_refusal_e_mails_the_reason_and_withdraws_the_approval(organiser, rows, mailoutbox):
    client = _admin(organiser)
    _action(client, "approve_selected", rows["bob"])
    asked = _post(client, "refuse_approval", rows["bob"], rows["cyd"])
    assert asked.status_code == 200 and mailoutbox == []
    assert "Refuse approval? Their reason is e-mailed" in asked.content.decode()
    no_reason = _post(client, "refuse_approval", rows["bob"], post="yes", reason=" ")
    assert "This field is required." in no_reason.content.decode() and mailoutbox == []
    response = _post(
        client, "refuse_approval", rows["bob"], rows["cyd"], post="yes", reason="No lab given."
    )
    assert "Refused: e-mail sent to bob." in response.content.decode()
    [mail] = mailoutbox  # not cyd, of another challenge
    assert mail.to == ["bob@example.org"] and mail.reply_to == ["organiser@example.org"]
    assert mail.subject == "Demo challenge: participation not approved"
    assert "Their reason:\n\nNo lab given.\n" in mail.body
    assert "organiser of “Demo challenge”\nhttp" in mail.body
    rows["bob"].refresh_from_db(), rows["cyd"].refresh_from_db()
    assert (rows["bob"].approved_at, rows["bob"].approved_by) == (None, None)


def test_a_message_goes_to_one_participant(organiser, rows, mailoutbox):
    client = _admin(organiser)
    both = _post(client, "write_to_participant", rows["ada"], rows["bob"])
    assert "Select one participant to write to." in both.content.decode()
    form = {"post": "yes", "subject": "Your file\nformat", "body": "Please use tabs."}
    response = _post(client, "write_to_participant", rows["ada"], **form)
    assert "E-mailed: e-mail sent to ada." in response.content.decode()
    [mail] = mailoutbox
    assert (mail.to, mail.subject) == (["ada@example.org"], "Demo challenge: Your file format")
    assert mail.body.startswith("Please use tabs.\n\n-- \norganiser, organiser of")
    # Another challenge's participant is not written to.
    _post(client, "write_to_participant", rows["cyd"], **form)
    assert len(mailoutbox) == 1


def test_a_mail_server_that_is_down_changes_nothing(organiser, rows, mailoutbox, monkeypatch):
    client = _admin(organiser)
    _action(client, "approve_selected", rows["bob"])

    def down(*args, **kwargs):
        raise ConnectionRefusedError("down")

    monkeypatch.setattr("django.core.mail.backends.locmem.EmailBackend.send_messages", down)
    response = _post(client, "refuse_approval", rows["bob"], post="yes", reason="No lab.")
    assert response.status_code == 200
    assert "The mail server could not be reached: nothing was sent or changed." in (
        response.content.decode()
    )
    rows["bob"].refresh_from_db()
    assert rows["bob"].approved_by == organiser
