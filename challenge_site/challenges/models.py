from dataclasses import dataclass
from datetime import UTC, datetime

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import F, Q
from django.utils import timezone


class Phase(models.TextChoices):
    """Where a challenge is on its clock (see clock.current_phase)."""

    UPCOMING = "upcoming", "Upcoming"
    VALIDATION = "validation", "Validation phase"
    TEST = "test", "Test phase"
    POST = "post", "Post-challenge"


class TestInputsRelease(models.TextChoices):
    AT_START = "start", "From the start"
    AT_TEST_START = "test_start", "When the test phase begins"


class TestTargetsRelease(models.TextChoices):
    AFTER_PUBLICATION = "after_publication", "After the results are published"
    NEVER = "never", "Never"


class Feedback(models.TextChoices):
    """How scores are shown while a phase still gives feedback (challenge_site.ladder)."""

    EXACT = "exact", "Exact scores"
    LADDER = "ladder", "The Ladder (a score changes only on a real improvement)"
    # One ladder shared by the whole board (challenge_site.submissions.board_ladder), so
    # that many accounts learn together no more than one account would.
    BOARD_LADDER = (
        "board_ladder",
        "The board's Ladder (one shared ladder: a score is released only when it beats "
        "the board's best)",
    )


# The options that show validation and public-part scores through a Ladder.
LADDERS = (Feedback.LADDER, Feedback.BOARD_LADDER)


# The largest public part of the test set: the private part decides the ranking.
MAX_PUBLIC_FRACTION = 0.9


def format_utc(when: datetime) -> str:
    """``08 Feb 2030 23:59 UTC`` (seconds only when there are some)."""
    when = when.astimezone(UTC)
    return when.strftime("%d %b %Y %H:%M:%S UTC" if when.second else "%d %b %Y %H:%M UTC")


def publication_refusal(challenge: "Challenge", *, now: datetime) -> str | None:
    """Why the results of ``challenge`` may not be public at ``now``, or None if they may:
    never while participants can still submit to the test phase (up to the deadline)."""
    if now <= challenge.deadline:
        return f"Results can be published after the deadline, {format_utc(challenge.deadline)}."
    return None


@dataclass(frozen=True, kw_only=True)
class Audit:
    """Who changes a challenge's publication, and how; recorded as a ChallengeEvent."""

    user: object = None  # a User, or None for commands and code
    via: str = ""
    at: datetime  # the services' explicit now


