"""The leaderboard as the Ladder shows it (challenge_site.submissions.ladder).

One row per participant: the score the Ladder shows them on the dataset's ranking loss,
rounded to a power of ten (never the threshold itself), and the entry that set it. No other loss, no
interval, no plot: they would give the exact scores away. Two statements per page,
whatever the number of entries: the rows through ``score_ladder_idx`` and the count of
each participant's entries.
"""

import math
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, F

import scoring
from challenge_site.policy import PARTICIPANT_FIELDS, listed_scores, participant_label
from challenge_site.submissions.models import Score, Submission
from scoring.ladder import decimals

from .queries import Board

ORDER = (F("ladder_value").asc(), F("submission__created").asc(), F("submission_id").asc())


@dataclass(frozen=True)
class LadderRow:
    rank: int
    submission: int
    participant: str
    method: str
    created: datetime
    shown: float
    precision: float  # the rounding unit of the shown score (a power of ten; 0: exact)
    entries: int  # the participant's listed entries on this split

    @property
    def text(self) -> str:
        """The shown score as precise as the Ladder allows: "0.23" to a unit of 0.01."""
        return format_shown(self.shown, self.precision)

    @property
    def precision_text(self) -> str:
        return unit_text(self.precision)


def unit_text(unit: float | None) -> str:
    """The rounding unit as people read it: "0.01"; "exact" for 0."""
    if unit is None:
        return "–"
    return "exact" if unit == 0 else f"{unit:g}"


def format_shown(value: float, precision: float) -> str:
    """``value`` with the decimals of its rounding unit ``precision`` (0: exact)."""
    if math.isinf(value):
        return "∞"
    places = decimals(precision) if precision else None
    if places is None:
        return f"{value:.6g}"
    return f"{value:.{max(places, 0)}f}"


def ranking_loss(board: Board) -> scoring.Loss | None:
    return scoring.LOSSES.get(board.dataset.effective_ranking_loss)


def _scores(board: Board):
    loss = ranking_loss(board)
    return listed_scores(
        Score.objects.filter(
            dataset=board.dataset,
            split=board.split,
            loss=loss.name if loss else "",
            ladder_current=True,
            submission__is_baseline=False,
        )
    )


def rows(board: Board, *, offset: int = 0, limit: int | None = None) -> list[LadderRow]:
    found = list(
        _scores(board)
        .order_by(*ORDER)
        .values_list(
            "submission_id",
            "submission__user_id",
            "submission__method",
            "submission__created",
            "ladder_value",
            "ladder_precision",
            *(f"submission__{name}" for name in PARTICIPANT_FIELDS),
        )[offset : None if limit is None else offset + limit]
    )
    users = {row[1] for row in found}
    counts = dict(
        listed_scores(
            Score.objects.filter(
                dataset=board.dataset,
                split=board.split,
                loss=ranking_loss(board).name if ranking_loss(board) else "",
                submission__user_id__in=users,
            )
        )
        .values_list("submission__user_id")
        .annotate(n=Count("id"))
        .order_by()
    )
    return [
        LadderRow(
            rank=offset + position,
            submission=pk,
            participant=participant_label(
                is_baseline=is_baseline, username=username, display_name=display
            ),
            method=method,
            created=created,
            shown=shown,
            precision=precision or 0.0,
            entries=counts.get(user_id, 0),
        )
        for position, (
            pk,
            user_id,
            method,
            created,
            shown,
            precision,
            is_baseline,
            username,
            display,
        ) in enumerate(found, start=1)
    ]


def iter_rows(board: Board, *, chunk: int = 500) -> Iterator[LadderRow]:
    offset = 0
    while True:
        found = rows(board, offset=offset, limit=chunk)
        yield from found
        if len(found) < chunk:
            return
        offset += chunk


def shown_for(submission: Submission, *, split: str) -> Score | None:
    """The ranking loss's Score row of ``submission`` on ``split`` (ladder fields set)."""
    loss = submission.dataset.effective_ranking_loss
    return next((s for s in submission.scores.all() if s.split == split and s.loss == loss), None)


def json_row(row: LadderRow, *, url: str, loss: str) -> dict:
    return {
        "rank": row.rank,
        "submission": row.submission,
        "url": url,
        "participant": row.participant,
        "method": row.method,
        "created": row.created.isoformat(),
        "feedback": "ladder",
        "scores": {loss: "inf" if math.isinf(row.shown) else float(row.text)},
        # The rounding unit only: the threshold itself is a statistic of the hidden terms.
        "precision": row.precision,
        "entries": row.entries,
    }


CSV_HEADER = ["rank", "participant", "method", "submission", "url", "score", "precision", "entries"]
