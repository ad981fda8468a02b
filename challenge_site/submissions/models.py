"""Submissions, their scores and the rows that serialise submission limits.

Invariant (services.score_submission keeps it): Score and SplitResult rows exist
exactly when the last finished scoring run succeeded, and they are written in the
same transaction as the status. While a scored submission is being rescored its
previous scores stay in place until the new ones replace them.
"""

import secrets

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.urls import reverse

from challenge_site.challenges.models import Phase
from datasets.models import Dataset, ScoredSplit

from .storage import PRIVATE_STORAGE, PrivateStorage, private_storage  # noqa: F401 - migrations name them here


class Status(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Scoring"
    SCORED = "scored", "Scored"
    INVALID = "invalid", "Invalid"
    FAILED = "failed", "Failed"


# Count against the submission limits: every upload whose files are valid, failed ones
# included (whether scoring fails may depend on a hidden target, which must not decide
# whether an upload counts). Invalid ones do not count.
ACCEPTED = (Status.QUEUED, Status.RUNNING, Status.SCORED, Status.FAILED)
# Count against the daily cap on rejected uploads (SUBMISSION_MAX_REJECTED_PER_DAY).
REJECTED = (Status.INVALID, Status.FAILED)
# Final states: the page stops refreshing; a scored or invalid one is only rescored on request.
FINAL = (Status.SCORED, Status.INVALID, Status.FAILED)


class Moderation(models.TextChoices):
    """What the organisers decided about an entry (challenge_site.submissions.moderation)."""

    NONE = "none", "Not moderated"
    HIDDEN = "hidden", "Hidden"  # off the leaderboards; its page for its owner and organisers
    DISQUALIFIED = "disqualified", "Disqualified"  # not ranked; its page says why, to everyone


class ModerationAction(models.TextChoices):
    HIDE = "hide", "Hidden"
    DISQUALIFY = "disqualify", "Disqualified"
    RESTORE = "restore", "Restored"
    RESCORE = "rescore", "Rescored"


# The actions that need a reason (it is shown on the entry's page).
REASON_REQUIRED = (ModerationAction.HIDE, ModerationAction.DISQUALIFY)


class Mark(models.TextChoices):
    """The challenge paper's marks (its Sect. 6)."""

    BEFORE = "<", "Made before the test phase"
    NONE = "", "Made during the test phase"
    AFTER = ">", "Made after the deadline"


def upload_to(submission, filename):
    """Never the participant's file name: a random one under the challenge and dataset."""
    dataset = submission.dataset
    return f"submissions/{dataset.challenge.slug}/{dataset.name}/{secrets.token_hex(16)}.zip"


class Submission(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="submissions",
        db_index=False,  # the two indexes below that start with user serve it
        help_text="Empty for a dataset's baseline.",
    )
    # The team its user was in when it was made, or joined later (teams.services): the
    # team is then the entry's participant (challenge_site.submissions.entrants).
    team = models.ForeignKey(
        "teams.Team",
        null=True,
        blank=True,
        on_delete=models.RESTRICT,
        related_name="submissions",
        db_index=False,  # submission_team_quota_idx below serves it
    )
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="submissions")
    method = models.CharField(max_length=200)
    description = models.TextField(blank=True, max_length=5000)
    authors = models.CharField(max_length=300, blank=True)
    created = models.DateTimeField()
    phase = models.CharField(max_length=16, choices=Phase, help_text="Phase when it was made.")
    mark = models.CharField(max_length=1, choices=Mark, blank=True, default=Mark.NONE)
    is_baseline = models.BooleanField(default=False)

    file = models.FileField(storage=private_storage, upload_to=upload_to, blank=True)
    original_filename = models.CharField(max_length=255, blank=True)
    file_size = models.PositiveBigIntegerField(default=0)
    splits = models.JSONField(default=list, help_text="Splits with predictions, e.g. ['val'].")

    status = models.CharField(max_length=8, choices=Status, default=Status.QUEUED)
    errors = models.JSONField(
        default=list, blank=True, help_text="Report lines 'FILE:LINE: message' of an invalid one."
    )
    failure = models.TextField(
        blank=True,
        help_text="Why scoring failed (a fault of ours), as its participant reads it: a "
        "generic message when the run had read the targets of a hidden split.",
    )
    failure_detail = models.TextField(
        blank=True, help_text="Staff only: the cause of the failure (exception, traceback)."
    )
    file_deleted_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the zip of this invalid submission was deleted "
        "(SUBMISSION_INVALID_ZIP_RETENTION_DAYS).",
    )
    attempts = models.PositiveSmallIntegerField(default=0)
    task_id = models.CharField(max_length=64, blank=True, help_text="Celery task of the run.")
    queued_at = models.DateTimeField()
    started_at = models.DateTimeField(null=True, blank=True)
    # Refreshed by the running attempt every SUBMISSION_HEARTBEAT_INTERVAL seconds
    # (heartbeat.py): a run whose beat stopped is taken over without waiting for the timeout.
    heartbeat_at = models.DateTimeField(
        null=True, blank=True, help_text="Last sign of life of the running scoring attempt."
    )
    finished_at = models.DateTimeField(null=True, blank=True)
    moderation = models.CharField(
        max_length=12,
        choices=Moderation,
        default=Moderation.NONE,
        help_text="Hidden and disqualified entries are left off leaderboards, results, plots "
        "and exports (set by the admin's moderation actions, which record each change).",
    )
    moderation_reason = models.TextField(
        blank=True,
        max_length=1000,
        help_text="Why it was hidden or disqualified, shown on its page (to everyone when "
        "disqualified; to its owner and the organisers when hidden).",
    )
    moderated_at = models.DateTimeField(
        null=True, blank=True, help_text="When its moderation last changed."
    )
    withdrawn_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When its participant withdrew it: off the leaderboards for good, still "
        "counted against the submission limits.",
    )
    # Final selections (challenge_site.submissions.finals): the participant's choice, and
    # whether the entry counts for the final ranking (kept up to date by finals.refresh).
    final = models.BooleanField(
        default=False, help_text="Chosen by its participant as one of their final entries."
    )
    in_final_ranking = models.BooleanField(
        default=True,
        help_text="Counts for the final ranking: chosen as final, or (without a choice) one "
        "of the participant's best on the public part, or any entry without a public part.",
    )
    # Probing signs for the organisers (challenge_site.submissions.probing), set when scored.
    predictions_sha256 = models.CharField(
        max_length=64, blank=True, help_text="Of the prediction files' bytes, in split order."
    )
    rows_off_mode = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Prediction rows standing out of the file's bulk (else: differing from "
        "the most common one).",
    )
    near_previous = models.FloatField(
        null=True,
        blank=True,
        help_text="Share of examples whose loss differs from the participant's previous entry.",
    )
    similar_run = models.PositiveIntegerField(
        default=0,
        help_text="Entries in a row, ending with this one, each a few-row change of one of "
        "its participant's recent entries.",
    )
    # Statistics of probing.py's flags (docs/probing.md), set when scored.
    chance_z = models.FloatField(
        null=True,
        blank=True,
        help_text="Sign-test z against the baseline on the shown split (public part if "
        "any): below 3, not better than chance.",
    )
    max_corr = models.FloatField(
        null=True,
        blank=True,
        help_text="Largest |correlation| of its terms with its participant's recent entries'.",
    )
    change_share = models.FloatField(
        null=True,
        blank=True,
        help_text="Largest share of the change from a recent entry of its participant "
        "carried by the top few rows.",
    )
    random_count = models.PositiveIntegerField(
        default=0,
        help_text="Its participant's near-chance, mutually uncorrelated entries so far, "
        "this one included.",
    )
    combined_corr = models.FloatField(
        null=True,
        blank=True,
        help_text="Correlation with the z-weighted mean of its participant's earlier "
        "near-chance entries (a vote of random vectors).",
    )
    burst = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="A new account's near-chance first entry in the test phase: such first "
        "entries within the 24 h up to it when they made a burst (0: no burst).",
    )

    class Meta:
        ordering = ["-created", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(is_baseline=True, user__isnull=True)
                | Q(is_baseline=False, user__isnull=False),
                name="submission_baseline_has_no_user",
            ),
            # Also the index behind fetching a dataset's baseline.
            models.UniqueConstraint(
                fields=["dataset"],
                condition=Q(is_baseline=True),
                name="submission_one_baseline_per_dataset",
            ),
            models.CheckConstraint(
                condition=Q(status__in=Status.values), name="submission_status_valid"
            ),
            models.CheckConstraint(condition=Q(mark__in=Mark.values), name="submission_mark_valid"),
            models.CheckConstraint(
                condition=Q(phase__in=Phase.values), name="submission_phase_valid"
            ),
            models.CheckConstraint(
                condition=Q(moderation__in=Moderation.values), name="submission_moderation_valid"
            ),
            # Baselines are never moderated; a hidden or disqualified entry says why.
            models.CheckConstraint(
                condition=Q(moderation=Moderation.NONE)
                | (Q(is_baseline=False) & ~Q(moderation_reason="")),
                name="submission_moderated_entry_has_reason",
            ),
        ]
        indexes = [
            # Submission limits: WHERE user, dataset, phase, created in one UTC day.
            models.Index(
                fields=["user", "dataset", "phase", "created"], name="submission_quota_idx"
            ),
            # "My submissions": WHERE user ORDER BY created DESC.
            models.Index(fields=["user", "-created"], name="submission_user_recent_idx"),
            # A team's entries: WHERE team, dataset, phase (limits, finals, My submissions).
            models.Index(
                fields=["team", "dataset", "phase", "created"], name="submission_team_quota_idx"
            ),
            # The sweep: WHERE status IN (queued, running) AND queued_at < cutoff.
            models.Index(
                fields=["status", "queued_at"],
                condition=Q(status__in=[Status.QUEUED, Status.RUNNING]),
                name="submission_pending_idx",
            ),
            # Probing flags: other users' entries of a dataset with the same file.
            models.Index(
                fields=["dataset", "predictions_sha256"],
                condition=~Q(predictions_sha256=""),
                name="submission_same_file_idx",
            ),
            # The admin's moderation filter: WHERE moderation IN (hidden, disqualified),
            # a few rows among all the submissions.
            models.Index(
                fields=["moderation", "dataset"],
                condition=~Q(moderation=Moderation.NONE),
                name="submission_moderated_idx",
            ),
            # Whether final selections are in force (finals.in_force, every results page
            # and final board): EXISTS WHERE dataset AND final, a few rows or none among
            # all the submissions (without it, a scan of the dataset's: 0.1 s at a million).
            models.Index(fields=["dataset"], condition=Q(final=True), name="submission_final_idx"),
            # A board's rank counts (leaderboard.queries.position): WHERE dataset AND
            # withdrawn_at IS NOT NULL, a few rows among all the submissions.
            models.Index(
                fields=["dataset"],
                condition=Q(withdrawn_at__isnull=False),
                name="submission_withdrawn_idx",
            ),
        ]

    def __str__(self):
        return f"#{self.pk} {self.method} ({self.dataset_id and self.dataset.name})"

    def get_absolute_url(self) -> str:
        return reverse("submission_detail", args=[self.pk])

    @property
    def is_final(self) -> bool:
        return self.status in FINAL


