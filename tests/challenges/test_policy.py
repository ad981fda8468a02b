"""challenges.policy: the rules that need no more than the challenge, one truth table per
predicate (who asks, the challenge's state, the clock → allowed or not).

The leak tests of each app (tests/*/test_visibility.py, tests/test_odd_requests.py) check
the pages; tests/test_architecture.py checks that no other module decides on its own.
"""

from datetime import timedelta

import pytest
from django.contrib.auth.models import AnonymousUser, Group, Permission, User

from challenge_site.challenges import policy
from challenge_site.challenges.models import Challenge, Participant
from challenge_site.challenges.splits import Kind, ScoredSplit, Split
from tests.factories import (
    AFTER,
    DEADLINE,
    START,
    TEST_START,
    VALIDATION,
    make_challenge,
    make_user,
)

SECOND = timedelta(seconds=1)
PUBLIC = {(Split.TRAIN, Kind.INPUTS), (Split.TRAIN, Kind.TARGETS), (Split.VAL, Kind.INPUTS)}
# Who asks: every kind of user the rules tell apart.
WHO = [
    "anonymous",
    "participant",
    "organiser",
    "group organiser",
    "previewing organiser",
    "inactive organiser",
    "staff alone",
    "organiser of another",
    "superuser",
    "previewing superuser",
]


@pytest.fixture
def people(challenge):
    """Each of WHO, for ``challenge`` (the demo challenge, open)."""
    inactive = make_user("gone", organiser_of=challenge)
    inactive.is_active = False
    inactive.save()
    other = make_challenge(slug="other", title="Other")
    group = Group.objects.create(name="committee")
    challenge.organiser_groups.add(group)
    member = make_user("member", is_staff=True)
    member.groups.add(group)
    previewing = make_user("previewer", organiser_of=challenge)
    previewing.participant_preview = frozenset({challenge.pk})
    root = make_user("root", is_superuser=True)
    root.participant_preview = frozenset({challenge.pk})
    return {
        "anonymous": AnonymousUser(),
        "participant": make_user("participant"),
        "organiser": make_user("organiser", organiser_of=challenge),
        "group organiser": member,
        "previewing organiser": previewing,
        "inactive organiser": inactive,
        "staff alone": make_user("staff", is_staff=True),
        "organiser of another": make_user("elsewhere", organiser_of=other),
        "superuser": make_user("admin", is_superuser=True),
        "previewing superuser": root,
    }


def _draft(challenge: Challenge) -> Challenge:
    challenge.opened_at = None
    challenge.save(update_fields=["opened_at"])
    return challenge


# --- Who is asking --------------------------------------------------------------------

# is_superuser, is_organiser, manages, may_preview, previewing, organises_any, in_console
ASKING = {
    "anonymous": (False, False, False, False, False, False, False),
    "participant": (False, False, False, False, False, False, False),
    "organiser": (False, True, True, True, False, True, True),
    "group organiser": (False, True, True, True, False, True, True),
    "previewing organiser": (False, False, True, True, True, True, True),
    "inactive organiser": (False, False, False, False, False, False, False),
    "staff alone": (False, False, False, False, False, False, True),
    "organiser of another": (False, False, False, False, False, True, True),
    "superuser": (True, True, True, True, False, True, True),
    "previewing superuser": (True, False, True, True, True, True, True),
}


@pytest.mark.parametrize("who", WHO)
def test_who_is_asking_truth_table(challenge, people, who):
    user = people[who]
    answers = (
        policy.is_superuser(user),
        policy.is_organiser(user, challenge),
        policy.manages(user, challenge),
        policy.may_preview(user, challenge),
        policy.previewing(user, challenge),
        policy.organises_any(user),
        policy.in_console(user),
    )
    assert answers == ASKING[who]
    # The same answers by the challenge's id.
    assert policy.is_organiser(user, challenge.pk) is ASKING[who][1]
    assert policy.manages(user, challenge.pk) is ASKING[who][2]
    # No challenge at all: the superusers' alone.
    assert policy.is_organiser(user, None) is who.endswith("superuser")
    assert policy.manages(user, None) is who.endswith("superuser")


