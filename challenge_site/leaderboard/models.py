"""Bookkeeping of the bootstrap intervals of each dataset split (interval_runs.py).

The intervals themselves live on the Score rows (submissions.models.Score.lower …), so
that a leaderboard page reads them with the scores, in the same queries.
"""

from django.db import models
from django.db.models import Q

from datasets.models import Dataset
from datasets.models import ScoredSplit as Split


class IntervalRun(models.Model):
    """One row per (dataset, split): what was asked for, and what was computed.

    ``requested`` counts the requests (a scored, rescored or moderated entry); a run
    computes with the count it read when it started and stores it in ``computed``, so
    requests that arrive during a run start another one after it (the debounce).
    """

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="+")
    split = models.CharField(max_length=8, choices=Split)
    requested = models.PositiveBigIntegerField(default=0)
    computed = models.PositiveBigIntegerField(default=0)
    queued = models.BooleanField(
        default=False, help_text="A run is on its way (sent, not started): no other is sent."
    )
    running_since = models.DateTimeField(null=True, blank=True)
    requested_at = models.DateTimeField(null=True, blank=True)
    computed_at = models.DateTimeField(null=True, blank=True)
    seconds = models.FloatField(null=True, blank=True, help_text="How long the last run took.")
    entries = models.PositiveIntegerField(default=0, help_text="Entries of the last run.")
    resampled = models.CharField(
        max_length=255,
        blank=True,
        help_text="Private file of every listed entry's losses on the resamples, keyed by "
        "its terms file: a run resamples only the entries it has not seen.",
    )

    class Meta:
        constraints = [
            # Also the index behind finding a split's row.
            models.UniqueConstraint(fields=["dataset", "split"], name="intervalrun_unique_split"),
            models.CheckConstraint(
                condition=Q(split__in=Split.values), name="intervalrun_split_valid"
            ),
        ]
        indexes = [
            # The sweep: WHERE requested > computed (the few splits with work left).
            models.Index(
                fields=["requested_at"],
                condition=Q(requested__gt=models.F("computed")),
                name="intervalrun_behind_idx",
            ),
        ]

    def __str__(self):
        return f"intervals of {self.dataset_id}/{self.split}"

    @property
    def pending(self) -> bool:
        return self.requested > self.computed


class BestEntry(models.Model):
    """Each participant's best listed entry per split and sort loss (the "best per
    participant" board), kept by challenge_site.leaderboard.best inside every transaction
    that changes a participant's listed entries, under the participant's lock.

    ``final`` rows pick among the entries counting for the final ranking only (final
    boards); ``participant`` is "t<team id>", "u<user id>", or "" for entries with
    neither (the baseline), as entrants.partition groups them.
    """

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="+", db_index=False)
    split = models.CharField(max_length=8, choices=Split)
    # A loss or a slice's "LOSS@SLICE" (Score.loss's length).
    loss = models.CharField(max_length=65)
    final = models.BooleanField(default=False)
    participant = models.CharField(max_length=24)
    submission = models.ForeignKey(
        "submissions.Submission", on_delete=models.CASCADE, related_name="+"
    )
    value = models.FloatField(null=True, blank=True)
    created = models.DateTimeField(help_text="The submission's, for the board's order.")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["dataset", "split", "loss", "final", "participant"],
                name="bestentry_unique_participant",
            ),
        ]
        indexes = [
            # The board: WHERE dataset, split, loss, final ORDER BY value, created,
            # submission; keyset pages start inside it.
            models.Index(
                fields=["dataset", "split", "loss", "final", "value", "created", "submission"],
                name="bestentry_board_idx",
            ),
        ]

    def __str__(self):
        return f"best {self.split} {self.loss} of {self.participant or 'baseline'}"


class BoardPlot(models.Model):
    """One loss-against-loss plot (plots.py) of a dataset split, drawn by a worker
    (plot_drawings.py): the latest finished drawing and what is asked of the next one.

    ``ranking`` and ``point`` are Score.loss keys ("nlp", or "nlp@SLICE" on a slice).
    ``requested`` is the highest dataset generation a drawing was asked for, ``drawn`` the
    generation the finished drawing read (``drawn_at`` None: none yet); requests that arrive during a
    drawing raise ``requested`` and start one more drawing after it.
    """

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="+", db_index=False)
    split = models.CharField(max_length=8, choices=Split)
    ranking = models.CharField(max_length=65)
    point = models.CharField(max_length=65)
    requested = models.PositiveBigIntegerField(default=0)
    drawn = models.PositiveBigIntegerField(default=0)
    queued = models.BooleanField(
        default=False, help_text="A drawing is on its way (sent, not started)."
    )
    requested_at = models.DateTimeField(null=True, blank=True)
    drawing_since = models.DateTimeField(null=True, blank=True)
    drawn_at = models.DateTimeField(null=True, blank=True)
    seconds = models.FloatField(null=True, blank=True, help_text="How long the last drawing took.")
    entries = models.PositiveIntegerField(default=0, help_text="Entries drawn.")
    left_out = models.PositiveIntegerField(
        default=0, help_text="Entries not drawn: an infinite or n/a value of either loss."
    )
    svg = models.TextField(blank=True, help_text="The finished drawing (empty: none yet).")

    class Meta:
        constraints = [
            # Also the index behind the page's and the plot view's read of one plot, and
            # a bump's "every plot of the dataset" (its leading column).
            models.UniqueConstraint(
                fields=["dataset", "split", "ranking", "point"], name="boardplot_unique_plot"
            ),
            models.CheckConstraint(
                condition=Q(split__in=Split.values), name="boardplot_split_valid"
            ),
        ]
        indexes = [
            # The sweep: WHERE requested > drawn OR drawn_at IS NULL (plot_drawings.BEHIND:
            # the few plots with a drawing left to do).
            models.Index(
                fields=["requested_at"],
                condition=Q(requested__gt=models.F("drawn")) | Q(drawn_at__isnull=True),
                name="boardplot_behind_idx",
            ),
        ]

    def __str__(self):
        return f"plot {self.ranking} against {self.point} of {self.dataset_id}/{self.split}"


