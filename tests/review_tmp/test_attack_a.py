"""Reviewer's attack probes (throwaway)."""

import json

import pytest
import time_machine
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from challenge_site.submissions.models import Status, Submission
from challenge_site.teams import services
from challenge_site.teams.models import Invitation, Membership, Team
from tests.factories import AFTER, TEST_PHASE, VALIDATION, make_user
from tests.submissions.helpers import predictions

TEAM = "/challenges/demo/team/"
API_TEAM = "/api/v1/challenges/demo/team/"


@pytest.fixture
def ada(db):
    return make_user("ada", display_name="Zadrozny, B")


@pytest.fixture
def bob(db):
    return make_user("bob", display_name="Langford, J")


@pytest.fixture
def eve(db):
    return make_user("eve")


def api(user):
    c = APIClient()
    c.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return c


def web(user, csrf=False):
    c = Client(enforce_csrf_checks=csrf, raise_request_exception=False)
    c.force_login(user)
    return c


def test_idor_on_team_entries(challenge, gaze, ada, bob, eve, submit_zip):
    team = services.create(challenge=challenge, user=ada, name="Gaze", now=VALIDATION)
    services.join(team=team, user=bob, now=VALIDATION)
    ok = submit_zip(ada, challenge, predictions("gaze"), now=VALIDATION)
    bad = submit_zip(bob, challenge, {"gaze_val_predict.txt": b"x\n"}, now=VALIDATION)
    assert bad.status == Status.INVALID
    results = {}
    with time_machine.travel(VALIDATION, tick=False):
        w, a = web(eve), api(eve)
        for s in (ok, bad):
            results[(s.pk, "detail")] = w.get(f"/submissions/{s.pk}/").status_code
            results[(s.pk, "file")] = w.get(f"/submissions/{s.pk}/file.zip").status_code
            results[(s.pk, "withdraw")] = w.post(f"/submissions/{s.pk}/withdraw/").status_code
            results[(s.pk, "final")] = w.post(f"/submissions/{s.pk}/final/").status_code
            results[(s.pk, "api")] = a.get(f"/api/v1/submissions/{s.pk}/").status_code
            results[(s.pk, "api_withdraw")] = a.post(
                f"/api/v1/submissions/{s.pk}/withdraw/"
            ).status_code
            results[(s.pk, "api_final")] = a.post(
                f"/api/v1/submissions/{s.pk}/final/", {"final": True}, format="json"
            ).status_code
        listed = a.get("/api/v1/submissions/").json()["results"]
        err = a.get(f"/api/v1/submissions/{ok.pk}/").json()
    print(results)
    assert listed == []
    for (pk, what), code in results.items():
        if pk == ok.pk and what in ("detail", "api"):
            assert code == 200
        else:
            assert code == 404, (pk, what, code)
    assert err["errors"] == [] and err["failure"] == ""
    ok.refresh_from_db()
    assert ok.withdrawn_at is None


def test_ex_member_loses_access(challenge, gaze, ada, bob, submit_zip):
    team = services.create(challenge=challenge, user=ada, name="Gaze", now=VALIDATION)
    services.join(team=team, user=bob, now=VALIDATION)
    bad = submit_zip(ada, challenge, {"gaze_val_predict.txt": b"x\n"}, now=VALIDATION)
    services.leave(team=Team.objects.get(), user=bob, now=VALIDATION)
    with time_machine.travel(VALIDATION, tick=False):
        assert web(bob).get(f"/submissions/{bad.pk}/").status_code == 404
        assert api(bob).post(f"/api/v1/submissions/{bad.pk}/withdraw/").status_code == 404


@pytest.mark.parametrize(
    "body,ctype",
    [
        ("[]", "application/json"),
        ("null", "application/json"),
        ('"x"', "application/json"),
        ("123", "application/json"),
        ('{"action": "accept", "invitation": "\\u00b2"}', "application/json"),
        ('{"action": "accept", "invitation": "99999999999999999999999"}', "application/json"),
        ('{"action": "create", "name": "' + "x" * 5000 + '"}', "application/json"),
        ('{"action": "create", "name": "a\\u0000b"}', "application/json"),
        ('{"action": "invite", "username": "a\\u0000b"}', "application/json"),
        ('{"action": "join", "code": "a\\u0000b"}', "application/json"),
        ('{"action": ["create"]}', "application/json"),
        ("{bad json", "application/json"),
    ],
)
def test_team_api_odd_bodies(challenge, ada, body, ctype):
    if "invite" in body:
        services.create(challenge=challenge, user=ada, name="Gaze", now=VALIDATION)
    c = api(ada)
    with time_machine.travel(VALIDATION, tick=False):
        c.raise_request_exception = False
        r = c.post(API_TEAM, data=body, content_type=ctype)
    print(body[:60], r.status_code, r.content[:200])
    assert r.status_code in (200, 400), r.status_code
    if "x" * 100 in body:
        names = list(Team.objects.values_list("name", flat=True))
        assert all(len(n) <= 80 for n in names), [len(n) for n in names]