def test_organisers_are_the_challenges_own_and_superusers(challenge, people):
    organisers = {name for name, user in people.items() if policy.is_organiser(user, challenge)}
    assert organisers == {"organiser", "group organiser", "superuser"}
    admin = make_user("root2", is_superuser=True)
    assert policy.is_organiser(admin, challenge) and policy.is_organiser(admin, None)
    assert not policy.is_organiser(people["organiser"], None)
    # through a group
    group = Group.objects.create(name="board")
    member = make_user("member2", is_staff=True)
    member.groups.add(group)
    challenge.organiser_groups.add(group)
    member = User.objects.get(pk=member.pk)  # (a fresh object: ids are remembered per user)
    assert policy.is_organiser(member, challenge)
    assert policy.is_organiser(member, challenge.pk)
    assert list(policy.organised_challenges(member)) == [challenge]
    assert policy.organises_any(member) and not policy.organises_any(people["staff alone"])


@pytest.mark.parametrize(
    ("who", "expected"),
    [
        ("anonymous", set()),
        ("participant", set()),
        ("organiser", {"demo"}),
        ("group organiser", {"demo"}),
        ("previewing organiser", {"demo"}),
        ("inactive organiser", set()),
        ("organiser of another", {"other"}),
        ("superuser", {"demo", "other"}),
    ],
)
def test_organised_challenges_truth_table(challenge, people, who, expected):
    user = people[who]
    assert set(policy.organised_challenges(user).values_list("slug", flat=True)) == expected
    if who != "superuser":  # (organised_q is not for superusers: see its docstring)
        rows = Challenge.objects.filter(policy.organised_q(user))
        assert set(rows.values_list("slug", flat=True)) == expected


@pytest.mark.parametrize(
    ("who", "permission", "expected"),
    [
        ("participant", False, False),
        ("participant", True, False),  # the permission without the door to the admin
        ("staff alone", False, False),
        ("staff alone", True, True),
        ("organiser", False, False),  # organising one challenge does not start others
        ("inactive organiser", True, False),
        ("superuser", False, True),
    ],
)
def test_may_start_challenges_truth_table(people, who, permission, expected):
    user = people[who]
    if permission:
        add = Permission.objects.get(codename="add_challenge", content_type__app_label="challenges")
        user.user_permissions.add(add)
        user = User.objects.get(pk=user.pk)  # (permissions are remembered per user object)
    assert policy.may_start_challenges(user) is expected


# The mutation this table must kill: the draft condition of dataset deletion dropped
# (organisers deleting the datasets of an open challenge), or the superusers' right.
@pytest.mark.parametrize(
    ("who", "draft", "expected"),
    [
        ("anonymous", True, False),
        ("participant", True, False),
        ("organiser", True, True),
        ("organiser", False, False),
        ("group organiser", True, True),
        ("group organiser", False, False),
        ("previewing organiser", True, True),  # looking as a participant keeps the console
        ("previewing organiser", False, False),
        ("inactive organiser", True, False),
        ("staff alone", True, False),
        ("organiser of another", True, False),
        ("superuser", True, True),
        ("superuser", False, True),
    ],
)
def test_may_delete_dataset_truth_table(challenge, people, who, draft, expected):
    if draft:
        _draft(challenge)
    assert policy.may_delete_dataset(people[who], challenge) is expected


# --- Challenges and their files -------------------------------------------------------


@pytest.mark.parametrize(
    ("who", "open_seen", "draft_seen"),
    [
        ("anonymous", True, False),
        ("participant", True, False),
        ("organiser", True, True),
        ("group organiser", True, True),
        ("previewing organiser", True, True),
        ("inactive organiser", True, False),
        ("staff alone", True, False),
        ("organiser of another", True, False),
        ("superuser", True, True),
    ],
)
def test_visible_challenges_truth_table(challenge, people, who, open_seen, draft_seen):
    # A draft with the same organisers (asked before any predicate remembers their ids).
    draft = make_challenge(slug="draft", title="Draft", opened_at=None)
    draft.organisers.add(*challenge.organisers.all())
    draft.organiser_groups.add(*challenge.organiser_groups.all())
    user = people[who]
    # Upcoming challenges are announced: the clock does not matter.
    for now in (START - SECOND, AFTER):
        seen = set(policy.visible_challenges(user=user, now=now).values_list("slug", flat=True))
        assert ("demo" in seen, "draft" in seen) == (open_seen, draft_seen)


