"""teams.services: forming teams, one set of limits and final entries per team, and one
name on the leaderboards (the entries that follow a joiner, and a join refused over a
limit: tests/submissions/test_team_entries.py)."""

import pytest
import time_machine
from django.test import Client

from challenge_site.leaderboard import queries
from challenge_site.submissions import finals
from challenge_site.submissions.limits import LimitReached, allowances
from challenge_site.submissions.models import Score, Submission
from challenge_site.teams import services
from challenge_site.teams.models import Team
from tests.factories import TEST_PHASE, VALIDATION, make_dataset, make_user
from tests.submissions.helpers import predictions


@pytest.fixture
def ada(db):
    return make_user("ada", display_name="Zadrozny, B")


@pytest.fixture
def bob(db):
    return make_user("bob", display_name="Langford, J")


@pytest.fixture
def cy(db):
    return make_user("cy")


def _team(challenge, *members, name="Gaze"):
    team = services.create(challenge=challenge, user=members[0], name=name, now=VALIDATION)
    for member in members[1:]:
        services.join(team=team, user=member, now=VALIDATION)
    team.refresh_from_db()
    return team


def test_best_per_participant_ranks_a_team_once_under_its_name(
    challenge, gaze, ada, bob, cy, submit_zip
):
    for seed, user in enumerate((ada, bob, cy)):
        submit_zip(user, challenge, predictions("gaze", seed=seed + 1), now=VALIDATION)
    _team(challenge, ada, bob)
    loss = gaze.effective_ranking_loss
    import scoring

    board = queries.Board(gaze, "val", scoring.get_loss(gaze.task, loss), best=True)
    ids = queries.ranked_ids(board)
    entries = queries.pivot(board, ids)
    named = [e.participant for e in entries if not e.is_baseline]
    assert sorted(named) == ["Gaze (Zadrozny, B & Langford, J)", "cy"]
    every = queries.pivot(
        queries.Board(gaze, "val", scoring.get_loss(gaze.task, loss)),
        queries.ranked_ids(queries.Board(gaze, "val", scoring.get_loss(gaze.task, loss))),
    )
    assert [e.participant for e in every if not e.is_baseline].count(
        "Gaze (Zadrozny, B & Langford, J)"
    ) == 2


def test_daily_limit_is_the_teams(challenge, gaze, ada, bob, submit_zip):
    challenge.val_daily_limit = 2
    challenge.save()
    _team(challenge, ada, bob)
    submit_zip(ada, challenge, predictions("gaze"), now=VALIDATION)
    submit_zip(bob, challenge, predictions("gaze"), now=VALIDATION)
    with pytest.raises(LimitReached, match="your team has made 2 submissions to gaze today"):
        submit_zip(ada, challenge, predictions("gaze"), now=VALIDATION)
    (row,) = allowances(user=bob, challenge=challenge, now=VALIDATION)
    assert (row.used_today, row.remaining) == (2, 0)


def test_teams_are_fixed_from_the_test_phase(challenge, ada, bob):
    team = _team(challenge, ada)
    with pytest.raises(services.TeamError, match="Teams form until the test phase begins"):
        services.join(team=team, user=bob, now=TEST_PHASE)
    with pytest.raises(services.TeamError, match="Teams form until"):
        services.create(challenge=challenge, user=bob, name="Late", now=TEST_PHASE)
    with pytest.raises(services.TeamError, match="Teams form until"):
        services.leave(team=team, user=ada, now=TEST_PHASE)


def test_size_names_and_single_membership(challenge, ada, bob, cy):
    challenge.max_team_size = 2
    challenge.save()
    team = _team(challenge, ada, bob)
    with pytest.raises(services.TeamError, match="is full"):
        services.join(team=team, user=cy, now=VALIDATION)
    with pytest.raises(services.TeamError, match="called “gaze” already"):
        services.create(challenge=challenge, user=cy, name="  gaze ", now=VALIDATION)
    with pytest.raises(services.TeamError, match="another team"):
        other = services.create(challenge=challenge, user=cy, name="Other", now=VALIDATION)
        services.join(team=other, user=ada, now=VALIDATION)
    challenge.max_team_size = 1
    challenge.save()
    with pytest.raises(services.TeamError, match="no teams"):
        services.create(challenge=challenge, user=make_user("dee"), name="D", now=VALIDATION)


