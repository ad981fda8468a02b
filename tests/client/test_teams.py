"""`puc team`: showing one's team and forming it (create, join by link or code, invite,
accept, decline, a new link, leave) against the live site, checked in the database."""

import json
from datetime import UTC, datetime, timedelta

import pytest
from puc_client import errors, teams
from rest_framework.authtoken.models import Token

from challenge_site.submissions.models import Submission
from challenge_site.teams import services
from challenge_site.teams.models import Invitation, Membership, Team
from tests.factories import make_user
from tests.submissions.helpers import predictions


@pytest.fixture
def bob(transactional_db):
    user = make_user("bob", display_name="Bob B.")
    return {"user": user, "token": Token.objects.create(user=user).key}


@pytest.fixture
def cy(transactional_db):
    user = make_user("cy")
    return {"user": user, "token": Token.objects.create(user=user).key}


def link_of(site, team: Team) -> str:
    return f"{site['url']}/challenges/live/team/join/{team.invite_code}/"


def members(team_name: str) -> list[str]:
    return list(
        Membership.objects.filter(team__name=team_name)
        .order_by("joined", "pk")
        .values_list("user__username", flat=True)
    )


def test_create_then_show_the_team_and_its_link(puc, site):
    alone = puc("team", "live")
    assert (alone.code, alone.out) == (errors.OK, "You are in no team of live.\n")
    assert alone.err == (
        "`puc team live create NAME` forms a team; `puc team live join LINK` joins one by "
        "its invitation link.\n"
    )
    created = puc("team", "live", "create", "Gaze", "GP")  # the words make one name
    assert created.code == errors.OK, created
    team = Team.objects.get(challenge=site["challenge"])
    assert team.name == "Gaze GP" and members("Gaze GP") == ["ada"]
    assert created.out.splitlines() == [
        "Created the team 'Gaze GP'.",
        "Team 'Gaze GP' in live: 1 of at most 5 members",
        "user  name",
        "----  ------",
        "ada   Ada L.",
        f"Invitation link: {link_of(site, team)}",
    ]
    assert puc("team", "live").out.splitlines() == created.out.splitlines()[1:]


def test_join_by_the_link_or_the_bare_code(puc, site, bob, cy):
    team = services.create(
        challenge=site["challenge"], user=site["user"], name="Gaze", now=datetime.now(UTC)
    )
    by_link = puc("team", "live", "join", link_of(site, team), "--token", bob["token"])
    assert by_link.code == errors.OK, by_link
    assert by_link.out.splitlines()[:2] == [
        "Joined the team 'Gaze'.",
        "Team 'Gaze' in live: 2 of at most 5 members",
    ]
    by_code = puc("team", "live", "join", team.invite_code, "--token", cy["token"])
    assert by_code.code == errors.OK, by_code
    assert members("Gaze") == ["ada", "bob", "cy"]
    # Every member sees the same team.
    for token in (site["token"], bob["token"], cy["token"]):
        shown = puc("team", "live", "--token", token).out.splitlines()
        assert shown[0] == "Team 'Gaze' in live: 3 of at most 5 members"
        assert [line.split()[0] for line in shown[3:6]] == ["ada", "bob", "cy"]
    team.refresh_from_db()
    assert team.members_label == "Ada L. & Bob B. & cy"


def test_a_link_to_another_challenge_or_no_link_at_all_sends_nothing(puc, site, bob):
    team = services.create(
        challenge=site["challenge"], user=site["user"], name="Gaze", now=datetime.now(UTC)
    )
    other = f"{site['url']}/challenges/other/team/join/{team.invite_code}/"
    wrong = puc("team", "live", "join", other, "--token", bob["token"])
    assert (wrong.code, wrong.err) == (
        errors.USAGE,
        "puc: the link invites to a team of 'other', not of 'live': run `puc team other join …`\n",
    )
    odd = puc("team", "live", "join", f"{site['url']}/challenges/live/", "--token", bob["token"])
    assert odd.code == errors.USAGE
    assert odd.err.startswith("puc: not an invitation link: ")
    assert members("Gaze") == ["ada"]


def test_invite_accept_and_decline(puc, site, bob, cy):
    puc("team", "live", "create", "Gaze")
    invited = puc("team", "live", "invite", "bob")
    assert invited.code == errors.OK, invited
    assert invited.out.splitlines()[0] == (
        "Invited bob: `puc team live` shows them the invitation."
    )
    assert puc("team", "live", "invite", "cy").code == errors.OK
    to_bob = Invitation.objects.get(user=bob["user"])
    to_cy = Invitation.objects.get(user=cy["user"])

    pending = puc("team", "live", "--token", bob["token"])
    assert pending.out.splitlines() == [
        "You are in no team of live.",
        "",
        "Invitations to you:",
        "id  team  members",
        "--  ----  -------",
        f"{to_bob.pk:>2}  Gaze  Ada L.",
    ]
    assert pending.err == "`puc team live accept ID` joins that team; `decline ID` turns it down.\n"

    accepted = puc("team", "live", "accept", str(to_bob.pk), "--token", bob["token"])
    assert accepted.code == errors.OK, accepted
    assert accepted.out.splitlines()[0] == "Joined the team 'Gaze'."
    declined = puc("team", "live", "decline", str(to_cy.pk), "--token", cy["token"])
    assert declined.code == errors.OK, declined
    assert declined.out.splitlines()[:2] == [
        f"Declined invitation {to_cy.pk}.",
        "You are in no team of live.",
    ]
    assert members("Gaze") == ["ada", "bob"]
    assert not Invitation.objects.exists()
    # Answered: gone, for both.
    again = puc("team", "live", "accept", str(to_cy.pk), "--token", cy["token"])
    assert (again.code, again.err) == (
        errors.REFUSED,
        "puc: the site refused the request: That invitation is no longer open.\n",
    )


