"""submissions.policy: which entries are listed (one builder per rule, with a prefix for
queries through a relation), whose they are, and who may open them: a truth table each."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import AnonymousUser

from challenge_site.submissions import policy
from challenge_site.submissions.models import Moderation, Score, Status, Submission
from challenge_site.teams.models import Membership, Team
from datasets.models import Dataset
from tests.factories import AFTER, START, VALIDATION, make_challenge, make_dataset, make_user
from tests.leaderboard.helpers import add_entry, reg

SECOND = timedelta(seconds=1)
NONE, HIDDEN, DISQUALIFIED = Moderation.NONE, Moderation.HIDDEN, Moderation.DISQUALIFIED
BUILDERS = (
    "valid_q",
    "unmoderated_q",
    "not_withdrawn_q",
    "standing_q",
    "listed_q",
    "ladder_steps_q",
    "page_public_q",
)
# (status, moderation, withdrawn) -> what each of BUILDERS says of such an entry, in
# their order (valid, unmoderated, not withdrawn, standing, listed, ladder step, page public).
STATES = {
    (Status.SCORED, NONE, False): (True, True, True, True, True, True, True),
    (Status.SCORED, NONE, True): (True, True, False, False, False, True, False),
    (Status.SCORED, HIDDEN, False): (True, False, True, False, False, False, False),
    (Status.SCORED, HIDDEN, True): (True, False, False, False, False, False, False),
    (Status.SCORED, DISQUALIFIED, False): (True, False, True, False, False, False, True),
    (Status.SCORED, DISQUALIFIED, True): (True, False, False, False, False, False, False),
    (Status.FAILED, NONE, False): (False, True, True, True, False, False, False),
    (Status.FAILED, NONE, True): (False, True, False, False, False, False, False),
    (Status.FAILED, HIDDEN, False): (False, False, True, False, False, False, False),
    (Status.INVALID, DISQUALIFIED, False): (False, False, True, False, False, False, False),
    (Status.QUEUED, NONE, False): (False, True, True, True, False, False, False),
}


@pytest.mark.parametrize("state", list(STATES), ids=lambda s: "-".join(map(str, s)))
def test_entry_state_builders_truth_table(challenge, state, ada):
    status, moderation, withdrawn = state
    dataset = Dataset.objects.create(challenge=challenge, name="gaze", task="regression")
    entry = add_entry(dataset, user=ada, val=reg(0.5, 0.4), status=status)
    Submission.objects.filter(pk=entry.pk).update(
        moderation=moderation,
        moderation_reason="" if moderation == NONE else "Hand-labelled test inputs.",
        withdrawn_at=AFTER if withdrawn else None,
    )
    for builder, expected in zip(BUILDERS, STATES[state], strict=True):
        rule = getattr(policy, builder)
        assert Submission.objects.filter(rule()).exists() is expected, builder
        # The same rule through a relation (the leaderboards' Score rows).
        assert Score.objects.filter(rule("submission__")).exists() is expected, builder


# --- Whose they are, and who may open them --------------------------------------------


@pytest.fixture
def ada(db):
    return make_user("ada", display_name="Ada")


@pytest.fixture
def world(challenge, ada, organiser):
    """ada's entries (alone), the team's (bob and cat; bob made them), a baseline."""
    bob, cat, dan = make_user("bob"), make_user("cat"), make_user("dan")
    team = Team.objects.create(challenge=challenge, name="Gaze", created=VALIDATION)
    for member in (bob, cat):
        Membership.objects.create(team=team, user=member, challenge=challenge, joined=VALIDATION)
    gaze = make_dataset(challenge, "gaze")
    entries = {
        "ada's": add_entry(gaze, user=ada, val=reg(0.5, 0.4)),
        "ada's hidden": add_entry(gaze, user=ada, val=reg(0.5, 0.4)),
        "ada's disqualified": add_entry(gaze, user=ada, val=reg(0.5, 0.4)),
        "ada's failed": add_entry(gaze, user=ada, status=Status.FAILED),
        "ada's withdrawn": add_entry(gaze, user=ada, val=reg(0.5, 0.4)),
        "team's": add_entry(gaze, user=bob, val=reg(0.5, 0.4)),
        "team's failed": add_entry(gaze, user=bob, status=Status.FAILED),
        "bob's own": add_entry(gaze, user=bob, val=reg(0.5, 0.4)),
        "baseline": add_entry(gaze, baseline=True, val=reg(0.5, 0.4)),
    }
    Submission.objects.filter(pk__in=[entries["team's"].pk, entries["team's failed"].pk]).update(
        team=team
    )
    for name, moderation in (("ada's hidden", HIDDEN), ("ada's disqualified", DISQUALIFIED)):
        Submission.objects.filter(pk=entries[name].pk).update(
            moderation=moderation, moderation_reason="Probing."
        )
    Submission.objects.filter(pk=entries["ada's withdrawn"].pk).update(withdrawn_at=AFTER)
    previewing = make_user("previewer", organiser_of=challenge)
    previewing.participant_preview = frozenset({challenge.pk})
    people = {
        "ada": ada,
        "bob": bob,
        "cat": cat,
        "dan": dan,
        "anonymous": AnonymousUser(),
        "organiser": organiser,
        "previewing organiser": previewing,
        "superuser": make_user("root", is_superuser=True),
    }
    fresh = {name: Submission.objects.get(pk=entry.pk) for name, entry in entries.items()}
    return people, fresh


ADAS = {"ada's", "ada's hidden", "ada's disqualified", "ada's failed", "ada's withdrawn"}
TEAMS = {"team's", "team's failed"}
EVERY = ADAS | TEAMS | {"bob's own", "baseline"}
PUBLIC_PAGES = {"ada's", "ada's disqualified", "team's", "bob's own", "baseline"}

OWNS = {
    "ada": ADAS,
    "bob": TEAMS | {"bob's own"},
    "cat": TEAMS,  # the team's entries, whichever member made them; not bob's own
    "dan": set(),
    "anonymous": set(),
    "organiser": set(),
    "previewing organiser": set(),
    "superuser": set(),
}


@pytest.mark.parametrize("who", list(OWNS))
def test_owns_truth_table(world, who):
    people, entries = world
    user = people[who]
    assert {name for name, entry in entries.items() if policy.owns(entry, user=user)} == OWNS[who]
    owned = set(policy.owned_submissions(user).values_list("pk", flat=True))
    assert owned == {entries[name].pk for name in OWNS[who]}
    mine = Submission.objects.filter(policy.owned_q(user), is_baseline=False)
    assert set(mine.values_list("pk", flat=True)) == owned
    # Through a relation: the owner's Score rows.
    scores = Score.objects.filter(policy.owned_q(user, "submission__"))
    assert set(scores.values_list("submission_id", flat=True)) <= owned


@pytest.mark.parametrize(
    ("who", "private", "failure_detail"),
    [
        ("ada", ADAS, set()),
        ("bob", TEAMS | {"bob's own"}, set()),
        ("cat", TEAMS, set()),
        ("dan", set(), set()),
        ("anonymous", set(), set()),
        ("organiser", EVERY, EVERY),
        ("previewing organiser", set(), set()),  # looking as a participant would
        ("superuser", EVERY, EVERY),
    ],
)
def test_private_parts_truth_table(world, who, private, failure_detail):
    people, entries = world
    user = people[who]
    seen = {name for name, entry in entries.items() if policy.can_see_private(entry, user=user)}
    assert seen == private
    detail = {
        name for name, entry in entries.items() if policy.can_see_failure_detail(entry, user=user)
    }
    assert detail == failure_detail


@pytest.mark.parametrize(
    ("who", "expected"),
    [
        ("ada", PUBLIC_PAGES | ADAS),
        ("bob", PUBLIC_PAGES | TEAMS),
        ("cat", PUBLIC_PAGES | TEAMS),
        ("dan", PUBLIC_PAGES),
        ("anonymous", PUBLIC_PAGES),
        ("organiser", EVERY),
        ("previewing organiser", EVERY),  # the admin's links to an entry still open it
        ("superuser", EVERY),
    ],
)
def test_visible_submissions_truth_table(world, who, expected):
    people, entries = world
    user = people[who]
    names = {entry.pk: name for name, entry in entries.items()}
    visible = policy.visible_submissions(user=user, now=AFTER).values_list("pk", flat=True)
    assert {names[pk] for pk in visible} == expected


@pytest.mark.parametrize("who", ["dan", "anonymous"])
def test_no_public_page_before_the_start_or_in_a_draft(world, challenge, who):
    people, entries = world
    user = people[who]
    assert not policy.visible_submissions(user=user, now=START - SECOND).exists()
    challenge.opened_at = None
    challenge.save(update_fields=["opened_at"])
    assert not policy.visible_submissions(user=user, now=AFTER).exists()


def test_private_parts_belong_to_the_owner_and_organisers(challenge, organiser):
    dataset = make_dataset(challenge, "gaze")
    participant = make_user("participant")
    submission = add_entry(dataset, user=participant, val=reg(0.5, 0.4))
    inactive = make_user("gone", organiser_of=challenge)
    inactive.is_active = False
    inactive.save()
    assert policy.can_see_private(submission, user=participant)
    assert policy.can_see_private(submission, user=organiser)
    for user in (
        make_user("other"),
        AnonymousUser(),
        inactive,
        make_user("staff", is_staff=True),
        make_user("elsewhere", organiser_of=make_challenge(slug="other", title="Other")),
    ):
        assert not policy.can_see_private(submission, user=user)
    assert not policy.can_see_failure_detail(submission, user=participant)
    assert policy.can_see_failure_detail(submission, user=organiser)