class Challenge(models.Model):
    slug = models.SlugField(unique=True)
    title = models.CharField(max_length=200)
    description = models.TextField(blank=True, help_text="The overview, in Markdown.")
    rules = models.TextField(blank=True, help_text="The rules participants follow, in Markdown.")
    opened_at = models.DateTimeField(
        null=True,
        blank=True,
        editable=False,
        help_text="When the challenge left its draft; until then only its organisers see it. "
        "Opened with the action “Open challenge…”, which first lists what is missing.",
    )
    organisers = models.ManyToManyField(
        settings.AUTH_USER_MODEL,
        blank=True,
        related_name="organised_challenges",
        help_text="They manage this challenge in the admin and see its hidden scores; "
        "they need “staff status” to log in there.",
    )
    organiser_groups = models.ManyToManyField(
        "auth.Group",
        blank=True,
        related_name="organised_challenges",
        help_text="Every member of these groups is an organiser too.",
    )
    require_rules_acceptance = models.BooleanField(
        default=False,
        help_text="Participants must accept the rules (the time is recorded) before they "
        "download data or submit.",
    )
    require_approval = models.BooleanField(
        default=False,
        help_text="An organiser approves each participant before they download data or submit.",
    )
    start = models.DateTimeField(help_text="Datasets are released and validation submissions open.")
    test_start = models.DateTimeField(
        help_text="Validation targets (and test inputs, if held back) are released; "
        "the final test phase begins."
    )
    deadline = models.DateTimeField(help_text="Last moment (inclusive) of the test phase.")
    results_published = models.BooleanField(
        default=False,
        help_text="Test scores are public. Only after the deadline; publish or withdraw with "
        "the actions of the challenge list, which show what becomes public first.",
    )
    publish_results_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Publish the results automatically at this time (UTC), after the deadline; "
        "empty = only by hand (“Publish results…”). Setting it shows what becomes public "
        "first; the publication is recorded like a manual one.",
    )
    results_revised_at = models.DateTimeField(
        null=True,
        blank=True,
        editable=False,
        help_text="Last time target files changed while the results were published.",
    )
    val_daily_limit = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="Validation submissions per user and dataset per UTC day; empty = unlimited.",
    )
    test_daily_limit = models.PositiveIntegerField(
        null=True,
        blank=True,
        default=5,
        validators=[MinValueValidator(1)],
        help_text="Test submissions per user and dataset per UTC day; empty = unlimited.",
    )
    test_total_limit = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="Test submissions per user and dataset over the whole test phase; "
        "empty = no overall limit.",
    )
    test_inputs_release = models.CharField(
        max_length=16, choices=TestInputsRelease, default=TestInputsRelease.AT_TEST_START
    )
    test_targets_release = models.CharField(
        max_length=24, choices=TestTargetsRelease, default=TestTargetsRelease.NEVER
    )
    test_public_fraction = models.FloatField(
        default=0.0,
        validators=[MinValueValidator(0.0), MaxValueValidator(MAX_PUBLIC_FRACTION)],
        help_text="Share of the test examples scored at once during the test phase (the "
        "public part, a random subset fixed when the test targets are first stored and never "
        "revealed); the rest, the private part, decides the ranking at publication. "
        "0 = off: every test score waits for the results.",
    )
    final_entries = models.PositiveSmallIntegerField(
        default=2,
        validators=[MinValueValidator(1), MaxValueValidator(50)],
        help_text="Test entries per participant and dataset that count for the final "
        "ranking, chosen by the participant; without a choice, the best ones on the public "
        "part (all of them when there is no public part).",
    )
    max_team_size = models.PositiveSmallIntegerField(
        default=5,
        validators=[MinValueValidator(1), MaxValueValidator(100)],
        help_text="Most members of a team; 1 = no teams. Participants form teams until the "
        "test phase begins; a team submits as one, within one set of limits.",
    )
    feedback = models.CharField(
        max_length=16,
        choices=Feedback,
        default=Feedback.EXACT,
        help_text="How validation and public-part scores are shown before their targets are "
        "released or the results published. The Ladder (Blum & Hardt 2015) shows a "
        "participant's best only when a new entry beats it by more than its standard error, "
        "rounded to that precision, so that probing the leaderboard gains nothing. The board's "
        "Ladder does the same with one ladder for the whole board: an entry's score is "
        "released only when it beats the board's released best, so that many accounts "
        "learn together no more than one.",
    )
    late_joiners_feedback = models.BooleanField(
        default=True,
        help_text="Accounts that join after the test phase begins get public feedback. "
        "Unticked, their entries get no score on the test's public part before the results "
        "are published (they count for the final ranking only).",
    )
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-start", "slug"]
        constraints = [
            models.CheckConstraint(
                condition=Q(start__lte=F("test_start")) & Q(test_start__lt=F("deadline")),
                name="challenge_dates_in_order",
                violation_error_message="Dates must satisfy start ≤ test start < deadline.",
            ),
            models.CheckConstraint(
                condition=Q(test_public_fraction__gte=0)
                & Q(test_public_fraction__lte=MAX_PUBLIC_FRACTION),
                name="challenge_public_fraction_valid",
                violation_error_message="The public part is a share from 0 to 0.9.",
            ),
            models.CheckConstraint(
                condition=Q(feedback__in=Feedback.values), name="challenge_feedback_valid"
            ),
            # Results are never public before the deadline (publication_refusal), so a
            # scheduled publication may not be set for earlier either.
            models.CheckConstraint(
                condition=Q(publish_results_at__isnull=True)
                | Q(publish_results_at__gt=F("deadline")),
                name="challenge_publication_after_deadline",
                violation_error_message="The automatic publication must come after the deadline.",
            ),
        ]
        indexes = [
            # The home page lists every challenge newest first (ordering above).
            models.Index(F("start").desc(), "slug", name="challenge_start_desc_idx"),
        ]

    def __str__(self):
        return self.title

    @property
    def has_public_part(self) -> bool:
        """The test set is split into a public part (scored at once) and a private one."""
        return self.test_public_fraction > 0

    @property
    def is_draft(self) -> bool:
        """Not opened yet: invisible (404) to everyone but its organisers."""
        return self.opened_at is None


