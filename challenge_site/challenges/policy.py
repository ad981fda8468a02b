"""Who may see what of a challenge, and when: the rules that need no more than the
challenge itself (its organisers, dates, options and publication) and its splits.

The rules of the apps above live in their own policy modules and build on these:
``datasets.policy`` (which datasets a user may see) and ``challenge_site.submissions.policy``
(listed entries, owners, which entries a user may open). Views, templates (through the
values views compute), exports, the API, plots and the scoring pipeline ask these
predicates and QuerySet builders; none of them decides on its own. Their truth tables
are in tests/challenges/test_policy.py; the leak tests of each app check the pages.

- **Organisers** of a challenge (its ``organisers`` and the members of its
  ``organiser_groups``) see everything of that challenge, at any time, and nothing
  hidden of any other; superusers organise every challenge.
- **Challenges** start as drafts, seen (and previewed page by page) by their organisers
  alone, 404 for everyone else; once opened they are announced: everyone sees their page.
- **Datasets** open with their challenge (``start``); before that only organisers
  see them. Their **files are released by the clock** (``released_parts``); an
  unreleased file leaves no trace for participants: no size, hash, row count or date.
- **Scores** of the training and validation splits are public once their submission
  is listed; those of the **test split are hidden** until the challenge's results are
  published (organisers preview them). A hidden split also hides everything that
  depends on its targets: plots, intervals, failure causes. A challenge with a **public
  part** of the test set shows that part's scores at once; the private part, like the
  whole test split, waits for the results. Which examples are public is told to nobody.
- **The Ladder**: where a challenge asks for it, the validation scores (until the
  validation targets are released) and the public part's (until the results are
  published) reach participants only through it (``ladder_applies``): each participant's
  shown best on the ranking loss, rounded; the exact scores, other losses, intervals and
  plots of those splits wait. Organisers see the exact scores. The **board's Ladder**
  (``board_ladder_applies``) keeps one ladder for the whole board: an entry's score is
  released only when it beats the board's released best; any other entry shows that it
  released none, and nothing of its value, to everyone (its participant included).
- **Late joiners**: where a challenge gives them no public feedback
  (``late_feedback_withheld``), the entries of accounts that joined during the test
  phase show no public-part score to anyone but the organisers until publication.
- **Taking part**: downloading a challenge's data and submitting to it need what its
  registration options ask (its rules accepted, an organiser's approval), recorded on the
  user's Participant row; organisers need nothing, nor does anyone when neither is asked.
"""

from __future__ import annotations

from datetime import datetime

from django.db.models import Q, QuerySet

from .clock import current_phase
from .models import (
    LADDERS,
    Challenge,
    Feedback,
    Participant,
    Phase,
    TestInputsRelease,
    TestTargetsRelease,
)
from .splits import TEST_PARTS, Kind, ScoredSplit, Split

# Released from the start whatever the settings (so they may live in the default storage).
ALWAYS_RELEASED = frozenset(
    {
        (Split.TRAIN, Kind.INPUTS),
        (Split.TRAIN, Kind.TARGETS),
        (Split.VAL, Kind.INPUTS),
    }
)
# The split whose scores wait for the results; the others are public once listed (but
# for the test's private part, which waits too: HIDDEN_SPLITS).
HIDDEN_UNTIL_PUBLICATION = Split.TEST
HIDDEN_SPLITS = frozenset({ScoredSplit.TEST, ScoredSplit.PRIVATE})


# --- Who is asking --------------------------------------------------------------------


def is_superuser(user) -> bool:
    return bool(user.is_authenticated and user.is_active and user.is_superuser)


def organised_ids(user) -> frozenset[int]:
    """Ids of the challenges ``user`` organises, directly or through a group: one query,
    remembered on the user object (a request's user asks many times per page)."""
    if not (user.is_authenticated and user.is_active):
        return frozenset()
    cached = getattr(user, "_organised_challenge_ids", None)
    if cached is None:
        cached = frozenset(
            Challenge.objects.filter(Q(organisers=user) | Q(organiser_groups__user=user))
            .values_list("pk", flat=True)
            .distinct()
        )
        user._organised_challenge_ids = cached
    return cached


