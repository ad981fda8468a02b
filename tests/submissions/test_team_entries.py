"""submissions.team_entries: a participant's entries when they join a team: their quota
rows locked, the limits counted with the team's (a join over a limit is refused), and
their entries made the team's."""

from datetime import timedelta

import pytest
from django.db import transaction

from challenge_site.submissions.models import SubmissionQuota
from challenge_site.submissions.team_entries import lock_quota_rows
from challenge_site.teams import services
from challenge_site.teams.models import Membership
from tests.factories import VALIDATION, make_challenge, make_dataset, make_user

from .helpers import predictions


@pytest.fixture
def ada(db):
    return make_user("ada", display_name="Zadrozny, B")


@pytest.fixture
def bob(db):
    return make_user("bob", display_name="Langford, J")


def _team(challenge, *members, name="Gaze"):
    team = services.create(challenge=challenge, user=members[0], name=name, now=VALIDATION)
    for member in members[1:]:
        services.join(team=team, user=member, now=VALIDATION)
    team.refresh_from_db()
    return team


def test_the_joiners_quota_row_of_every_dataset_exists_and_is_locked(challenge, gaze, bob):
    coins = make_dataset(challenge, "coins", task="classification")
    make_dataset(make_challenge(slug="elsewhere"), "gaze")  # another challenge's: no row
    with transaction.atomic():
        lock_quota_rows(user=bob, challenge=challenge)
    rows = SubmissionQuota.objects.filter(user=bob)
    assert sorted(rows.values_list("dataset_id", flat=True)) == sorted([gaze.pk, coins.pk])
    with transaction.atomic():
        lock_quota_rows(user=bob, challenge=challenge)  # again: the same rows, none added
    assert rows.count() == 2


def test_joining_makes_the_joiners_entries_the_teams(challenge, gaze, ada, bob, submit_zip):
    mine = submit_zip(ada, challenge, predictions("gaze"), now=VALIDATION)
    theirs = submit_zip(bob, challenge, predictions("gaze", seed=2), now=VALIDATION)
    team = _team(challenge, ada, bob)
    assert team.members_label == "Zadrozny, B & Langford, J"
    assert team.label == "Gaze (Zadrozny, B & Langford, J)"
    assert set(team.submissions.values_list("pk", flat=True)) == {mine.pk, theirs.pk}
    # Made after joining: the team's too, whoever made it.
    later = submit_zip(bob, challenge, predictions("gaze", seed=3), now=VALIDATION)
    assert later.team_id == team.pk


def test_joining_is_refused_when_together_over_a_limit(challenge, gaze, ada, bob, submit_zip):
    challenge.val_daily_limit = 2
    challenge.save()
    team = _team(challenge, ada)
    submit_zip(ada, challenge, predictions("gaze"), now=VALIDATION)
    submit_zip(ada, challenge, predictions("gaze"), now=VALIDATION)
    own = submit_zip(bob, challenge, predictions("gaze"), now=VALIDATION)
    with pytest.raises(services.TeamError, match="3 submissions to gaze today, over its daily"):
        services.join(team=team, user=bob, now=VALIDATION)
    assert not Membership.objects.filter(user=bob).exists()
    own.refresh_from_db()
    assert own.team_id is None
    # The next day the counts start again: joining is fine.
    services.join(team=team, user=bob, now=VALIDATION + timedelta(days=1))
    own.refresh_from_db()
    assert own.team_id == team.pk
