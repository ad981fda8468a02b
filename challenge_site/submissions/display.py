"""How participants are named in public: on leaderboards, the Ladder, entry pages, exports
and the admin.

A team is its name and members, as the 2004 tables list joint entries ("Gaze (Zadrozny,
B & Langford, J)"); a user is their display name, else their user name; baselines have
none.
"""

from __future__ import annotations

from django.core.exceptions import ObjectDoesNotExist

from .models import Submission

# The values a query must select to name a participant with ``participant_label``.
PARTICIPANT_FIELDS = (
    "is_baseline",
    "user__username",
    "user__profile__display_name",
    "team__name",
    "team__members_label",
)


def participant_label(
    *,
    is_baseline: bool,
    username: str | None,
    display_name: str | None,
    team_name: str | None = None,
    team_members: str | None = None,
) -> str:
    """How a participant is named in public: a team as its name and members; a user by
    display name, else user name; baselines none."""
    if is_baseline:
        return ""
    if team_name:
        return f"{team_name} ({team_members})" if team_members else team_name
    return display_name or username or ""


def participant_label_of(values) -> str:
    """``participant_label`` of the PARTICIPANT_FIELDS values, in their order."""
    is_baseline, username, display_name, team_name, team_members = values
    return participant_label(
        is_baseline=is_baseline,
        username=username,
        display_name=display_name,
        team_name=team_name,
        team_members=team_members,
    )


def participant_name(submission: Submission) -> str:
    """``participant_label`` of an entry loaded with its user, profile and team."""
    if submission.user is None:
        return ""
    try:
        display_name = submission.user.profile.display_name
    except ObjectDoesNotExist:
        display_name = ""
    team = submission.team
    return participant_label(
        is_baseline=submission.is_baseline,
        username=submission.user.get_username(),
        display_name=display_name,
        team_name=team.name if team else None,
        team_members=team.members_label if team else None,
    )
