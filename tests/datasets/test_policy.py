"""datasets.policy: which datasets a user may see (the release of their files and who may
delete them are challenges.policy's: tests/challenges/test_policy.py)."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import AnonymousUser

from challenge_site.challenges import policy as challenge_policy
from datasets.policy import visible_datasets
from tests.factories import AFTER, START, make_challenge, make_dataset, make_user

SECOND = timedelta(seconds=1)


@pytest.fixture
def people(challenge):
    previewing = make_user("previewer", organiser_of=challenge)
    previewing.participant_preview = frozenset({challenge.pk})
    other = make_challenge(slug="other", title="Other")
    return {
        "anonymous": AnonymousUser(),
        "participant": make_user("participant"),
        "organiser": make_user("organiser", organiser_of=challenge),
        "previewing organiser": previewing,
        "organiser of another": make_user("elsewhere", organiser_of=other),
        "superuser": make_user("root", is_superuser=True),
    }


@pytest.mark.parametrize(
    ("who", "draft", "now", "expected"),
    [
        ("anonymous", False, START, True),
        ("anonymous", False, START - SECOND, False),  # announced, not started
        ("anonymous", True, AFTER, False),
        ("participant", False, START, True),
        ("participant", False, START - SECOND, False),
        ("participant", True, AFTER, False),
        ("organiser", False, START - SECOND, True),
        ("organiser", True, START - SECOND, True),
        ("previewing organiser", True, START - SECOND, True),  # the admin's view stays theirs
        ("organiser of another", False, START - SECOND, False),
        ("organiser of another", True, AFTER, False),
        ("superuser", True, START - SECOND, True),
    ],
)
def test_visible_datasets_truth_table(challenge, people, who, draft, now, expected):
    if draft:
        challenge.opened_at = None
        challenge.save(update_fields=["opened_at"])
    make_dataset(challenge, "gaze")
    names = set(visible_datasets(user=people[who], now=now).values_list("name", flat=True))
    assert ("gaze" in names) is expected


def test_drafts_are_seen_by_their_organisers_alone(challenge, people):
    draft = make_challenge(slug="draft", title="Draft", opened_at=None)
    drafter = make_user("drafter", organiser_of=draft)
    make_dataset(draft, "gaze")
    for name, user in {**people, "drafter": drafter}.items():
        seen = set(
            challenge_policy.visible_challenges(user=user, now=AFTER).values_list("slug", flat=True)
        )
        expected = name in ("drafter", "superuser")
        assert ("draft" in seen) is expected, name
        assert "demo" in seen
        datasets = visible_datasets(user=user, now=AFTER)
        assert datasets.filter(challenge=draft).exists() is expected, name
        assert challenge_policy.datasets_open(draft, user=user, now=AFTER) is expected, name