def previewing(user, challenge: Challenge | int | None) -> bool:
    """Whether ``user`` looks at ``challenge`` as a participant would (an organiser's
    choice, kept in their session by ParticipantPreviewMiddleware): no organiser's right
    applies to it then, and a draft shows as if it were open."""
    pk = challenge if isinstance(challenge, int) else getattr(challenge, "pk", None)
    return pk is not None and pk in getattr(user, "participant_preview", ())


def manages(user, challenge: Challenge | int | None) -> bool:
    """Whether ``user`` runs ``challenge`` in the admin (its console, moderation,
    approvals, exports): an organiser of it, or a superuser, previewing or not (looking at
    the site as a participant does not take the console away)."""
    if is_superuser(user):
        return True
    if challenge is None:
        return False
    return (challenge if isinstance(challenge, int) else challenge.pk) in organised_ids(user)


def may_preview(user, challenge: Challenge) -> bool:
    """Organisers of ``challenge`` may switch between their view and a participant's."""
    return manages(user, challenge)


def may_delete_dataset(user, challenge: Challenge) -> bool:
    """Deleting a dataset deletes every entry and score of it: superusers; and organisers
    while the challenge is a draft (nobody has its data yet)."""
    return is_superuser(user) or (challenge.is_draft and manages(user, challenge))


def is_organiser(user, challenge: Challenge | int | None) -> bool:
    """Whether ``user`` organises ``challenge`` (a Challenge or its id): sees all of it, at
    any time, unless looking at it as a participant (``previewing``). Superusers organise
    every challenge; ``None`` (no challenge) is theirs alone."""
    if challenge is not None and previewing(user, challenge):
        return False
    if is_superuser(user):
        return True
    if challenge is None:
        return False
    pk = challenge if isinstance(challenge, int) else challenge.pk
    return pk in organised_ids(user)


def organises_any(user) -> bool:
    """Whether ``user`` organises some challenge (the admin's console opens to them)."""
    return is_superuser(user) or bool(organised_ids(user))


def in_console(user) -> bool:
    """Staff status: the door to the admin (organising a challenge gives the rights there)."""
    return bool(user.is_authenticated and user.is_active and user.is_staff)


def may_start_challenges(user) -> bool:
    """Superusers, and staff given the "add challenge" permission: each challenge they
    start is a draft they organise."""
    return is_superuser(user) or (in_console(user) and user.has_perm("challenges.add_challenge"))


def organised_challenges(user) -> QuerySet[Challenge]:
    """The challenges ``user`` organises (all of them for superusers)."""
    if is_superuser(user):
        return Challenge.objects.all()
    return Challenge.objects.filter(pk__in=organised_ids(user))


def organised_q(user, field: str = "pk") -> Q:
    """A filter for the rows of challenges ``user`` organises, through ``field``. (Not for
    superusers: an empty Q would vanish from an OR instead of matching everything.)"""
    return Q(**{f"{field}__in": organised_ids(user)})


# --- Challenges and their files -------------------------------------------------------

# Challenges out of their draft (a lookup on Challenge; prefix it for related models).
OPENED = Q(opened_at__isnull=False)


def visible_challenges(*, user, now: datetime) -> QuerySet[Challenge]:
    """Challenges ``user`` may see at ``now``: every open one, upcoming ones included
    (announced), and the drafts they organise."""
    if is_superuser(user):
        return Challenge.objects.all()
    return Challenge.objects.filter(OPENED | organised_q(user))


def datasets_open(challenge: Challenge, *, user, now: datetime) -> bool:
    """Whether ``user`` may open the challenge's dataset pages and leaderboards."""
    opened = not challenge.is_draft or previewing(user, challenge)
    return (opened and now >= challenge.start) or is_organiser(user, challenge)


