"""datasets.demo.teamwork: the demo challenge in its validation phase on the day it is
written, so that `make run` always offers a challenge whose teams are forming."""

from datetime import UTC, date, datetime

import pytest
import time_machine
from django.core.management import call_command

from challenge_site.challenges.clock import current_phase
from challenge_site.challenges.models import Challenge, Phase
from challenge_site.submissions.models import Submission
from challenge_site.teams import services as teams
from challenge_site.teams.models import Team
from datasets.demo import covshift, teamwork
from datasets.demo.generate import main
from datasets.importing import import_challenge


def test_its_dates_follow_the_day_it_is_written():
    settings = teamwork.build(2004, today=date(2027, 3, 15)).settings
    assert (settings["start"], settings["test_start"], settings["deadline"]) == (
        "2027-02-22T00:00:00Z",
        "2027-04-05T00:00:00Z",
        "2027-04-26T00:00:00Z",
    )
    assert (settings["slug"], settings["max_team_size"]) == ("teamwork", 3)
    assert teamwork.build(2004, today=date(2027, 5, 1)).settings["start"] == "2027-04-10T00:00:00Z"
    # New draws: not the covshift challenge's own data.
    own = teamwork.build(2004).datasets[0].splits["train"][1]
    assert not (own == covshift.udon(2004).splits["train"][1]).all()


@pytest.mark.django_db
def test_written_on_a_day_it_imports_with_teams_open_and_the_demo_team_formed(
    tmp_path, django_capture_on_commit_callbacks
):
    day = datetime(2027, 3, 15, 9, 30, tzinfo=UTC)
    assert main([str(tmp_path), "--only", "teamwork", "--today", "2027-03-15"]) == 0
    assert [p.name for p in tmp_path.iterdir()] == ["teamwork"]
    with time_machine.travel(day, tick=False):
        import_challenge(tmp_path / "teamwork")
        challenge = Challenge.objects.get(slug="teamwork")
        assert current_phase(challenge, now=day) == Phase.VALIDATION
        assert teams.forming_refusal(challenge, now=day) is None
        with django_capture_on_commit_callbacks(execute=True):
            call_command("load_demo_submissions", "teamwork", stdout=None)
    team = Team.objects.get(challenge=challenge)
    assert (team.name, team.members_label) == ("Pair programmers", "Ada (demo) & Cy (demo)")
    # Only the validation entries: the test phase is three weeks ahead.
    entries = Submission.objects.filter(dataset__challenge=challenge, is_baseline=False)
    assert entries.count() > 0
    assert set(entries.values_list("phase", flat=True)) == {"validation"}
    assert set(entries.values_list("status", flat=True)) == {"scored"}


@pytest.mark.django_db
def test_a_run_on_a_later_day_moves_the_dates_and_sends_nothing_twice(
    tmp_path, django_capture_on_commit_callbacks
):
    for day in (datetime(2027, 3, 15, 9, tzinfo=UTC), datetime(2027, 3, 18, 9, tzinfo=UTC)):
        assert main([str(tmp_path), "--only", "teamwork", "--today", f"{day:%Y-%m-%d}"]) == 0
        with time_machine.travel(day, tick=False):
            import_challenge(tmp_path / "teamwork")
            with django_capture_on_commit_callbacks(execute=True):
                call_command("load_demo_submissions", "teamwork", stdout=None)
        if day.day == 15:
            first = Submission.objects.filter(is_baseline=False).count()
    challenge = Challenge.objects.get(slug="teamwork")
    assert challenge.start == datetime(2027, 2, 25, tzinfo=UTC)  # moved with the day
    assert Submission.objects.filter(is_baseline=False).count() == first > 0