@pytest.mark.parametrize(
    ("who", "draft", "now", "expected"),
    [
        ("anonymous", False, START, True),
        ("anonymous", False, START - SECOND, False),
        ("anonymous", True, START, False),
        ("participant", False, START, True),
        ("participant", False, START - SECOND, False),
        ("participant", True, AFTER, False),
        ("organiser", False, START - SECOND, True),
        ("organiser", True, START - SECOND, True),
        ("previewing organiser", True, START, True),  # a draft shows as if it were open
        ("previewing organiser", True, START - SECOND, False),
        ("previewing organiser", False, START - SECOND, False),
        ("organiser of another", True, AFTER, False),
        ("superuser", True, START - SECOND, True),
    ],
)
def test_datasets_open_truth_table(challenge, people, who, draft, now, expected):
    if draft:
        _draft(challenge)
    assert policy.datasets_open(challenge, user=people[who], now=now) is expected


SCHEDULE = [
    ("before start", START - SECOND, {}, set()),
    ("validation", START, {}, PUBLIC),
    (
        "validation, test inputs at start",
        START,
        {"test_inputs_release": "start"},
        PUBLIC | {("test", "inputs")},
    ),
    (
        "before start, test inputs at start",
        START - SECOND,
        {"test_inputs_release": "start"},
        set(),
    ),
    ("end of validation", TEST_START - SECOND, {}, PUBLIC),
    ("test phase", TEST_START, {}, PUBLIC | {("val", "targets"), ("test", "inputs")}),
    (
        "after deadline, unpublished",
        DEADLINE + SECOND,
        {"test_targets_release": "after_publication"},
        PUBLIC | {("val", "targets"), ("test", "inputs")},
    ),
    (
        "after deadline, published",
        DEADLINE + SECOND,
        {"test_targets_release": "after_publication", "results_published": True},
        PUBLIC | {("val", "targets"), ("test", "inputs"), ("test", "targets")},
    ),
    (
        "published, targets never",
        DEADLINE + SECOND,
        {"results_published": True},
        PUBLIC | {("val", "targets"), ("test", "inputs")},
    ),
    (
        "published early, still test phase",
        DEADLINE,
        {"test_targets_release": "after_publication", "results_published": True},
        PUBLIC | {("val", "targets"), ("test", "inputs")},
    ),
    (
        "published early, validation phase",
        START,
        {"test_targets_release": "after_publication", "results_published": True},
        PUBLIC,
    ),
]


# The mutations this table must kill: test targets released before publication (or
# when they are never to be), test inputs before the test phase, validation targets in
# the validation phase, anything before the start.
@pytest.mark.parametrize(
    ("label", "now", "settings_", "expected"), SCHEDULE, ids=[s[0] for s in SCHEDULE]
)
def test_released_parts_follow_phase_and_settings(label, now, settings_, expected):
    # In memory: the services refuse results published before the deadline, yet the
    # rule must hold for such a row too ("published early").
    challenge = Challenge(
        slug="demo", title="Demo", start=START, test_start=TEST_START, deadline=DEADLINE
    )
    for field, value in settings_.items():
        setattr(challenge, field, value)
    assert policy.released_parts(challenge, now=now) == expected


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


@pytest.mark.parametrize(
    ("who", "part", "now", "expected"),
    [
        ("anonymous", (Split.TRAIN, Kind.TARGETS), START - SECOND, False),
        ("anonymous", (Split.TRAIN, Kind.TARGETS), START, True),
        ("participant", (Split.VAL, Kind.TARGETS), TEST_START - SECOND, False),
        ("participant", (Split.VAL, Kind.TARGETS), TEST_START, True),
        ("participant", (Split.TEST, Kind.INPUTS), TEST_START - SECOND, False),
        ("participant", (Split.TEST, Kind.TARGETS), AFTER, False),  # never, by default
        ("previewing organiser", (Split.TEST, Kind.TARGETS), AFTER, False),
        ("organiser", (Split.TEST, Kind.TARGETS), START - SECOND, True),
        ("organiser of another", (Split.TEST, Kind.TARGETS), AFTER, False),
        ("superuser", (Split.VAL, Kind.TARGETS), START - SECOND, True),
    ],
)
def test_file_details_visible_truth_table(challenge, people, who, part, now, expected):
    split, kind = part
    user = people[who]
    assert policy.file_details_visible(challenge, split=split, kind=kind, user=user, now=now) is (
        expected
    )
    if kind == Kind.INPUTS:  # the number of rows follows the inputs
        assert policy.split_rows_visible(challenge, split, user=user, now=now) is expected


