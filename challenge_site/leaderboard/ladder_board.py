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

from django.db.models import Count, F, Q

from challenge_site.submissions.display import PARTICIPANT_FIELDS, participant_label_of
from challenge_site.submissions.models import Score
from challenge_site.submissions.policy import listed_q
from scoring.ladder import format_shown, format_unit

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
        return format_unit(self.precision)


def _ranking_scores(board: Board):
    """The listed entries' Score rows of the dataset's ranking loss on the board's split."""
    return Score.objects.filter(
        dataset=board.dataset, split=board.split, loss=board.dataset.effective_ranking_loss
    ).filter(listed_q("submission__"))


def rows(board: Board, *, offset: int = 0, limit: int | None = None) -> list[LadderRow]:
    found = list(
        _ranking_scores(board)
        .filter(ladder_current=True, submission__is_baseline=False)
        .order_by(*ORDER)
        .values_list(
            "submission_id",
            "submission__team_id",
            "submission__user_id",
            "submission__method",
            "submission__created",
            "ladder_value",
            "ladder_precision",
            *(f"submission__{name}" for name in PARTICIPANT_FIELDS),
        )[offset : None if limit is None else offset + limit]
    )
    # Entries per participant: a team's by team, a user's without one by user.
    teams = {row[1] for row in found if row[1] is not None}
    users = {row[2] for row in found if row[1] is None}
    entries = {}
    for team_id, user_id, n in (
        _ranking_scores(board)
        .filter(Q(submission__team_id__in=teams) | Q(submission__user_id__in=users))
        .values_list("submission__team_id", "submission__user_id")
        .annotate(n=Count("id"))
        .order_by()
    ):
        key = (team_id, None if team_id else user_id)
        entries[key] = entries.get(key, 0) + n
    return [
        LadderRow(
            rank=offset + position,
            submission=pk,
            participant=participant_label_of(participant),
            method=method,
            created=created,
            shown=shown,
            precision=precision or 0.0,
            entries=entries.get((team_id, None if team_id else user_id), 0),
        )
        for position, (
            pk,
            team_id,
            user_id,
            method,
            created,
            shown,
            precision,
            *participant,
        ) in enumerate(found, start=1)
    ]


def page(board: Board, *, number: int, size: int) -> tuple[list[LadderRow], bool]:
    """Page ``number`` of the board, and whether another follows."""
    found = rows(board, offset=(number - 1) * size, limit=size + 1)
    return found[:size], len(found) > size


def iter_rows(board: Board, *, chunk: int = 500) -> Iterator[LadderRow]:
    offset = 0
    while True:
        found = rows(board, offset=offset, limit=chunk)
        yield from found
        if len(found) < chunk:
            return
        offset += chunk


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
