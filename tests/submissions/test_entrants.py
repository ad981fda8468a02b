"""submissions.entrants: who an entry belongs to for ranking, limits and final selections:
its team, or its user when it has none (the baseline has neither)."""

from django.db.models import Count, Window

from challenge_site.submissions.entrants import Entrant, lock_order, of_rows, partition
from challenge_site.submissions.models import Submission
from challenge_site.teams import services as teams
from tests.factories import VALIDATION, make_user
from tests.leaderboard.helpers import add_entry, reg


def test_an_entry_belongs_to_its_team_else_its_user(challenge, gaze):
    ada, bob = make_user("ada"), make_user("bob")
    alone = add_entry(gaze, user=bob, val=reg(0.5, 0.4))
    baseline = add_entry(gaze, val=reg(0.7, 0.5), baseline=True)
    team = teams.create(challenge=challenge, user=ada, name="Gaze", now=VALIDATION)
    made = add_entry(gaze, user=ada, val=reg(0.4, 0.3))
    Submission.objects.filter(pk=made.pk).update(team=team)
    made.refresh_from_db()
    assert Entrant.of(made) == Entrant(team_id=team.pk, user_id=None)
    assert Entrant.of(alone) == Entrant(team_id=None, user_id=bob.pk)
    assert Entrant.of(baseline) is None
    assert Entrant.in_challenge(user=ada, challenge_id=challenge.pk) == Entrant.of(made)
    assert Entrant.in_challenge(user=bob, challenge_id=challenge.pk) == Entrant.of(alone)
    assert Entrant.of(made).is_team and not Entrant.of(alone).is_team
    # A team's entries are the team's whoever made them; a user's, those without a team.
    assert list(Entrant.of(made).entries()) == [made]
    assert list(Entrant.of(alone).entries()) == [alone]
    assert (of_rows((team.pk, ada.pk)), of_rows((None, bob.pk)), of_rows((None, None))) == (
        Entrant.of(made),
        Entrant.of(alone),
        None,
    )


def test_users_are_locked_before_teams_and_grouped_one_partition_each(challenge, gaze):
    users = [Entrant(None, 9), Entrant(3, None), Entrant(None, 2), Entrant(1, None)]
    assert sorted(users, key=lock_order) == [
        Entrant(None, 2),
        Entrant(None, 9),
        Entrant(1, None),
        Entrant(3, None),
    ]
    for name in ("ada", "bob"):
        user = make_user(name)
        add_entry(gaze, user=user, val=reg(0.5, 0.4))
        add_entry(gaze, user=user, val=reg(0.6, 0.4))
    add_entry(gaze, val=reg(0.7, 0.5), baseline=True)
    counted = Submission.objects.annotate(n=Window(Count("id"), partition_by=partition()))
    assert sorted(counted.values_list("n", flat=True)) == [1, 2, 2, 2, 2]
    # An entry of a team is the team's, apart from its maker's own entries.
    team = teams.create(challenge=challenge, user=make_user("cy"), name="Cy", now=VALIDATION)
    Submission.objects.filter(pk=Submission.objects.filter(user__username="ada").first().pk).update(
        team=team
    )
    assert sorted(counted.values_list("n", flat=True)) == [1, 1, 1, 2, 2]
