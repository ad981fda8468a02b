"""Reviewer's attack probes, batch B (throwaway)."""

import numpy as np
import pytest
import time_machine
from django.core import mail
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from challenge_site.accounts.models import Profile
from challenge_site.challenges.models import Feedback
from challenge_site.submissions import withdrawal
from challenge_site.submissions.limits import LimitReached
from challenge_site.submissions.models import Score
from challenge_site.teams import services
from challenge_site.teams.models import Membership, Team
from tests.factories import TEST_PHASE, VALIDATION, make_dataset, make_user
from tests.submissions.helpers import predictions


@pytest.fixture
def ada(db):
    return make_user("ada", display_name="Zadrozny, B")


@pytest.fixture
def bob(db):
    return make_user("bob", display_name="Langford, J")


def api(user):
    c = APIClient(raise_request_exception=False)
    c.credentials(HTTP_AUTHORIZATION=f"Bearer {Token.objects.get_or_create(user=user)[0].key}")
    return c


def web(user):
    c = Client(raise_request_exception=False)
    c.force_login(user)
    return c


@pytest.mark.parametrize(
    "query",
    ["page=abc", "page=0", "page=-1", "page=99999999999999999999999", "page=1e3",
     "status=%00", "challenge=%00", "dataset=%00", "challenge=demo&dataset=nope",
     "status=scored&status=invalid", "page=2", "challenge=" + "x" * 3000],
)
def test_api_list_odd_queries(challenge, gaze, ada, query):
    with time_machine.travel(VALIDATION, tick=False):
        r = api(ada).get(f"/api/v1/submissions/?{query}")
    print(query[:40], r.status_code, r.content[:200])
    assert r.status_code in (200, 400, 404)


@pytest.mark.parametrize(
    "query",
    ["status=bogus", "challenge=bogus", "page=abc", "hide_invalid=xyz", "challenge=%00",
     "status=%00", "page=99999999999999999999"],
)
def test_my_submissions_odd_queries(challenge, gaze, ada, query):
    with time_machine.travel(VALIDATION, tick=False):
        r = web(ada).get(f"/accounts/submissions/?{query}")
    print(query, r.status_code)
    assert r.status_code in (200, 400)


def test_test_scores_hidden_in_list_and_email(challenge, gaze, ada, bob, submit_zip):
    for u in (ada, bob):
        Profile.objects.update_or_create(user=u, defaults={"email_on_scoring_finished": True})
    team = services.create(challenge=challenge, user=ada, name="Gaze", now=VALIDATION)
    services.join(team=team, user=bob, now=VALIDATION)
    mail.outbox.clear()
    s = submit_zip(bob, challenge, predictions("gaze", ("val", "test")), now=TEST_PHASE)
    assert Score.objects.filter(submission=s, split="test").exists()
    test_values = {repr(v)[:6] for v in Score.objects.filter(submission=s, split="test").values_list("value", flat=True)}
    with time_machine.travel(TEST_PHASE, tick=False):
        (item,) = api(ada).get("/api/v1/submissions/").json()["results"]
        one = api(ada).get(f"/api/v1/submissions/{s.pk}/").json()
        page = web(ada).get("/accounts/submissions/").content.decode()
    print(item)
    assert "test" not in item["scores"] and "test" not in one["scores"]
    bodies = [m.body for m in mail.outbox]
    print(bodies)
    assert len(bodies) == 2
    for body in bodies:
        assert "Test split: scores hidden" in body
        for v in test_values:
            assert v not in body
    for v in test_values:
        assert v not in page