class Score(models.Model):
    """One loss of one split of one submission; value NULL means n/a, +inf is kept."""

    # The unique constraint below starts with submission, so no separate FK index.
    submission = models.ForeignKey(
        Submission, on_delete=models.CASCADE, related_name="scores", db_index=False
    )
    # A copy of submission.dataset, so the leaderboard index can start with it.
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="+", db_index=False)
    split = models.CharField(max_length=8, choices=ScoredSplit)
    # A loss name, or "LOSS@SLICE" for the loss on one slice of a validation or test split
    # (scoring.md §8: a built-in name of up to 16 characters, "@", a slice name of up to 32).
    loss = models.CharField(
        max_length=65, help_text="A name from scoring.LOSSES, or LOSS@SLICE on a slice."
    )
    value = models.FloatField(null=True, blank=True)
    # How sure the value is (scoring.md §5), written by challenge_site.leaderboard.intervals
    # after scoring; NULL while being computed, for n/a values, for losses without
    # per-example terms (lift, ece, rmsce, sce, ace) and for entries not listed. Bounds
    # may be ±inf.
    lower = models.FloatField(null=True, blank=True, help_text="95 % interval, lower end.")
    upper = models.FloatField(null=True, blank=True, help_text="95 % interval, upper end.")
    leader_lower = models.FloatField(null=True, blank=True, help_text="Entry − leader, 95 %.")
    leader_upper = models.FloatField(null=True, blank=True)
    baseline_lower = models.FloatField(null=True, blank=True, help_text="Entry − baseline, 95 %.")
    baseline_upper = models.FloatField(null=True, blank=True)
    tied_with_leader = models.BooleanField(
        null=True, blank=True, help_text="Its difference to the leader's interval holds 0."
    )
    # Among each participant's best entry under this loss (the baseline not ranked).
    rank_lower = models.PositiveIntegerField(null=True, blank=True)
    rank_upper = models.PositiveIntegerField(null=True, blank=True)
    # Heavy-tailed per-example terms (scoring.tails: Hill's tail index below 2): the
    # percentile bootstrap may then be too narrow, and the site marks the interval.
    heavy_tail = models.BooleanField(
        null=True, blank=True, help_text="Own (and rank) interval may be too narrow."
    )
    leader_heavy_tail = models.BooleanField(
        null=True, blank=True, help_text="Entry − leader interval may be too narrow."
    )
    baseline_heavy_tail = models.BooleanField(
        null=True, blank=True, help_text="Entry − baseline interval may be too narrow."
    )
    # The Ladder (challenge_site.submissions.ladder), on the ranking loss of the validation
    # split and of the test's public part: the participant's shown score after this entry,
    # the power of ten it is rounded to (scoring.ladder.rounding_unit of its setter's
    # threshold, never finer than 1/n; the threshold itself is never kept nor shown),
    # whether this entry set it, and whether it is the one whose score is shown now.
    ladder_value = models.FloatField(null=True, blank=True)
    ladder_precision = models.FloatField(null=True, blank=True)
    ladder_accepted = models.BooleanField(null=True, blank=True)
    ladder_current = models.BooleanField(default=False)

    class Meta:
        constraints = [
            # Also the index behind a submission's scores (its page, the API, my submissions).
            models.UniqueConstraint(
                fields=["submission", "split", "loss"], name="score_unique_submission_split_loss"
            ),
            models.CheckConstraint(
                condition=Q(split__in=ScoredSplit.values), name="score_split_valid"
            ),
        ]
        indexes = [
            # The leaderboard: WHERE dataset, split, loss ORDER BY value, submission
            # (ties by submission, i.e. by submission time); also "the best per participant".
            models.Index(
                fields=["dataset", "split", "loss", "value", "submission"],
                name="score_leaderboard_idx",
            ),
            # The Ladder's leaderboard: WHERE dataset, split, loss, ladder_current ORDER BY
            # ladder_value (one row per participant).
            models.Index(
                fields=["dataset", "split", "loss", "ladder_value", "submission"],
                condition=Q(ladder_current=True),
                name="score_ladder_idx",
            ),
        ]

    def __str__(self):
        return f"{self.split} {self.loss} = {self.value}"