def test_joining_needs_the_rules_when_the_challenge_asks(challenge, ada, bob):
    challenge.require_rules_acceptance = True
    challenge.save()
    from challenge_site.challenges import participation

    participation.join(challenge=challenge, user=ada, accept_rules=True, now=VALIDATION)
    team = _team(challenge, ada)
    with pytest.raises(services.TeamError, match="join the challenge first and accept its rules"):
        services.join(team=team, user=bob, now=VALIDATION)


def test_leaving_only_without_own_entries_and_the_last_dissolves(
    challenge, gaze, ada, bob, submit_zip
):
    team = _team(challenge, ada, bob)
    submit_zip(ada, challenge, predictions("gaze"), now=VALIDATION)
    with pytest.raises(services.TeamError, match="stay in it"):
        services.leave(team=team, user=ada, now=VALIDATION)
    services.leave(team=team, user=bob, now=VALIDATION)
    team.refresh_from_db()
    assert team.members_label == "Zadrozny, B"
    empty = _team(challenge, bob, name="Empty")
    services.leave(team=empty, user=bob, now=VALIDATION)
    assert not Team.objects.filter(pk=empty.pk).exists()


def test_final_entries_are_chosen_per_team(challenge, ada, bob, submit_zip):
    challenge.final_entries = 2
    challenge.save()
    dataset = make_dataset(challenge, "beta", task="classification")
    _team(challenge, ada, bob)
    files = predictions("beta", ("test",), task="classification")
    entries = [
        submit_zip(user, challenge, files, now=TEST_PHASE, method=f"m{i}")
        for i, user in enumerate((ada, bob, ada))
    ]
    finals.choose(submission=entries[0], final=True, now=TEST_PHASE)
    finals.choose(submission=entries[1], final=True, now=TEST_PHASE)
    with pytest.raises(finals.SelectionError, match="You have chosen 2 final entries for beta"):
        finals.choose(submission=entries[2], final=True, now=TEST_PHASE)
    counted = set(
        Submission.objects.filter(dataset=dataset, in_final_ranking=True).values_list(
            "pk", flat=True
        )
    )
    assert counted == {entries[0].pk, entries[1].pk}
    # Either member manages the team's choice: the other one's mark goes.
    client = Client()
    with time_machine.travel(TEST_PHASE, tick=False):
        client.force_login(bob)
        response = client.post(f"/submissions/{entries[0].pk}/final/", {"final": "0"})
    assert response.status_code == 302
    entries[0].refresh_from_db()
    assert entries[0].final is False


def test_the_ladder_runs_over_the_teams_entries(challenge, gaze, ada, bob, submit_zip):
    challenge.feedback = "ladder"
    challenge.save()
    submit_zip(ada, challenge, predictions("gaze", seed=1), now=VALIDATION)
    submit_zip(bob, challenge, predictions("gaze", seed=2), now=VALIDATION)
    team = _team(challenge, ada, bob)
    submit_zip(bob, challenge, predictions("gaze", seed=3), now=VALIDATION)
    rows = Score.objects.filter(
        submission__team=team, split="val", loss=gaze.effective_ranking_loss
    )
    assert rows.count() == 3
    assert rows.filter(ladder_current=True).count() == 1
    assert rows.filter(ladder_accepted__isnull=True).count() == 0
    assert rows.order_by("submission__created", "submission_id").first().ladder_accepted is True


def test_a_members_rename_follows_on_the_label(challenge, ada, bob):
    team = _team(challenge, ada, bob)
    bob.profile.display_name = "Langford, John"
    bob.profile.save()
    team.refresh_from_db()
    assert team.members_label == "Zadrozny, B & Langford, John"


def test_the_same_file_from_two_members_is_one_participants(
    challenge, gaze, ada, bob, cy, submit_zip
):
    from challenge_site.submissions import probing

    _team(challenge, ada, bob)
    files = predictions("gaze", seed=5)
    entries = [submit_zip(user, challenge, files, now=VALIDATION) for user in (ada, bob)]
    found = probing.flags(Submission.objects.filter(pk__in=[e.pk for e in entries]))
    assert len(found) == 2
    assert all(probing.SAME_FILE not in {f.code for f in flags} for flags in found.values())
    assert not Submission.objects.filter(probing.flagged_filter(probing.SAME_FILE)).exists()
    # From someone outside the team it is flagged, on all three.
    submit_zip(cy, challenge, files, now=VALIDATION)
    assert Submission.objects.filter(probing.flagged_filter(probing.SAME_FILE)).count() == 3