def released_parts(challenge: Challenge, *, now: datetime) -> set[tuple[Split, Kind]]:
    """The (split, kind) files a participant may download at ``now``."""
    phase = current_phase(challenge, now=now)
    if phase == Phase.UPCOMING:
        return set()
    parts = set(ALWAYS_RELEASED)
    if phase in (Phase.TEST, Phase.POST):
        parts.add((Split.VAL, Kind.TARGETS))
    if (
        phase in (Phase.TEST, Phase.POST)
        or challenge.test_inputs_release == TestInputsRelease.AT_START
    ):
        parts.add((Split.TEST, Kind.INPUTS))
    if (
        phase == Phase.POST
        and challenge.results_published
        and challenge.test_targets_release == TestTargetsRelease.AFTER_PUBLICATION
    ):
        parts.add((Split.TEST, Kind.TARGETS))
    return parts


def file_details_visible(
    challenge: Challenge, *, split: str, kind: str, user, now: datetime
) -> bool:
    """Whether ``user`` may learn anything of a dataset file (that it exists, its size,
    hash, rows or date): once released, or as an organiser. A target file's size alone
    tells much (±1 targets: size = 2n + the number of negatives)."""
    return is_organiser(user, challenge) or (split, kind) in released_parts(challenge, now=now)


def split_rows_visible(challenge: Challenge, split: str, *, user, now: datetime) -> bool:
    """Whether the number of examples of ``split`` may be shown (its inputs released)."""
    return file_details_visible(challenge, split=split, kind=Kind.INPUTS, user=user, now=now)


# --- Taking part ----------------------------------------------------------------------

# The steps a challenge's registration options ask for (the API names the missing ones).
RULES_ACCEPTANCE = "rules_acceptance"
APPROVAL = "approval"


def participation_asks(challenge: Challenge) -> tuple[str, ...]:
    """The steps ``challenge`` asks of its participants before a download or a submission."""
    asked = ()
    if challenge.require_rules_acceptance:
        asked += (RULES_ACCEPTANCE,)
    if challenge.require_approval:
        asked += (APPROVAL,)
    return asked


def participation_standing(challenge: Challenge, *, user) -> tuple[tuple[str, ...], bool]:
    """(the steps ``user`` still lacks, whether they have a Participant row): one query,
    none when the challenge asks for nothing or ``user`` organises it."""
    asked = participation_asks(challenge)
    if not asked or is_organiser(user, challenge):
        return (), False
    row = None
    if user.is_authenticated:
        row = (
            Participant.objects.filter(challenge=challenge, user=user)
            .values_list("rules_accepted_at", "approved_at")
            .first()
        )
    rules_accepted_at, approved_at = row or (None, None)
    done = {RULES_ACCEPTANCE: rules_accepted_at is not None, APPROVAL: approved_at is not None}
    return tuple(step for step in asked if not done[step]), row is not None


def participation_missing(challenge: Challenge, *, user) -> tuple[str, ...]:
    """What ``user`` still lacks to download the challenge's data or submit to it:
    RULES_ACCEPTANCE and/or APPROVAL, as its options ask; () if nothing. Organisers lack
    nothing, nor does anyone when the challenge asks for neither (joining is optional)."""
    return participation_standing(challenge, user=user)[0]


def may_take_part(challenge: Challenge, *, user) -> bool:
    """Whether ``user`` may download the challenge's data and submit to it (as far as its
    registration options go: the clock and the limits still apply)."""
    return not participation_missing(challenge, user=user)


# --- Scores ---------------------------------------------------------------------------


def scores_public(challenge: Challenge, split: str) -> bool:
    """Whether everyone may see the scores (and all that depends on them) of ``split``
    (through the Ladder, where ``ladder_applies``)."""
    if split == ScoredSplit.PUBLIC and not challenge.has_public_part:
        return challenge.results_published  # left from a public part since turned off
    return split not in HIDDEN_SPLITS or challenge.results_published


def split_visible(challenge: Challenge, split: str, *, user) -> bool:
    """Whether ``user`` may see the scores, plots and errors that depend on ``split``'s
    targets."""
    return scores_public(challenge, split) or is_organiser(user, challenge)


def public_board_visible(challenge: Challenge, *, user) -> bool:
    """Whether the test's public part has a leaderboard ``user`` may open: in a challenge
    with a public part, for everyone (empty until the test phase's entries come in)."""
    return challenge.has_public_part and split_visible(challenge, ScoredSplit.PUBLIC, user=user)


