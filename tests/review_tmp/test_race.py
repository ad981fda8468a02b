"""Reviewer's race probes on PostgreSQL (throwaway)."""

import threading

import pytest
import time_machine
from django.contrib.auth.models import User
from django.db import connection
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from challenge_site.submissions.models import Submission
from challenge_site.teams import services
from challenge_site.teams.models import Membership, Team
from tests.factories import BEFORE_START, VALIDATION, make_challenge, make_dataset, make_zip
from tests.submissions.helpers import predictions, upload_file

pytestmark = pytest.mark.skipif(connection.vendor == "sqlite", reason="PG only")


def user(name):
    return User.objects.create_user(name, f"{name}@example.org", "a-long-Passphrase-42")


def run_parallel(funcs):
    barrier = threading.Barrier(len(funcs))
    out = [None] * len(funcs)

    def wrap(i, f):
        try:
            barrier.wait(timeout=30)
            out[i] = ("ok", f())
        except BaseException as e:  # noqa
            out[i] = (type(e).__name__, str(e)[:120])
        finally:
            connection.close()

    ts = [threading.Thread(target=wrap, args=(i, f)) for i, f in enumerate(funcs)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    return out


@pytest.mark.django_db(transaction=True)
def test_two_joins_to_last_seat():
    with time_machine.travel(VALIDATION, tick=True):
        ch = make_challenge(max_team_size=2)
        make_dataset(ch, "gaze")
        a, b, c = user("a"), user("b"), user("c")
        team = services.create(challenge=ch, user=a, name="T", now=VALIDATION)
        out = run_parallel([lambda: services.join(team=team, user=b, now=VALIDATION),
                            lambda: services.join(team=team, user=c, now=VALIDATION)])
    print(out)
    assert Membership.objects.filter(team=team).count() == 2


@pytest.mark.django_db(transaction=True)
def test_one_user_joins_two_teams_at_once():
    with time_machine.travel(VALIDATION, tick=True):
        ch = make_challenge()
        make_dataset(ch, "gaze")
        a, b, c = user("a"), user("b"), user("c")
        t1 = services.create(challenge=ch, user=a, name="T1", now=VALIDATION)
        t2 = services.create(challenge=ch, user=b, name="T2", now=VALIDATION)
        out = run_parallel([lambda: services.join(team=t1, user=c, now=VALIDATION),
                            lambda: services.join(team=t2, user=c, now=VALIDATION)])
    print(out)
    assert Membership.objects.filter(user=c).count() == 1
    assert sorted(o[0] for o in out) == ["TeamError", "ok"], out


@pytest.mark.django_db(transaction=True)
def test_one_user_joins_two_teams_at_once_no_datasets_yet():
    with time_machine.travel(BEFORE_START, tick=True):
        ch = make_challenge()
        a, b, c = user("a"), user("b"), user("c")
        t1 = services.create(challenge=ch, user=a, name="T1", now=BEFORE_START)
        t2 = services.create(challenge=ch, user=b, name="T2", now=BEFORE_START)
        tokens = [Token.objects.create(user=c).key]

        def via_api(code):
            client = APIClient(raise_request_exception=False)
            client.credentials(HTTP_AUTHORIZATION=f"Token {tokens[0]}")
            r = client.post("/api/v1/challenges/demo/team/", {"action": "join", "code": code}, format="json")
            return r.status_code

        results = []
        for _ in range(6):
            Membership.objects.filter(user=c).delete()
            results.append(run_parallel([lambda: via_api(t1.invite_code), lambda: via_api(t2.invite_code)]))
    print(results)
    assert all(o[0] == "ok" and o[1] in (200, 400) for r in results for o in r), results


@pytest.mark.django_db(transaction=True)
def test_join_and_member_upload_race_daily_limit():
    with time_machine.travel(VALIDATION, tick=True):
        ch = make_challenge(val_daily_limit=2)
        make_dataset(ch, "gaze")
        data = make_zip(predictions("gaze"))
        worst = 0
        for i in range(4):
            a, m, j = user(f"a{i}"), user(f"m{i}"), user(f"j{i}")
            tm = Token.objects.create(user=m).key
            tj = Token.objects.create(user=j).key
            team = services.create(challenge=ch, user=a, name=f"T{i}", now=VALIDATION)
            services.join(team=team, user=m, now=VALIDATION)
            for tok in (tm, tj):
                c = APIClient()
                c.credentials(HTTP_AUTHORIZATION=f"Token {tok}")
                assert c.post("/api/v1/submissions/", {"challenge": "demo", "method": "x", "file": upload_file(data)}, format="multipart").status_code == 201

            def upload():
                c = APIClient(raise_request_exception=False)
                c.credentials(HTTP_AUTHORIZATION=f"Token {tm}")
                return c.post("/api/v1/submissions/", {"challenge": "demo", "method": "y", "file": upload_file(data)}, format="multipart").status_code

            out = run_parallel([upload, lambda: services.join(team=team, user=j, now=VALIDATION) and "joined"])
            n = Submission.objects.filter(team=team).count()
            print(out, n)
            worst = max(worst, n)
    assert worst <= 2
