"""submissions.display: how participants are named in public."""

import pytest

from challenge_site.submissions.display import (
    PARTICIPANT_FIELDS,
    participant_label,
    participant_label_of,
    participant_name,
)
from challenge_site.submissions.models import Submission
from challenge_site.teams.models import Team
from tests.factories import VALIDATION, make_dataset, make_user
from tests.leaderboard.helpers import add_entry, reg


@pytest.mark.parametrize(
    ("values", "label"),
    [
        ((False, "ann", "Ann Lee", None, None), "Ann Lee"),
        ((False, "bob", "", None, None), "bob"),
        ((False, "bob", None, None, None), "bob"),  # no profile row
        (
            (False, "ann", "Ann Lee", "Gaze", "Zadrozny, B & Langford, J"),
            "Gaze (Zadrozny, B & Langford, J)",
        ),
        ((False, "ann", "Ann Lee", "Gaze", ""), "Gaze"),
        ((True, None, None, None, None), ""),  # baselines have no name
    ],
)
def test_participant_label_truth_table(values, label):
    assert participant_label_of(values) == label
    is_baseline, username, display_name, team_name, team_members = values
    assert (
        participant_label(
            is_baseline=is_baseline,
            username=username,
            display_name=display_name,
            team_name=team_name,
            team_members=team_members,
        )
        == label
    )


def test_participant_names(challenge):
    dataset = make_dataset(challenge, "gaze")
    named = add_entry(dataset, user=make_user("ann", display_name="Ann Lee"), val=reg(1, 1))
    plain = add_entry(dataset, user=make_user("bob"), val=reg(1, 1))
    baseline = add_entry(dataset, baseline=True, val=reg(1, 1))
    assert [participant_name(s) for s in (named, plain, baseline)] == ["Ann Lee", "bob", ""]


def test_the_fields_a_query_selects_name_the_participant_as_the_entry_does(challenge):
    dataset = make_dataset(challenge, "gaze")
    team = Team.objects.create(
        challenge=challenge, name="Gaze", created=VALIDATION, members_label="Lee, A & Bob"
    )
    entry = add_entry(dataset, user=make_user("ann", display_name="Ann Lee"), val=reg(1, 1))
    Submission.objects.filter(pk=entry.pk).update(team=team)
    entry = Submission.objects.select_related("user__profile", "team").get(pk=entry.pk)
    values = Submission.objects.values_list(*PARTICIPANT_FIELDS).get(pk=entry.pk)
    assert participant_label_of(values) == participant_name(entry) == "Gaze (Lee, A & Bob)"