# --- Taking part ----------------------------------------------------------------------

RULES = policy.RULES_ACCEPTANCE
APPROVAL = policy.APPROVAL
OPTIONS = {
    "none": {},
    "rules": {"require_rules_acceptance": True},
    "approval": {"require_approval": True},
    "both": {"require_rules_acceptance": True, "require_approval": True},
}
# What a user still lacks, by the challenge's options and their Participant row.
STANDINGS = ["no row", "joined", "accepted", "approved", "accepted and approved"]
MISSING = {
    "none": {standing: () for standing in STANDINGS},
    "rules": {
        "no row": (RULES,),
        "joined": (RULES,),
        "accepted": (),
        "approved": (RULES,),
        "accepted and approved": (),
    },
    "approval": {
        "no row": (APPROVAL,),
        "joined": (APPROVAL,),
        "accepted": (APPROVAL,),
        "approved": (),
        "accepted and approved": (),
    },
    "both": {
        "no row": (RULES, APPROVAL),
        "joined": (RULES, APPROVAL),
        "accepted": (APPROVAL,),
        "approved": (RULES,),
        "accepted and approved": (),
    },
}


def set_options(challenge, options: str):
    for field, value in OPTIONS[options].items():
        setattr(challenge, field, value)
    challenge.save()


def give_standing(challenge, user, standing: str, *, by=None):
    if standing == "no row":
        return None
    return Participant.objects.create(
        challenge=challenge,
        user=user,
        joined=VALIDATION,
        rules_accepted_at=VALIDATION if "accepted" in standing else None,
        approved_at=VALIDATION if "approved" in standing else None,
        approved_by=by if "approved" in standing else None,
    )


@pytest.mark.parametrize(
    ("options", "asks"),
    [("none", ()), ("rules", (RULES,)), ("approval", (APPROVAL,)), ("both", (RULES, APPROVAL))],
)
def test_participation_asks_truth_table(challenge, options, asks):
    set_options(challenge, options)
    assert policy.participation_asks(challenge) == asks


@pytest.mark.parametrize("options", list(OPTIONS))
@pytest.mark.parametrize("standing", STANDINGS)
def test_participation_missing_truth_table(challenge, options, standing):
    ada = make_user("ada")
    set_options(challenge, options)
    give_standing(challenge, ada, standing)
    missing = MISSING[options][standing]
    assert policy.participation_missing(challenge, user=ada) == missing
    assert policy.may_take_part(challenge, user=ada) is (missing == ())
    # Whether they have a row: asked only where the challenge asks for something.
    joined = options != "none" and standing != "no row"
    assert policy.participation_standing(challenge, user=ada) == (missing, joined)


@pytest.mark.parametrize("options", list(OPTIONS))
@pytest.mark.parametrize("who", WHO)
def test_may_take_part_without_a_participant_row(challenge, people, options, who):
    """Organisers (not previewing) and superusers need nothing; anyone else needs what the
    options ask, an anonymous visitor included (they must log in and join)."""
    set_options(challenge, options)
    exempt = options == "none" or ASKING[who][1]
    assert policy.may_take_part(challenge, user=people[who]) is exempt
    expected = () if exempt else policy.participation_asks(challenge)
    assert policy.participation_missing(challenge, user=people[who]) == expected


def test_organisers_of_this_challenge_only_need_nothing(challenge, people):
    other = make_challenge(slug="third", title="Third", require_approval=True)
    assert not policy.may_take_part(other, user=people["organiser"])


# --- Scores ---------------------------------------------------------------------------


@pytest.mark.parametrize("published", [False, True])
def test_test_scores_wait_for_publication_and_others_do_not(challenge, people, published):
    challenge.results_published = published
    for name, user in people.items():
        for split in (Split.TRAIN, Split.VAL):
            assert policy.split_visible(challenge, split, user=user)
        expected = published or ASKING[name][1]
        assert policy.split_visible(challenge, Split.TEST, user=user) is expected
        assert policy.results_visible(challenge, user=user) is expected
        assert policy.statistics_visible(challenge, user=user) is expected
        assert policy.results_preview(challenge, user=user) is (not published and expected)
    assert policy.scores_public(challenge, Split.TEST) is published


