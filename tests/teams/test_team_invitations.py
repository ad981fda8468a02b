"""teams.templatetags.team_invitations: an invitee sees a pending invitation on the
challenge's pages and on their profile, not only on the team page."""

import pytest
import time_machine
from django.test import Client

from challenge_site.teams import services
from challenge_site.teams.templatetags.team_invitations import open_invitations
from tests.factories import TEST_PHASE, VALIDATION, make_challenge, make_user
from tests.pages import page_text


@pytest.fixture
def invited(challenge):
    """Bob invited by Ada to her team "Gaze" in the validation phase."""
    ada, bob = make_user("ada", display_name="Zadrozny, B"), make_user("bob")
    team = services.create(challenge=challenge, user=ada, name="Gaze", now=VALIDATION)
    services.invite(team=team, by=ada, username="bob", now=VALIDATION)
    return bob


def _get(user, url, *, when=VALIDATION):
    # Logged in at ``when``: a session from today has expired by 2030.
    with time_machine.travel(when, tick=False):
        client = Client()
        client.force_login(user)
        return client.get(url)


NOTE = "Gaze (ada) invited you to their team. Answer the invitation"


def test_the_challenge_page_tells_the_invitee_and_no_one_else(invited):
    for url in ("/challenges/demo/", "/challenges/demo/data/"):
        response = _get(invited, url)
        assert response.status_code == 200
        assert NOTE in page_text(response)
        assert 'href="/challenges/demo/team/"' in response.content.decode()
    assert NOTE not in page_text(_get(make_user("cy"), "/challenges/demo/"))
    assert "invited you" not in page_text(Client().get("/challenges/demo/"))


def test_the_profile_lists_the_invitation_with_a_link_to_answer_it(invited):
    text = page_text(_get(invited, "/accounts/profile/"))
    assert (
        "Team invitation waiting for your answer Gaze in Demo challenge, invited by ada: "
        "accept or decline (until 1 Feb 2030, 00:00 UTC)"
    ) in text
    assert "Team invitation" not in page_text(_get(make_user("cy"), "/accounts/profile/"))


def test_the_team_page_button_says_accept_invitation(invited):
    text = page_text(_get(invited, "/challenges/demo/team/"))
    assert "Gaze (Zadrozny, B), invited by ada Accept invitation Decline" in text
    assert " Join " not in f" {text} "


def test_once_teams_are_fixed_the_invitation_is_no_longer_shown(invited):
    assert [i.team.name for i in open_invitations(user=invited, now=VALIDATION)] == ["Gaze"]
    assert open_invitations(user=invited, now=TEST_PHASE) == []
    assert "invited you" not in page_text(_get(invited, "/challenges/demo/", when=TEST_PHASE))
    assert "Team invitation" not in page_text(_get(invited, "/accounts/profile/", when=TEST_PHASE))


def test_only_the_challenges_own_invitations_show_on_its_page(invited):
    other = make_challenge(slug="other", title="Other challenge")
    assert open_invitations(user=invited, challenge=other, now=VALIDATION) == []
    assert "invited you" not in page_text(_get(invited, "/challenges/other/"))