class EventKind(models.TextChoices):
    OPENED = "opened", "Challenge opened"
    PUBLISHED = "published", "Results published"
    WITHDRAWN = "withdrawn", "Results withdrawn"
    TARGETS_REPLACED = "targets_replaced", "Target file replaced"
    TARGETS_DELETED = "targets_deleted", "Target file deleted"


class ChallengeEvent(models.Model):
    """What happened to a challenge's results and target files: who, when, what.

    Written by the code that makes the change (challenges.services, datasets.services);
    staff read them in the admin, nobody edits them."""

    challenge = models.ForeignKey(Challenge, on_delete=models.CASCADE, related_name="events")
    kind = models.CharField(max_length=24, choices=EventKind)
    at = models.DateTimeField()
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Empty for a command (import_challenge) or code.",
    )
    username = models.CharField(
        max_length=150, blank=True, help_text="The user's name then (kept if the user goes)."
    )
    via = models.CharField(
        max_length=40, blank=True, help_text="admin action, dataset admin, import_challenge, …"
    )
    detail = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=EventKind.values), name="challengeevent_kind_valid"
            ),
        ]
        indexes = [
            # A challenge's history, newest first (the admin inline).
            models.Index(F("challenge"), F("at").desc(), name="challengeevent_recent_idx"),
        ]

    def __str__(self):
        return f"{self.challenge} · {self.get_kind_display()} · {self.at:%Y-%m-%d %H:%M}"

    @property
    def who(self) -> str:
        return self.username or self.via or "–"

    @property
    def summary(self) -> str:
        """One line of what changed, for the admin."""
        detail = self.detail or {}
        if self.kind == EventKind.OPENED:
            return "Opened with " + (", ".join(detail.get("datasets", [])) or "no dataset")
        if self.kind in (EventKind.TARGETS_REPLACED, EventKind.TARGETS_DELETED):
            text = f"{detail.get('file', '?')} ({detail.get('split', '?')} split): "
            old, new = detail.get("old_sha256", ""), detail.get("new_sha256", "")
            text += f"sha256 {old[:12]}… → {new[:12]}…" if new else f"sha256 {old[:12]}… deleted"
            if detail.get("results_revised"):
                text += "; published results revised"
            return text
        parts = []
        for dataset in detail.get("datasets", []):
            files = ", ".join(dataset.get("test_targets", [])) or "no file"
            entries, scores = dataset["test_entries"], dataset["test_scores"]
            parts.append(
                f"{dataset['name']}: {entries} test {'entry' if entries == 1 else 'entries'}, "
                f"{scores} score{'' if scores == 1 else 's'}; test targets released: {files}"
            )
        return "; ".join(parts)


class Participant(models.Model):
    """A user who joined a challenge: accepted its rules (when it asks for that) and, when
    it asks for approval, approved by an organiser. Joining is what the registration
    options check before a download or a submission; announcements reach participants."""

    challenge = models.ForeignKey(Challenge, on_delete=models.CASCADE, related_name="participants")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="participations"
    )
    joined = models.DateTimeField(default=timezone.now)
    rules_accepted_at = models.DateTimeField(null=True, blank=True)
    approved_at = models.DateTimeField(null=True, blank=True)
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )

    class Meta:
        ordering = ["challenge", "joined", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["challenge", "user"], name="participant_once_per_challenge"
            ),
        ]
        indexes = [
            # A user's standing in a challenge (every download and submission asks),
            # served by the unique constraint's index; the approval queue of a challenge:
            models.Index(fields=["challenge", "approved_at"], name="participant_approval_idx"),
        ]

    def __str__(self):
        return f"{self.user} in {self.challenge}"