@pytest.mark.parametrize(
    ("split", "public_part", "published", "expected"),
    [
        (ScoredSplit.TRAIN, False, False, True),
        (ScoredSplit.VAL, False, False, True),
        (ScoredSplit.TEST, False, False, False),
        (ScoredSplit.TEST, False, True, True),
        (ScoredSplit.PUBLIC, True, False, True),
        (ScoredSplit.PUBLIC, False, False, False),  # left from a public part turned off
        (ScoredSplit.PUBLIC, False, True, True),
        (ScoredSplit.PRIVATE, True, False, False),
        (ScoredSplit.PRIVATE, True, True, True),
    ],
)
def test_scores_public_truth_table(split, public_part, published, expected):
    challenge = Challenge(test_public_fraction=0.3 if public_part else 0)
    challenge.results_published = published
    assert policy.scores_public(challenge, split) is expected


# The mutation this table must kill: the Ladder still applying to the public part once
# the results are published (or to the validation split once its targets are out).
@pytest.mark.parametrize(
    ("who", "feedback", "split", "now", "published", "expected"),
    [
        ("participant", "ladder", ScoredSplit.VAL, VALIDATION, False, True),
        ("participant", "ladder", ScoredSplit.VAL, TEST_START, False, False),  # targets out
        ("participant", "ladder", ScoredSplit.PUBLIC, TEST_START, False, True),
        ("participant", "ladder", ScoredSplit.PUBLIC, AFTER, False, True),
        ("participant", "ladder", ScoredSplit.PUBLIC, AFTER, True, False),  # lifted
        ("anonymous", "ladder", ScoredSplit.PUBLIC, AFTER, True, False),
        ("anonymous", "ladder", ScoredSplit.VAL, VALIDATION, False, True),
        ("participant", "ladder", ScoredSplit.TRAIN, VALIDATION, False, False),
        ("participant", "ladder", ScoredSplit.TEST, AFTER, True, False),
        ("participant", "ladder", ScoredSplit.PRIVATE, AFTER, True, False),
        ("participant", "exact", ScoredSplit.VAL, VALIDATION, False, False),
        ("participant", "exact", ScoredSplit.PUBLIC, TEST_START, False, False),
        ("organiser", "ladder", ScoredSplit.VAL, VALIDATION, False, False),
        ("organiser", "ladder", ScoredSplit.PUBLIC, TEST_START, False, False),
        ("previewing organiser", "ladder", ScoredSplit.PUBLIC, TEST_START, False, True),
        ("superuser", "ladder", ScoredSplit.VAL, VALIDATION, False, False),
    ],
)
def test_ladder_applies_truth_table(
    challenge, people, who, feedback, split, now, published, expected
):
    challenge.feedback = feedback
    challenge.test_public_fraction = 0.3
    challenge.results_published = published
    user = people[who]
    assert policy.ladder_applies(challenge, split, user=user, now=now) is expected
    # The exact scores: where the split is visible and the Ladder does not stand between.
    exact = policy.split_visible(challenge, split, user=user) and not expected
    assert policy.exact_scores_visible(challenge, split, user=user, now=now) is exact


@pytest.mark.parametrize(
    ("who", "feedback", "split", "now", "expected"),
    [
        ("participant", "board_ladder", ScoredSplit.PUBLIC, TEST_START, True),
        ("participant", "board_ladder", ScoredSplit.VAL, VALIDATION, True),
        ("participant", "board_ladder", ScoredSplit.VAL, TEST_START, False),  # targets out
        ("participant", "ladder", ScoredSplit.PUBLIC, TEST_START, False),  # their own Ladder
        ("participant", "exact", ScoredSplit.PUBLIC, TEST_START, False),
        ("organiser", "board_ladder", ScoredSplit.PUBLIC, TEST_START, False),
        ("previewing organiser", "board_ladder", ScoredSplit.PUBLIC, TEST_START, True),
    ],
)
def test_board_ladder_applies_truth_table(challenge, people, who, feedback, split, now, expected):
    challenge.feedback = feedback
    challenge.test_public_fraction = 0.3
    user = people[who]
    assert policy.board_ladder_applies(challenge, split, user=user, now=now) is expected
    # The board's Ladder is a Ladder: the exact scores wait behind it too.
    if expected:
        assert policy.ladder_applies(challenge, split, user=user, now=now)
        assert not policy.exact_scores_visible(challenge, split, user=user, now=now)


