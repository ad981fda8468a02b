"""teams.models: a team of one challenge, named once whatever the case, with at most one
team per user and challenge, and its members in its label."""

import pytest
from django.db import IntegrityError, transaction

from challenge_site.teams.models import Invitation, Membership, Team, new_invite_code
from tests.factories import VALIDATION, make_challenge, make_user


def test_the_label_names_the_members_as_the_result_tables_list_them(db):
    team = Team(name="Gaze", members_label="Zadrozny, B & Langford, J")
    assert (str(team), team.label) == ("Gaze", "Gaze (Zadrozny, B & Langford, J)")
    assert Team(name="Alone").label == "Alone"


def test_invite_codes_are_random_hex_never_an_option():
    codes = {new_invite_code() for _ in range(200)}
    assert len(codes) == 200
    assert all(len(code) == 32 and int(code, 16) >= 0 and code[0] != "-" for code in codes)


def test_a_name_is_taken_once_per_challenge_whatever_its_case(db):
    challenge, other = make_challenge(), make_challenge(slug="other")
    Team.objects.create(challenge=challenge, name="Gaze", created=VALIDATION)
    Team.objects.create(challenge=other, name="GAZE", created=VALIDATION)  # another challenge
    with pytest.raises(IntegrityError), transaction.atomic():
        Team.objects.create(challenge=challenge, name="gAZE", created=VALIDATION)


def test_a_user_is_in_one_team_per_challenge_and_invited_once(db):
    challenge = make_challenge()
    ada = make_user("ada")
    first = Team.objects.create(challenge=challenge, name="First", created=VALIDATION)
    second = Team.objects.create(challenge=challenge, name="Second", created=VALIDATION)
    member = Membership.objects.create(team=first, user=ada, challenge=challenge, joined=VALIDATION)
    assert str(member) == "ada in First"
    with pytest.raises(IntegrityError), transaction.atomic():
        Membership.objects.create(team=second, user=ada, challenge=challenge, joined=VALIDATION)
    invited = Invitation.objects.create(team=second, user=ada, created=VALIDATION)
    assert str(invited) == "ada invited to Second"
    with pytest.raises(IntegrityError), transaction.atomic():
        Invitation.objects.create(team=second, user=ada, created=VALIDATION)