class SplitResult(models.Model):
    """What the plots need from one scored split, stored so pages never re-evaluate."""

    submission = models.ForeignKey(
        Submission, on_delete=models.CASCADE, related_name="split_results", db_index=False
    )
    split = models.CharField(max_length=8, choices=ScoredSplit)
    filename = models.CharField(max_length=255, blank=True, help_text="Member of the zip.")
    rows = models.PositiveIntegerField()
    non_probabilistic = models.BooleanField(default=False)
    certain = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Examples of the whole prediction file of the split whose prediction claims "
        "certainty (probability 0 or 1, a class of probability 0, zero variance): one whose "
        "ruled-out outcome happens makes the log loss infinite. The test's public and private "
        "parts carry the whole test file's count. Empty for a non-probabilistic file and for "
        "a split scored before it was counted.",
    )
    plot_data = models.JSONField(default=dict)
    terms = models.CharField(
        max_length=255,
        blank=True,
        help_text="The per-example terms in the private storage (challenge_site."
        "submissions.terms); empty for a split scored before they were kept.",
    )

    class Meta:
        constraints = [
            # Also the index behind a submission's split results.
            models.UniqueConstraint(
                fields=["submission", "split"], name="splitresult_unique_submission_split"
            ),
            models.CheckConstraint(
                condition=Q(split__in=ScoredSplit.values), name="splitresult_split_valid"
            ),
        ]

    def __str__(self):
        return f"#{self.submission_id} {self.split}"


