"""teams.admin: each organiser sees the teams of their challenges in the admin, read
only: no team is added or changed there (teams change through their members' page,
whose rules the admin would skip)."""

import time_machine
from django.test import Client

from challenge_site.teams import services
from challenge_site.teams.models import Team
from tests.factories import VALIDATION, make_challenge, make_user
from tests.pages import page_text


def _post(user, data, *, url="/challenges/demo/team/", when=VALIDATION):
    with time_machine.travel(when, tick=False):
        client = Client()
        client.force_login(user)
        return client.post(url, data)


def test_a_team_cannot_be_added_or_changed_there(challenge):
    ada = make_user("ada", display_name="Ada L.")
    team = services.create(challenge=challenge, user=ada, name="Ours", now=VALIDATION)
    client = Client()
    client.force_login(make_user("root", is_superuser=True))
    assert client.get("/admin/teams/team/add/").status_code == 403
    page = client.get(f"/admin/teams/team/{team.pk}/change/")
    assert page.status_code == 200 and "Ada L." in page_text(page)
    assert 'name="name"' not in page.content.decode()  # shown, not editable
    client.post(f"/admin/teams/team/{team.pk}/change/", {"name": "Renamed"})
    assert Team.objects.get(pk=team.pk).name == "Ours"


def test_organisers_see_their_challenges_teams_in_the_admin(challenge):
    ada, bob = make_user("ada"), make_user("bob")
    other = make_challenge(slug="other", title="Other")
    _post(ada, {"action": "create", "name": "Ours"})
    services.create(challenge=other, user=bob, name="Theirs", now=VALIDATION)
    organiser = make_user("organiser", organiser_of=challenge)
    client = Client()
    client.force_login(organiser)
    listing = page_text(client.get("/admin/teams/team/"))
    assert "Ours" in listing and "Theirs" not in listing
    theirs = Team.objects.get(name="Theirs")
    assert client.get(f"/admin/teams/team/{theirs.pk}/change/").status_code in (302, 404)