@pytest.mark.parametrize(
    ("who", "option", "split", "published", "expected"),
    [
        ("participant", False, ScoredSplit.PUBLIC, False, True),
        ("anonymous", False, ScoredSplit.PUBLIC, False, True),
        ("participant", True, ScoredSplit.PUBLIC, False, False),  # late joiners get feedback
        ("participant", False, ScoredSplit.PUBLIC, True, False),  # published: all shown
        ("participant", False, ScoredSplit.VAL, False, False),  # the public part only
        ("organiser", False, ScoredSplit.PUBLIC, False, False),
        ("previewing organiser", False, ScoredSplit.PUBLIC, False, True),
    ],
)
def test_late_feedback_withheld_truth_table(
    challenge, people, who, option, split, published, expected
):
    challenge.late_joiners_feedback = option
    challenge.test_public_fraction = 0.3
    challenge.results_published = published
    assert policy.late_feedback_withheld(challenge, split, user=people[who]) is expected


@pytest.mark.parametrize(
    ("who", "split", "published", "expected"),
    [
        ("participant", ScoredSplit.VAL, False, True),
        ("participant", ScoredSplit.PUBLIC, False, False),  # through the Ladder only
        ("participant", ScoredSplit.PUBLIC, True, True),
        ("participant", ScoredSplit.PRIVATE, False, False),
        ("participant", ScoredSplit.PRIVATE, True, True),
        ("organiser", ScoredSplit.PUBLIC, False, True),
        ("organiser", ScoredSplit.PRIVATE, False, True),
        ("previewing organiser", ScoredSplit.PRIVATE, False, False),
    ],
)
def test_exact_scores_visible_truth_table(challenge, people, who, split, published, expected):
    challenge.feedback = "ladder"
    challenge.test_public_fraction = 0.3
    challenge.results_published = published
    now = AFTER if published else TEST_START
    assert policy.exact_scores_visible(challenge, split, user=people[who], now=now) is expected


@pytest.mark.parametrize(
    ("who", "split", "now", "published", "targets", "expected"),
    [
        # Validation slices: once the validation targets are out (the test phase).
        ("participant", ScoredSplit.VAL, VALIDATION, False, "never", False),
        ("anonymous", ScoredSplit.VAL, TEST_START + timedelta(days=1), False, "never", True),
        ("organiser", ScoredSplit.VAL, VALIDATION, False, "never", True),
        ("previewing organiser", ScoredSplit.VAL, VALIDATION, False, "never", False),
        # Test slices: published results and released test targets, both.
        ("participant", ScoredSplit.TEST, AFTER, False, "after_publication", False),
        ("participant", ScoredSplit.TEST, AFTER, True, "never", False),
        ("participant", ScoredSplit.TEST, AFTER, True, "after_publication", True),
        ("organiser", ScoredSplit.TEST, AFTER, False, "never", True),
        # The test split's parts have no slices (scoring.md §8), not even for organisers.
        ("organiser", ScoredSplit.PUBLIC, AFTER, True, "after_publication", False),
        ("participant", ScoredSplit.PRIVATE, AFTER, True, "after_publication", False),
        ("participant", ScoredSplit.TRAIN, AFTER, True, "after_publication", False),
    ],
)
def test_slices_visible_truth_table(
    challenge, people, who, split, now, published, targets, expected
):
    challenge.results_published = published
    challenge.test_targets_release = targets
    challenge.test_public_fraction = 0.3
    assert policy.slices_visible(challenge, split, user=people[who], now=now) is expected


def test_slices_wait_for_the_ladder_to_end(challenge, people):
    """Under the Ladder the validation scores are not exact until the validation targets
    are released: neither are its slices' (the two coincide by the clock)."""
    challenge.feedback = "ladder"
    user = people["participant"]
    assert not policy.slices_visible(challenge, ScoredSplit.VAL, user=user, now=VALIDATION)
    assert policy.slices_visible(challenge, ScoredSplit.VAL, user=user, now=AFTER)