class BoardExport(models.Model):
    """A whole board as one file (CSV or JSON), built by a worker (export_files.py).

    One row per board a URL can name (dataset, split, slice, sort, view, final ranking)
    and format, and per audience: who may read it. The content depends on no viewer, but
    a file built while the board was open to the organisers only (test scores before
    publication, the exact board behind the Ladder, a slice not yet released) is keyed
    apart, so no later change of the rules can serve it to anyone else.

    ``requested`` and ``built`` are board versions (export_files.version): a file is
    served only while its ``built`` is the board's current version.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "being prepared"
        BUILDING = "building", "being built"
        READY = "ready", "ready"
        FAILED = "failed", "failed"

    class Format(models.TextChoices):
        CSV = "csv", "CSV"
        JSON = "json", "JSON"

    class Audience(models.TextChoices):
        PUBLIC = "public", "everyone"
        ORGANISERS = "organisers", "the organisers"

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="+", db_index=False)
    split = models.CharField(max_length=8, choices=Split)
    slice = models.CharField(max_length=64, blank=True)
    sort = models.CharField(max_length=32)
    best = models.BooleanField(default=False)
    final = models.BooleanField(default=False)
    format = models.CharField(max_length=4, choices=Format)
    audience = models.CharField(max_length=10, choices=Audience)
    requested = models.PositiveBigIntegerField(default=0, help_text="The version asked for.")
    built = models.PositiveBigIntegerField(null=True, blank=True, help_text="The file's version.")
    status = models.CharField(max_length=8, choices=Status, default=Status.QUEUED)
    requested_at = models.DateTimeField(null=True, blank=True)
    building_since = models.DateTimeField(null=True, blank=True)
    file = models.CharField(max_length=255, blank=True, help_text="Name in the private storage.")
    rows = models.PositiveBigIntegerField(default=0)
    bytes = models.PositiveBigIntegerField(default=0)
    sha256 = models.CharField(max_length=64, blank=True)
    built_at = models.DateTimeField(null=True, blank=True)
    seconds = models.FloatField(null=True, blank=True, help_text="How long the last build took.")
    error = models.TextField(blank=True, help_text="Why the last build failed.")

    class Meta:
        constraints = [
            # Also the index behind finding a board's row (the download's one query).
            models.UniqueConstraint(
                fields=["dataset", "split", "slice", "sort", "best", "final", "format", "audience"],
                name="boardexport_unique_board",
            ),
        ]
        indexes = [
            # The sweep: WHERE status IN (queued, building) (the few rows with work left).
            models.Index(
                fields=["requested_at"],
                condition=Q(status__in=["queued", "building"]),
                name="boardexport_pending_idx",
            ),
        ]

    def __str__(self):
        return f"{self.format} export of {self.dataset_id}/{self.split} {self.sort}"


class StatisticsSnapshot(models.Model):
    """A challenge's statistics page (statistics.py) and its four drawings, computed by a
    worker (statistics_snapshots.py): the latest finished computation and what is asked of
    the next one.

    ``requested`` counts the requests (a change of a dataset's listed scores, a page that
    found the snapshot missing or older than statistics_snapshots.STALE_AFTER); a
    computation stores the count it read when it started in ``computed``, so requests
    that arrive during it start one more after it. ``numbers`` are the page's tables
    (statistics_snapshots.dump); the drawings are SVG text (empty: none yet).
    """

    challenge = models.OneToOneField(
        "challenges.Challenge", on_delete=models.CASCADE, related_name="+"
    )
    requested = models.PositiveBigIntegerField(default=0)
    computed = models.PositiveBigIntegerField(default=0)
    queued = models.BooleanField(
        default=False, help_text="A computation is on its way (sent, not started)."
    )
    requested_at = models.DateTimeField(null=True, blank=True)
    computing_since = models.DateTimeField(null=True, blank=True)
    computed_at = models.DateTimeField(null=True, blank=True)
    seconds = models.FloatField(
        null=True, blank=True, help_text="How long the last computation took."
    )
    numbers = models.JSONField(default=dict, blank=True, help_text="The page's tables.")
    daily_svg = models.TextField(blank=True)
    datasets_svg = models.TextField(blank=True)
    outcomes_svg = models.TextField(blank=True)
    turnaround_svg = models.TextField(blank=True)

    class Meta:
        indexes = [
            # The sweep: WHERE requested > computed OR computed_at IS NULL (the few
            # challenges with a computation left to do).
            models.Index(
                fields=["requested_at"],
                condition=Q(requested__gt=models.F("computed")) | Q(computed_at__isnull=True),
                name="statisticssnapshot_behind_idx",
            ),
        ]

    def __str__(self):
        return f"statistics of challenge {self.challenge_id}"