def test_the_sites_refusals_are_exit_code_4_in_its_words(puc, site, bob):
    puc("team", "live", "create", "Gaze GP")
    taken = puc("team", "live", "create", "gaze gp", "--token", bob["token"])
    assert (taken.code, taken.err) == (
        errors.REFUSED,
        "puc: the site refused the request: A team of this challenge is called “gaze gp” "
        "already.\n",
    )
    nobody = puc("team", "live", "invite", "nobody")
    assert nobody.err == "puc: the site refused the request: No user is called “nobody”.\n"
    outside = puc("team", "live", "new-link", "--token", bob["token"])
    assert (outside.code, outside.err) == (
        errors.REFUSED,
        "puc: the site refused the request: You are in no team of this challenge.\n",
    )
    assert Team.objects.count() == 1 and members("Gaze GP") == ["ada"]


def test_a_new_link_and_the_old_one_stops_working(puc, site, bob):
    puc("team", "live", "create", "Gaze")
    old = Team.objects.get().invite_code
    renewed = puc("team", "live", "new-link")
    assert renewed.code == errors.OK, renewed
    new = Team.objects.get().invite_code
    assert new != old
    assert renewed.out.splitlines()[0] == "A new invitation link: the old one no longer works."
    assert renewed.out.splitlines()[-1].endswith(f"/challenges/live/team/join/{new}/")
    stale = puc("team", "live", "join", old, "--token", bob["token"])
    assert (stale.code, stale.err) == (
        errors.REFUSED,
        "puc: the site refused the request: This invitation link is not valid (any more): "
        "ask for a new one.\n",
    )


def test_leave_unless_ones_entries_are_the_teams(puc, site, bob, submit_zip):
    team = services.create(
        challenge=site["challenge"], user=site["user"], name="Gaze", now=datetime.now(UTC)
    )
    services.join(team=team, user=bob["user"], now=datetime.now(UTC))
    submit_zip(site["user"], site["challenge"], predictions("gaze"), now=datetime.now(UTC))
    assert Submission.objects.get(is_baseline=False).team_id == team.pk
    stays = puc("team", "live", "leave")
    assert stays.code == errors.REFUSED
    assert "Your entries are the team's now, so you stay in it" in stays.err
    left = puc("team", "live", "leave", "--token", bob["token"])
    assert left.code == errors.OK, left
    assert left.out.splitlines() == ["You left your team in live.", "You are in no team of live."]
    assert members("Gaze") == ["ada"]


def test_json_is_the_apis_state(puc, site):
    made = puc("team", "live", "create", "Gaze", "--json")
    assert made.code == errors.OK, made
    assert made.err == "Created the team 'Gaze'.\n"  # stdout is the JSON alone
    state = json.loads(made.out)
    team = Team.objects.get()
    assert state["team"]["invite_code"] == team.invite_code
    assert state["team"]["members"] == [{"username": "ada", "name": "Ada L."}]
    assert json.loads(puc("team", "live", "--json").out) == state


def test_fixed_teams_say_why(puc, site):
    challenge = site["challenge"]
    challenge.test_start = datetime.now(UTC) - timedelta(hours=1)
    challenge.save()
    shown = puc("team", "live")
    assert shown.code == errors.OK
    assert shown.err.startswith("Teams form until the test phase begins (")
    refused = puc("team", "live", "create", "Late")
    assert refused.code == errors.REFUSED
    assert refused.err.startswith("puc: the site refused the request: Teams form until the test")
    assert not Team.objects.exists()


def test_unknown_challenge_a_misplaced_action_and_no_token(puc, site, environ):
    unknown = puc("team", "nope")
    assert (unknown.code, unknown.err) == (
        errors.REFUSED,
        "puc: no challenge 'nope': `puc challenges` lists them\n",
    )
    misplaced = puc("team", "create")
    assert misplaced.err == (
        "puc: no challenge 'create': `puc challenges` lists them "
        "(usage: puc team CHALLENGE create …)\n"
    )
    del environ["PUC_TOKEN"]
    anonymous = puc("team", "live", "create", "Gaze")
    assert (anonymous.code, anonymous.err) == (
        errors.AUTH,
        "puc: not logged in: run `puc login`\n",
    )
    assert not Team.objects.exists()


@pytest.mark.parametrize(
    ("text", "code", "warning"),
    [
        ("  Ab-c_9  ", "Ab-c_9", None),
        ("http://localhost:8000/challenges/live/team/join/Ab-c_9/", "Ab-c_9", None),
        ("http://localhost:8000/challenges/live/team/join/Ab-c_9", "Ab-c_9", None),
        (
            "https://challenges.example.org/challenges/live/team/join/Ab-c_9/",
            "Ab-c_9",
            "warning: the link is for challenges.example.org; puc talks to localhost:8000 (--url)",
        ),
    ],
)
def test_invite_code_of_a_link_or_a_code(text, code, warning):
    assert teams.invite_code(text, challenge="live", site="http://localhost:8000") == (
        code,
        warning,
    )