class ModerationEvent(models.Model):
    """One moderation action on one entry (hide, disqualify, restore, rescore): who, when,
    why. Written by challenge_site.submissions.moderation; read only in the admin."""

    submission = models.ForeignKey(
        Submission,
        on_delete=models.CASCADE,
        related_name="moderation_events",
        db_index=False,  # moderationevent_submission_idx starts with it
    )
    action = models.CharField(max_length=12, choices=ModerationAction)
    reason = models.TextField(blank=True, max_length=1000)
    previous = models.CharField(
        max_length=12, choices=Moderation, help_text="The entry's moderation before."
    )
    at = models.DateTimeField()
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Empty for a command or code.",
    )
    username = models.CharField(
        max_length=150, blank=True, help_text="The user's name then (kept if the user goes)."
    )

    class Meta:
        ordering = ["-at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(action__in=ModerationAction.values),
                name="moderationevent_action_valid",
            ),
            models.CheckConstraint(
                condition=Q(previous__in=Moderation.values),
                name="moderationevent_previous_valid",
            ),
            models.CheckConstraint(
                condition=~Q(action__in=REASON_REQUIRED) | ~Q(reason=""),
                name="moderationevent_reason_given",
            ),
        ]
        indexes = [
            # A submission's history, newest first (the admin inline).
            models.Index(F("submission"), F("at").desc(), name="moderationevent_submission_idx"),
            # The events list, newest first (and its date hierarchy).
            models.Index(F("at").desc(), name="moderationevent_recent_idx"),
        ]

    def __str__(self):
        return f"#{self.submission_id} {self.get_action_display().lower()} {self.at:%Y-%m-%d %H:%M}"

    @property
    def who(self) -> str:
        return self.username or "–"


