"""challenge_site.policy: the one place that says who may see what, and when.

The leak tests of each app (tests/*/test_visibility.py, tests/test_odd_requests.py) check
the pages; these check the predicates and that no other module decides on its own.
"""

import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth.models import AnonymousUser, Group, User

from challenge_site import policy
from datasets.models import Kind, Split
from tests.factories import (
    AFTER,
    DEADLINE,
    START,
    TEST_START,
    make_challenge,
    make_dataset,
    make_user,
)
from tests.leaderboard.helpers import add_entry, reg

ROOT = Path(__file__).resolve().parent.parent
SECOND = timedelta(seconds=1)


@pytest.fixture
def people(challenge):
    inactive = make_user("gone", organiser_of=challenge)
    inactive.is_active = False
    inactive.save()
    other = make_challenge(slug="other", title="Other")
    return {
        "anonymous": AnonymousUser(),
        "participant": make_user("participant"),
        "organiser": make_user("organiser", organiser_of=challenge),
        "inactive organiser": inactive,
        "staff alone": make_user("staff", is_staff=True),
        "organiser of another": make_user("elsewhere", organiser_of=other),
    }


def test_organisers_are_the_challenges_own_and_superusers(challenge, people):
    organisers = {name for name, user in people.items() if policy.is_organiser(user, challenge)}
    assert organisers == {"organiser"}
    admin = make_user("root", is_superuser=True)
    assert policy.is_organiser(admin, challenge) and policy.is_organiser(admin, None)
    assert not policy.is_organiser(people["organiser"], None)
    # through a group
    group = Group.objects.create(name="committee")
    member = make_user("member", is_staff=True)
    member.groups.add(group)
    challenge.organiser_groups.add(group)
    member = User.objects.get(pk=member.pk)  # (a fresh object: ids are remembered per user)
    assert policy.is_organiser(member, challenge)
    assert policy.is_organiser(member, challenge.pk)
    assert list(policy.organised_challenges(member)) == [challenge]
    assert policy.organises_any(member) and not policy.organises_any(people["staff alone"])


def test_drafts_are_seen_by_their_organisers_alone(challenge, people):
    draft = make_challenge(slug="draft", title="Draft", opened_at=None)
    draft_org = make_user("drafter", organiser_of=draft)
    make_dataset(draft, "gaze")
    for name, user in {**people, "drafter": draft_org}.items():
        seen = set(policy.visible_challenges(user=user, now=AFTER).values_list("slug", flat=True))
        assert ("draft" in seen) is (name == "drafter"), name
        assert "demo" in seen
        datasets = policy.visible_datasets(user=user, now=AFTER)
        assert datasets.filter(challenge=draft).exists() is (name == "drafter"), name
        assert policy.datasets_open(draft, user=user, now=AFTER) is (name == "drafter"), name


@pytest.mark.parametrize("published", [False, True])
def test_test_scores_wait_for_publication_and_others_do_not(challenge, people, published):
    challenge.results_published = published
    for name, user in people.items():
        for split in (Split.TRAIN, Split.VAL):
            assert policy.split_visible(challenge, split, user=user)
        expected = published or name == "organiser"
        assert policy.split_visible(challenge, Split.TEST, user=user) is expected
        assert policy.results_visible(challenge, user=user) is expected
        assert policy.results_preview(challenge, user=user) is (not published and expected)
    assert policy.scores_public(challenge, Split.TEST) is published


def test_hidden_reason_says_when_test_scores_come(challenge, people):
    participant = people["participant"]
    before = policy.hidden_reason(challenge, split="test", user=participant, now=DEADLINE)
    assert "after the deadline (08 Feb 2030, 23:59 UTC)" in before
    after = policy.hidden_reason(challenge, split="test", user=participant, now=DEADLINE + SECOND)
    assert "have not published them yet" in after
    assert policy.hidden_reason(challenge, split="val", user=participant, now=START) is None
    assert (
        policy.hidden_reason(challenge, split="test", user=people["organiser"], now=START) is None
    )


def test_unreleased_file_details_only_for_organisers(challenge, people):
    test_targets = {"split": Split.TEST, "kind": Kind.TARGETS}
    test_inputs = {"split": Split.TEST, "kind": Kind.INPUTS}
    participant, organiser = people["participant"], people["organiser"]
    for now in (START - SECOND, START, TEST_START, DEADLINE + SECOND):
        assert not policy.file_details_visible(challenge, **test_targets, user=participant, now=now)
        assert policy.file_details_visible(challenge, **test_targets, user=organiser, now=now)
    assert not policy.file_details_visible(
        challenge, **test_inputs, user=participant, now=TEST_START - SECOND
    )
    assert policy.file_details_visible(challenge, **test_inputs, user=participant, now=TEST_START)
    assert not policy.split_rows_visible(challenge, "train", user=participant, now=START - SECOND)
    assert policy.split_rows_visible(challenge, "train", user=participant, now=START)


def test_private_parts_belong_to_the_owner_and_organisers(challenge, people):
    dataset = make_dataset(challenge, "gaze")
    submission = add_entry(dataset, user=people["participant"], val=reg(0.5, 0.4))
    other = make_user("other")
    assert policy.can_see_private(submission, user=people["participant"])
    assert policy.can_see_private(submission, user=people["organiser"])
    for user in (
        other,
        people["anonymous"],
        people["inactive organiser"],
        people["staff alone"],
        people["organiser of another"],
    ):
        assert not policy.can_see_private(submission, user=user)
    assert not policy.can_see_failure_detail(submission, user=people["participant"])
    assert policy.can_see_failure_detail(submission, user=people["organiser"])


def test_participant_names(challenge):
    dataset = make_dataset(challenge, "gaze")
    named = add_entry(dataset, user=make_user("ann", display_name="Ann Lee"), val=reg(1, 1))
    plain = add_entry(dataset, user=make_user("bob"), val=reg(1, 1))
    baseline = add_entry(dataset, baseline=True, val=reg(1, 1))
    assert [policy.participant_name(s) for s in (named, plain, baseline)] == ["Ann Lee", "bob", ""]


# --- Written once ---------------------------------------------------------------------

SOURCES = [
    path
    for folder in ("challenge_site", "datasets")
    for path in (ROOT / folder).rglob("*.py")
    if "migrations" not in path.parts and path.name != "policy.py"
]
TEMPLATES = list((ROOT / "templates").rglob("*.html"))
# The admin link in the header is navigation, not a rule about challenge data.
ALLOWED = {
    ("templates/base.html", "{% if user.is_staff %}<li><a href=\"{% url 'admin:index' %}\">")
}


def _lines(paths):
    for path in paths:
        for line in path.read_text().splitlines():
            yield str(path.relative_to(ROOT)), line


def test_no_module_or_template_decides_visibility_on_its_own():
    offending = [
        (path, line.strip())
        for path, line in _lines(SOURCES + TEMPLATES)
        if re.search(r"\.is_staff\b(?!\")", line)
        and "list_display" not in line
        and not any(path == allowed and snippet in line for allowed, snippet in ALLOWED)
    ]
    assert offending == []
    listed_elsewhere = [
        (path, line.strip())
        for path, line in _lines(SOURCES)
        if re.search(r"status=Status\.SCORED|submission__status=", line)
        and "challenge_site/leaderboard" in path
    ]
    assert listed_elsewhere == []
