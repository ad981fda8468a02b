"""Who may see what, and when: every rule of the site in one place.

Views, templates (through the values views compute here), exports, the API, plots and
the scoring pipeline ask these predicates and QuerySet helpers; none of them decides
on its own. The leak tests (tests/test_policy.py, tests/*/test_visibility.py) guard
them.

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
  plots of those splits wait. Organisers see the exact scores.
- **Listed entries** are the scored submissions (and baselines) of open challenges;
  leaderboards, results, plots and exports list nothing else.
- **Private parts** of a submission (the zip, error report, failure message, an entry
  that is not scored) belong to its owner and the organisers.
- **Participant names**: the display name, else the user name; baselines have none.
- **Taking part**: downloading a challenge's data and submitting to it need what its
  registration options ask (its rules accepted, an organiser's approval), recorded on the
  user's Participant row; organisers need nothing, nor does anyone when neither is asked.
"""

from __future__ import annotations

from datetime import datetime

from django.core.exceptions import ObjectDoesNotExist
from django.db.models import Q, QuerySet

from challenge_site.challenges.models import (
    Challenge,
    Feedback,
    Participant,
    Phase,
    TestInputsRelease,
    TestTargetsRelease,
)
from challenge_site.challenges.services import current_phase
from challenge_site.submissions.models import Moderation, Score, Status, Submission
from challenge_site.teams.models import Membership
from datasets.models import Dataset, Kind, ScoredSplit, Split

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


# The session key of the challenges an organiser looks at as a participant would.
PREVIEW_SESSION_KEY = "participant_preview"


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


def admit_to_console(user) -> None:
    """Give ``user`` the staff status that opens the admin (a new co-organiser): what
    they may see there comes from the challenges they organise, not from the status."""
    if not user.is_staff:
        user.is_staff = True
        user.save(update_fields=["is_staff"])


def may_start_challenges(user) -> bool:
    """Superusers, and staff given the "add challenge" permission: each challenge they
    start is a draft they organise."""
    return is_superuser(user) or (in_console(user) and user.has_perm("challenges.add_challenge"))


def organised_challenges(user) -> QuerySet[Challenge]:
    """The challenges ``user`` organises (all of them for superusers)."""
    if is_superuser(user):
        return Challenge.objects.all()
    return Challenge.objects.filter(pk__in=organised_ids(user))


def _organised(user, field: str = "pk") -> Q:
    """A filter for the rows of challenges ``user`` organises, through ``field``. (Not for
    superusers: an empty Q would vanish from an OR instead of matching everything.)"""
    return Q(**{f"{field}__in": organised_ids(user)})


# --- Challenges and datasets ----------------------------------------------------------

# Challenges out of their draft (a lookup on Challenge; prefix it for related models).
OPENED = Q(opened_at__isnull=False)


def visible_challenges(*, user, now: datetime) -> QuerySet[Challenge]:
    """Challenges ``user`` may see at ``now``: every open one, upcoming ones included
    (announced), and the drafts they organise."""
    if is_superuser(user):
        return Challenge.objects.all()
    return Challenge.objects.filter(OPENED | _organised(user))


def datasets_open(challenge: Challenge, *, user, now: datetime) -> bool:
    """Whether ``user`` may open the challenge's dataset pages and leaderboards."""
    opened = not challenge.is_draft or previewing(user, challenge)
    return (opened and now >= challenge.start) or is_organiser(user, challenge)


def visible_datasets(*, user, now: datetime) -> QuerySet[Dataset]:
    """Datasets of open challenges that have started; organisers also see the upcoming
    ones and the drafts of the challenges they organise."""
    datasets = Dataset.objects.select_related("challenge")
    if is_superuser(user):
        return datasets
    public = Q(challenge__opened_at__isnull=False, challenge__start__lte=now)
    return datasets.filter(public | _organised(user, "challenge"))


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


def _standing(challenge: Challenge, user) -> tuple[tuple[str, ...], bool]:
    """(the steps ``user`` still lacks, whether they have a Participant row)."""
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
    return _standing(challenge, user)[0]


def may_take_part(challenge: Challenge, *, user) -> bool:
    """Whether ``user`` may download the challenge's data and submit to it (as far as its
    registration options go: the clock and the limits still apply)."""
    return not participation_missing(challenge, user=user)


def participation_block(challenge: Challenge, *, user) -> str | None:
    """Why ``user`` may not download the challenge's data or submit to it, in words, or
    None if they may."""
    missing, joined = _standing(challenge, user)
    if not missing:
        return None
    title = challenge.title
    if not user.is_authenticated:
        asked = participation_asks(challenge)
        if asked == (RULES_ACCEPTANCE,):
            what = "its participants accept its rules"
        elif asked == (APPROVAL,):
            what = "the organisers approve each participant"
        else:
            what = "its participants accept its rules and the organisers approve each one"
        return f"Log in and join {title} first: {what}."
    if RULES_ACCEPTANCE in missing:
        then = "; the organisers then approve your participation" if APPROVAL in missing else ""
        return f"Accept the rules of {title} first{then}."
    if joined:
        return f"Your participation in {title} is waiting for the organisers' approval."
    return f"Ask to join {title} first: the organisers approve each participant."


# --- Scores ---------------------------------------------------------------------------


def scores_public(challenge: Challenge, split: str) -> bool:
    """Whether everyone may see the scores (and all that depends on them) of ``split``
    (through the Ladder, where ``ladder_applies``)."""
    if split == ScoredSplit.PUBLIC and not challenge.has_public_part:
        return challenge.results_published  # left from a public part since turned off
    return split not in HIDDEN_SPLITS or challenge.results_published