class SubmissionQuota(models.Model):
    """One row per (user, dataset), locked with SELECT … FOR UPDATE while a new
    submission is counted against the limits and inserted."""

    # The unique constraint below starts with user, so no separate FK index.
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "dataset"], name="quota_unique_user_dataset")
        ]

    def __str__(self):
        return f"quota {self.user_id}/{self.dataset_id}"


class BoardLadder(models.Model):
    """The board's Ladder of one dataset and feedback split (Feedback.BOARD_LADDER,
    challenge_site.submissions.board_ladder): the row every change locks (SELECT … FOR
    UPDATE), so that two entries scored at once are put in one order; the entry holding
    the board's released best, the loss it ranks by, and the next place in the sequence."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="+")
    split = models.CharField(max_length=16, choices=ScoredSplit)
    loss = models.CharField(max_length=32, blank=True)
    holder = models.ForeignKey(
        Submission, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    next_seq = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["dataset", "split"], name="boardladder_unique"),
        ]

    def __str__(self):
        return f"board ladder {self.dataset_id}/{self.split}"


class BoardStep(models.Model):
    """One entry's step of its board's Ladder: its place in the sequence (the order the
    entries were committed under the board's lock, kept through rescoring), the exact
    score it was judged with (server side only: a rescore is noticed by it), the released
    score (None: not released, and never its value), the power of ten it is rounded to,
    and whether it is its participant's best released entry on the split."""

    board = models.ForeignKey(BoardLadder, on_delete=models.CASCADE, related_name="steps")
    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="+")
    seq = models.PositiveIntegerField()
    scored = models.FloatField(null=True, blank=True)
    value = models.FloatField(null=True, blank=True)
    precision = models.FloatField(null=True, blank=True)
    current = models.BooleanField(default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["board", "submission"], name="boardstep_unique"),
        ]
        indexes = [
            # A submission's steps (its page, the API).
            models.Index(fields=["submission"], name="boardstep_submission_idx"),
            # The board's page: its participants' best released entries by value.
            models.Index(
                fields=["board", "value"], condition=Q(current=True), name="boardstep_board_idx"
            ),
        ]

    def __str__(self):
        return f"board step {self.seq} of {self.board_id}"