@pytest.mark.parametrize(
    "data",
    [
        {"action": "respond", "invitation": "abc", "accept": "1"},
        {"action": "respond", "invitation": "99999999999999999999999", "accept": "1"},
        {"action": "respond", "invitation": "1.5", "accept": "1"},
        {"action": "create", "name": "a\x00b"},
        {"action": "invite", "username": "a\x00b"},
        {"action": "create", "name": "x" * 81},
    ],
)
def test_team_page_odd_posts(challenge, ada, data):
    if data["action"] == "invite":
        services.create(challenge=challenge, user=ada, name="Gaze", now=VALIDATION)
    with time_machine.travel(VALIDATION, tick=False):
        r = web(ada).post(TEAM, data)
    print(data, r.status_code)
    assert r.status_code in (302, 400), r.status_code


def test_join_link_odd_codes(challenge, ada):
    with time_machine.travel(VALIDATION, tick=False):
        c = web(ada)
        for code in ["%00", "x" * 5000, "é", "..", "%2F"]:
            r = c.get(f"{TEAM}join/{code}/")
            print(code[:10], r.status_code)
            assert r.status_code in (400, 404)


def test_draft_challenge_team_paths_404(challenge, gaze, ada, bob):
    team = services.create(challenge=challenge, user=ada, name="Gaze", now=VALIDATION)
    Invitation.objects.create(team=team, user=bob, invited_by=ada, created=VALIDATION)
    challenge.opened_at = None
    challenge.save()
    with time_machine.travel(VALIDATION, tick=False):
        assert web(bob).get(f"{TEAM}join/{team.invite_code}/").status_code == 404
        assert web(bob).post(f"{TEAM}join/{team.invite_code}/").status_code == 404
        assert web(bob).post(TEAM, {"action": "respond", "invitation": Invitation.objects.get().pk, "accept": "1"}).status_code == 404
        assert api(bob).post(API_TEAM, {"action": "join", "code": team.invite_code}, format="json").status_code == 404
        assert api(bob).get("/api/v1/challenges/demo/").status_code == 404
        assert api(bob).get("/api/v1/challenges/demo/datasets/gaze.zip").status_code == 404
        assert "demo" not in json.dumps(api(bob).get("/api/v1/challenges/").json())
        r = api(bob).get("/api/v1/submissions/?challenge=demo")
        assert r.status_code == 400 and "demo" not in r.json()["challenge"].split("found")[0]
    assert not Membership.objects.filter(user=bob).exists()


def test_csrf_on_new_posts(challenge, gaze, ada, bob, submit_zip):
    team = services.create(challenge=challenge, user=ada, name="Gaze", now=VALIDATION)
    s = submit_zip(ada, challenge, predictions("gaze"), now=VALIDATION)
    with time_machine.travel(VALIDATION, tick=False):
        assert web(bob, csrf=True).post(f"{TEAM}join/{team.invite_code}/").status_code == 403
        assert web(ada, csrf=True).post(f"/submissions/{s.pk}/withdraw/").status_code == 403
        for action in ("new_link", "leave", "invite"):
            assert web(ada, csrf=True).post(TEAM, {"action": action, "username": "bob"}).status_code == 403
        # session-authenticated API without the CSRF token
        c = APIClient(enforce_csrf_checks=True)
        c.force_login(ada)
        assert c.post(f"/api/v1/submissions/{s.pk}/withdraw/").status_code == 403
        assert c.post(API_TEAM, {"action": "new_link"}, format="json").status_code == 403
    s.refresh_from_db()
    assert s.withdrawn_at is None
    assert not Membership.objects.filter(user=bob).exists()


def test_xss_team_name_and_member_label(challenge, gaze, ada, bob, submit_zip):
    from challenge_site.accounts.models import Profile

    Profile.objects.filter(user=bob).update(display_name="<img src=x onerror=alert(2)>")
    team = services.create(challenge=challenge, user=ada, name="<script>alert(1)</script>", now=VALIDATION)
    services.join(team=team, user=bob, now=VALIDATION)
    submit_zip(ada, challenge, predictions("gaze"), now=VALIDATION)
    pages = [TEAM, f"{TEAM}join/{team.invite_code}/", "/challenges/demo/datasets/gaze/leaderboard/?split=val",
             "/accounts/submissions/", "/challenges/demo/datasets/gaze/leaderboard/forest.svg?split=val"]
    with time_machine.travel(VALIDATION, tick=False):
        for url in pages:
            body = web(ada).get(url).content.decode()
            assert "<script>alert(1)" not in body, url
            assert "<img src=x" not in body, url


def test_csv_formula_in_team_name(challenge, gaze, ada, staff, submit_zip):
    team = services.create(challenge=challenge, user=ada, name='=HYPERLINK("http://evil","x")', now=VALIDATION)
    submit_zip(ada, challenge, predictions("gaze"), now=VALIDATION)
    with time_machine.travel(VALIDATION, tick=False):
        body = web(ada).get("/challenges/demo/datasets/gaze/leaderboard.csv?split=val").getvalue().decode()
        print(body)
        assert ',=HYPERLINK' not in body and '"=HYPERLINK' not in body
        body = web(staff).get("/challenges/demo/export/scores.csv").getvalue().decode()
        print(body[:800])
        assert ',=HYPERLINK' not in body and '"=HYPERLINK' not in body