def test_withdraw_reveals_ladder_hidden_scores(challenge, ada, submit_zip):
    """Under the Ladder an entry that does not beat the shown score reveals nothing; does
    withdrawing the earlier, better one make its (rounded) score appear?"""
    challenge.feedback = Feedback.LADDER
    challenge.save()
    beta = make_dataset(challenge, "beta", task="classification", sizes=(40, 300, 400))
    rng = np.random.default_rng(0)
    good = 0.05 + 0.9 * rng.random(300)
    # read the val targets to build a clearly better first entry
    from tests.submissions.helpers import stored_file
    targets = np.array([int(x) for x in stored_file(beta, "val", "targets").split()])
    best = np.where(targets > 0, 0.9, 0.1)
    worse = np.where(targets > 0, 0.6, 0.4)

    def up(p, m):
        return submit_zip(ada, challenge, {"beta_val_predict.txt": "".join(f"{x:.6g}\n" for x in p).encode()}, now=VALIDATION, method=m)

    first = up(best, "best")
    second = up(worse, "worse")
    with time_machine.travel(VALIDATION, tick=False):
        before = api(ada).get(f"/api/v1/submissions/{second.pk}/").json()["ladder"]
    print("before", before)
    withdrawal.withdraw(submission=first, now=VALIDATION)
    with time_machine.travel(VALIDATION, tick=False):
        after = api(ada).get(f"/api/v1/submissions/{second.pk}/").json()["ladder"]
    exact = Score.objects.get(submission=second, split="val", loss="nlp").value
    print("after", after, "exact", exact)
    assert after["val"]["shown"] == before["val"]["shown"], "withdrawal revealed the worse entry's rounded score"


def test_leave_and_rejoin_and_two_teams_limits(challenge, gaze, ada, bob, submit_zip):
    challenge.val_daily_limit = 2
    challenge.save()
    cy = make_user("cy")
    team = services.create(challenge=challenge, user=ada, name="Gaze", now=VALIDATION)
    services.join(team=team, user=bob, now=VALIDATION)
    services.join(team=team, user=cy, now=VALIDATION)
    submit_zip(ada, challenge, predictions("gaze"), now=VALIDATION)
    submit_zip(ada, challenge, predictions("gaze"), now=VALIDATION)
    with pytest.raises(LimitReached):
        submit_zip(bob, challenge, predictions("gaze"), now=VALIDATION)
    # bob (no entries) leaves, submits alone, tries to join again the same day
    services.leave(team=Team.objects.get(), user=bob, now=VALIDATION)
    submit_zip(bob, challenge, predictions("gaze"), now=VALIDATION)
    with pytest.raises(services.TeamError):
        services.join(team=Team.objects.get(), user=bob, now=VALIDATION)
    # cy leaves and creates a second team, bob joins that: each team has its own limits
    services.leave(team=Team.objects.get(name="Gaze"), user=cy, now=VALIDATION)
    t2 = services.create(challenge=challenge, user=cy, name="Two", now=VALIDATION)
    services.join(team=t2, user=bob, now=VALIDATION)
    assert Membership.objects.filter(user=bob, team=t2).exists()


def test_invite_flood_unbounded(challenge, ada):
    team = services.create(challenge=challenge, user=ada, name="Gaze", now=VALIDATION)
    users = [make_user(f"u{i}") for i in range(30)]
    for u in users:
        services.invite(team=team, by=ada, username=u.username, now=VALIDATION)
    print("invitations", team.invitations.count())


def test_join_with_rules_not_accepted(challenge, ada, bob):
    challenge.require_rules_acceptance = True
    challenge.save()
    from challenge_site.challenges.models import Participant
    Participant.objects.create(challenge=challenge, user=ada, rules_accepted_at=VALIDATION)
    team = services.create(challenge=challenge, user=ada, name="Gaze", now=VALIDATION)
    with pytest.raises(services.TeamError):
        services.join(team=team, user=bob, now=VALIDATION)


def test_upcoming_dataset_names_via_api(db, bob):
    from tests.factories import BEFORE_START, make_challenge
    ch = make_challenge()
    make_dataset(ch, "secretname")
    with time_machine.travel(BEFORE_START, tick=False):
        body = APIClient().get("/api/v1/challenges/demo/").json()
        page = Client().get("/challenges/demo/data/").content.decode()
    print(body["datasets"], "secretname" in page)
