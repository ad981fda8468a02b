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