def ladder_applies(challenge: Challenge, split: str, *, user, now: datetime) -> bool:
    """Whether ``user`` sees ``split``'s scores through the Ladder at ``now``: in a
    challenge that asks for it, the validation split until its targets are released and
    the test's public part until the results are published; never for organisers."""
    if challenge.feedback != Feedback.LADDER or is_organiser(user, challenge):
        return False
    if split == ScoredSplit.VAL:
        return (Split.VAL, Kind.TARGETS) not in released_parts(challenge, now=now)
    if split == ScoredSplit.PUBLIC:
        return not challenge.results_published
    return False


def exact_scores_visible(challenge: Challenge, split: str, *, user, now: datetime) -> bool:
    """Whether ``user`` may see ``split``'s exact scores, every loss, their intervals and
    the plots that depend on its targets."""
    return split_visible(challenge, split, user=user) and not ladder_applies(
        challenge, split, user=user, now=now
    )


def split_visible(challenge: Challenge, split: str, *, user) -> bool:
    """Whether ``user`` may see the scores, plots and errors that depend on ``split``'s
    targets."""
    return scores_public(challenge, split) or is_organiser(user, challenge)


def hidden_reason(challenge: Challenge, *, split: str, user, now: datetime) -> str | None:
    """Why ``user`` may not see the scores of ``split`` at ``now``, or None if they may."""
    if split_visible(challenge, split, user=user):
        return None
    if split == ScoredSplit.PRIVATE:
        return (
            "The private part's scores decide the ranking: they are published with the "
            "results, after the deadline "
            f"({challenge.deadline:%d %b %Y, %H:%M} UTC)."
        )
    if split == ScoredSplit.PUBLIC:
        return "This challenge has no public part of the test set."
    if now <= challenge.deadline:
        return (
            "Test scores are published with the results, after the deadline "
            f"({challenge.deadline:%d %b %Y, %H:%M} UTC)."
        )
    return "Test scores are published with the results; the organisers have not published them yet."


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


# --- Submissions ----------------------------------------------------------------------

# Submissions that leaderboards, results, plots and exports list (baselines included):
# scored, neither hidden nor disqualified by the organisers (baselines never are), and not
# withdrawn by their participant.
LISTED = Q(status=Status.SCORED, moderation=Moderation.NONE, withdrawn_at__isnull=True)
# Submissions that passed validation and were scored, listed or not (the statistics'
# "valid submissions", which count moderated entries too).
VALID = Q(status=Status.SCORED)
# Submissions whose page everyone may open (in an open challenge): the listed ones, and
# the disqualified ones, whose page says why they are not ranked. Hidden and withdrawn
# ones are not.
PAGE_PUBLIC = Q(
    status=Status.SCORED,
    moderation__in=[Moderation.NONE, Moderation.DISQUALIFIED],
    withdrawn_at__isnull=True,
)


def listed_scores(scores: QuerySet[Score]) -> QuerySet[Score]:
    """Score rows of listed submissions only (the leaderboard's WHERE)."""
    return scores.filter(
        submission__status=Status.SCORED,
        submission__moderation=Moderation.NONE,
        submission__withdrawn_at__isnull=True,
    )


def page_public_scores(scores: QuerySet[Score]) -> QuerySet[Score]:
    """Score rows everyone may read once their split is public: those of listed entries
    and of disqualified ones (shown on their own pages, not ranked)."""
    return scores.filter(
        submission__status=Status.SCORED,
        submission__moderation__in=[Moderation.NONE, Moderation.DISQUALIFIED],
        submission__withdrawn_at__isnull=True,
    )


def owned_q(user, prefix: str = "") -> Q:
    """The entries ``user`` owns: those they made without a team, and their teams'
    (whoever made them). Every "my submissions" list, API and permission check goes
    through this."""
    if not user.is_authenticated:
        return Q(pk__in=[])
    teams = Membership.objects.filter(user=user).values("team_id")
    return Q(**{f"{prefix}user": user, f"{prefix}team__isnull": True}) | Q(
        **{f"{prefix}team__in": teams}
    )


def owned_submissions(user) -> QuerySet[Submission]:
    """The entries ``user`` may list as theirs (My submissions, GET /api/v1/submissions/)."""
    return Submission.objects.filter(owned_q(user), is_baseline=False)


def owns(submission: Submission, *, user) -> bool:
    """``user`` may act on the entry as its participant (final choice, withdrawal)."""
    if not user.is_authenticated or submission.is_baseline:
        return False
    if submission.team_id is not None:
        return Membership.objects.filter(team_id=submission.team_id, user=user).exists()
    return submission.user_id == user.pk


def visible_submissions(*, user, now: datetime) -> QuerySet[Submission]:
    """Submissions whose page ``user`` may open: listed ones of open challenges, their
    own, and every one for organisers."""
    submissions = Submission.objects.select_related("dataset__challenge", "user__profile", "team")
    if is_superuser(user):
        return submissions
    public = PAGE_PUBLIC & Q(
        dataset__challenge__opened_at__isnull=False, dataset__challenge__start__lte=now
    )
    if user.is_authenticated:
        return submissions.filter(public | owned_q(user) | _organised(user, "dataset__challenge"))
    return submissions.filter(public)


def can_see_private(submission: Submission, *, user) -> bool:
    """The zip, the error report and the failure message: the owner and organisers."""
    return is_organiser(user, submission.dataset.challenge) or owns(submission, user=user)


def can_see_failure_detail(submission: Submission, *, user) -> bool:
    """The cause of a run that failed on our side (it may depend on hidden targets)."""
    return is_organiser(user, submission.dataset.challenge)


# --- Names ----------------------------------------------------------------------------

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
    """How a participant is named in public: a team as its name and members, as the 2004
    tables list joint entries ("Gaze (Zadrozny, B & Langford, J)"); a user by display
    name, else user name; baselines none."""
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