def ladder_applies(challenge: Challenge, split: str, *, user, now: datetime) -> bool:
    """Whether ``user`` sees ``split``'s scores through the Ladder at ``now``: in a
    challenge that asks for it, the validation split until its targets are released and
    the test's public part until the results are published; never for organisers."""
    if challenge.feedback not in LADDERS or is_organiser(user, challenge):
        return False
    if split == ScoredSplit.VAL:
        return (Split.VAL, Kind.TARGETS) not in released_parts(challenge, now=now)
    if split == ScoredSplit.PUBLIC:
        return not challenge.results_published
    return False


def board_ladder_applies(challenge: Challenge, split: str, *, user, now: datetime) -> bool:
    """Whether ``user`` sees ``split``'s scores through the board's Ladder (one ladder for
    the whole board, Feedback.BOARD_LADDER) rather than each participant's own: an entry
    shows its released score, or that it released none; nothing else of its value."""
    return challenge.feedback == Feedback.BOARD_LADDER and ladder_applies(
        challenge, split, user=user, now=now
    )


def late_feedback_withheld(challenge: Challenge, split: str, *, user) -> bool:
    """Whether late joiners' entries (accounts that joined during the test phase,
    submissions.late_joiners) show ``user`` no score on ``split``: the test's public part
    until the results are published, in a challenge that gives them no public feedback;
    never for organisers. Their participant included: the scores count for the final
    ranking only."""
    return (
        not challenge.late_joiners_feedback
        and split == ScoredSplit.PUBLIC
        and not challenge.results_published
        and not is_organiser(user, challenge)
    )


def exact_scores_visible(challenge: Challenge, split: str, *, user, now: datetime) -> bool:
    """Whether ``user`` may see ``split``'s exact scores, every loss, their intervals and
    the plots that depend on its targets."""
    return split_visible(challenge, split, user=user) and not ladder_applies(
        challenge, split, user=user, now=now
    )


# The splits a dataset may label with slices (scoring.md §8): never the test's parts.
SLICED_SPLITS = (ScoredSplit.VAL, ScoredSplit.TEST)


def slices_visible(challenge: Challenge, split: str, *, user, now: datetime) -> bool:
    """Whether ``user`` may learn anything of ``split``'s slices (that there are any, their
    names, their scores and intervals): organisers at any time; others once the split's
    targets are released and its exact scores are shown. Before that a slice is never
    named, counted or hinted at (a page answers an unknown and a hidden slice alike)."""
    if split not in SLICED_SPLITS:
        return False
    if is_organiser(user, challenge):
        return True
    released = (split, Kind.TARGETS) in released_parts(challenge, now=now)
    return released and exact_scores_visible(challenge, split, user=user, now=now)


def selective_visible(challenge: Challenge, split: str, *, user, now: datetime) -> bool:
    """Whether ``user`` may see a split's retention and risk–coverage curves (spec §8):
    organisers at any time; others once the targets of the split (of the whole test split
    for its parts) are released and its exact scores are shown. The curves give each
    example's error in an order the entry chooses (E(k) − E(k − 1) at every k of a small
    split, block sums of a large one): before the release they would hand out the hidden
    targets, and which test examples are public, one example at a time."""
    if is_organiser(user, challenge):
        return True
    whole = Split.TEST if split in TEST_PARTS else split
    released = (whole, Kind.TARGETS) in released_parts(challenge, now=now)
    return released and exact_scores_visible(challenge, split, user=user, now=now)


def results_visible(challenge: Challenge, *, user) -> bool:
    """The results page's tables: public once published, a preview for organisers."""
    return split_visible(challenge, HIDDEN_UNTIL_PUBLICATION, user=user)


def statistics_visible(challenge: Challenge, *, user) -> bool:
    """A challenge's statistics (counts of its test phase's uploads): the results' rule,
    organisers at any time and everyone once the results are published."""
    return results_visible(challenge, user=user)


def results_preview(challenge: Challenge, *, user) -> bool:
    """An organiser looking at results that are not public yet."""
    return results_visible(challenge, user=user) and not challenge.results_published
