"""A submission's scores arranged for its page and the API, split by split.

Who may see which split is challenge_site.policy's to say (split_visible); this module
only lays out what it allows.
"""

import math
from dataclasses import dataclass

import scoring
from challenge_site.policy import split_visible
from datasets.models import Split

from .models import Submission

SPLIT_ORDER = [Split.TRAIN, Split.VAL, Split.TEST]


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
