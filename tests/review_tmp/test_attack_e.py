import time_machine
from django.test import Client
from challenge_site.teams import services
from tests.factories import VALIDATION, make_user, make_challenge


def test_team_admin_scope(challenge, organiser):
    ada = make_user("ada")
    services.create(challenge=challenge, user=ada, name="Gaze", now=VALIDATION)
    other = make_challenge(slug="draft", title="Secret draft", opened_at=None)
    c = Client()
    c.force_login(organiser)
    r = c.get("/admin/teams/team/")
    print("organiser team admin:", r.status_code)
    from django.contrib.auth.models import Permission
    organiser.user_permissions.add(Permission.objects.get(codename="view_team"))
    c = Client()
    c.force_login(organiser)
    r = c.get("/admin/teams/team/")
    print("with view_team:", r.status_code, "Secret draft" in r.content.decode())


def test_xss_in_flash_message(challenge):
    ada = make_user("ada")
    c = Client()
    with time_machine.travel(VALIDATION, tick=False):
        c.force_login(ada)
        r = c.post("/challenges/demo/team/", {"action": "create", "name": "<script>alert(1)</script>"}, follow=True)
    body = r.content.decode()
    i = body.find("alert(1)"); print("CTX", r.status_code, r.redirect_chain, repr(body[body.find("<main"):body.find("<main")+900])); assert "<script>alert" not in body
