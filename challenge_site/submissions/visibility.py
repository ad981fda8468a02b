"""Who sees what of a submission, and its scores arranged for pages and the API.

- Scored submissions (and baselines) of open challenges are public: method, description,
  authors, participant and the scores of visible splits.
- Scores of the training and validation splits are visible at once; those of the test
  split only to staff until the challenge's results are published, then to everyone.
- The zip, the error report, failure messages and submissions that are not scored are
  seen only by the owner and staff.
"""

import math
from dataclasses import dataclass
from datetime import datetime

from django.core.exceptions import ObjectDoesNotExist
from django.db.models import Q, QuerySet

import scoring
from challenge_site.challenges.models import Challenge
from datasets.models import Split

from .models import Status, Submission

SPLIT_ORDER = [Split.TRAIN, Split.VAL, Split.TEST]


def visible_submissions(*, user, now: datetime) -> QuerySet[Submission]:
    submissions = Submission.objects.select_related("dataset__challenge", "user__profile")
    if user.is_staff:
        return submissions
    public = Q(status=Status.SCORED, dataset__challenge__start__lte=now)
    if user.is_authenticated:
        return submissions.filter(public | Q(user=user))
    return submissions.filter(public)


def can_see_private(submission: Submission, *, user) -> bool:
    """The zip, the errors and the failure message: owner and staff only."""
    return user.is_staff or (
        user.is_authenticated and submission.user_id is not None and submission.user_id == user.pk
    )


def split_visible(challenge: Challenge, split: str, *, user) -> bool:
    return split != Split.TEST or challenge.results_published or user.is_staff


def participant_name(submission: Submission) -> str:
    if submission.user is None:
        return ""
    try:
        name = submission.user.profile.display_name
    except ObjectDoesNotExist:
        name = ""
    return name or submission.user.get_username()


@dataclass(frozen=True)
class ScoreCell:
    loss: scoring.Loss
    value: float | None
    computed: bool  # False for a loss registered after the submission was scored

    @property
    def is_inf(self) -> bool:
        return self.value is not None and math.isinf(self.value)


@dataclass(frozen=True)
class SplitScores:
    split: Split
    visible: bool
    cells: list[ScoreCell]
    result: object  # the SplitResult, or None

    @property
    def label(self) -> str:
        return self.split.label


def score_table(submission: Submission, *, user) -> list[SplitScores]:
    """One entry per split with predictions; losses in the registry's order.

    Uses ``submission.scores`` and ``submission.split_results`` (prefetch them for lists).
    """
    challenge = submission.dataset.challenge
    stored = {(s.split, s.loss): s.value for s in submission.scores.all()}
    results = {r.split: r for r in submission.split_results.all()}
    losses = scoring.losses_for(submission.dataset.task)
    table = []
    for split in SPLIT_ORDER:
        if split not in submission.splits and split not in results:
            continue
        visible = split_visible(challenge, split, user=user)
        cells = []
        if visible and split in results:
            cells = [
                ScoreCell(loss, stored.get((split, loss.name)), (split, loss.name) in stored)
                for loss in losses
            ]
        table.append(SplitScores(split, visible, cells, results.get(split) if visible else None))
    return table


def json_value(value: float | None):
    """JSON has no infinity: "inf" (and "-inf") as strings, n/a as null."""
    if value is not None and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def api_scores(submission: Submission, *, user) -> dict:
    """{split: {loss: value or null}} for the splits the user may see."""
    return {
        str(entry.split): {
            cell.loss.name: json_value(cell.value) for cell in entry.cells if cell.computed
        }
        for entry in score_table(submission, user=user)
        if entry.visible and entry.result is not None
    }
