"""The leaderboard as the Ladder shows it (challenge_site.submissions.ladder), or the
board's Ladder (challenge_site.submissions.board_ladder, Feedback.BOARD_LADDER).

One row per participant: the score the Ladder shows them on the dataset's ranking loss,
rounded to a power of ten (never the threshold itself), and the entry that set it. No other loss, no
interval, no plot: they would give the exact scores away. Two statements per page,
whatever the number of entries: the rows through ``score_ladder_idx`` and the count of
each participant's entries.

Under the board's Ladder each participant's row shows their best released score (the
holder of the board's best first); participants none of whose entries released a score
follow, unranked, as "no released score" (in the order of their first entry), so the
board says who took part and never a digit of an unreleased score. On the test's public
part, late joiners' entries are left out where the challenge gives them no feedback
(policy.late_feedback_withheld).
"""

import math
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import AnonymousUser
from django.db.models import Count, F, Q

from challenge_site.challenges.models import Feedback
from challenge_site.challenges.policy import late_feedback_withheld
from challenge_site.submissions.display import PARTICIPANT_FIELDS, participant_label_of
from challenge_site.submissions.late_joiners import late_q
from challenge_site.submissions.models import BoardStep, Score
from challenge_site.submissions.policy import listed_q
from scoring.ladder import format_shown, format_unit

from .queries import Board

ORDER = (F("ladder_value").asc(), F("submission__created").asc(), F("submission_id").asc())
BOARD_ORDER = (F("value").asc(), F("submission__created").asc(), F("submission_id").asc())
NO_RELEASED_SCORE = "no released score"


@dataclass(frozen=True)
class LadderRow:
    rank: int | None  # None: no released score on the board's Ladder (listed last)
    submission: int
    participant: str
    method: str
    created: datetime
    shown: float | None
    precision: float | None  # the rounding unit of the shown score (a power of ten; 0: exact)
    entries: int  # the participant's listed entries on this split
    board: bool = False  # a row of the board's Ladder

    @property
    def text(self) -> str:
        """The shown score as precise as the Ladder allows: "0.23" to a unit of 0.01."""
        if self.shown is None:
            return NO_RELEASED_SCORE
        return format_shown(self.shown, self.precision or 0.0)

    @property
    def precision_text(self) -> str:
        return format_unit(self.precision)


def shared(board: Board) -> bool:
    """The board's Ladder rather than each participant's."""
    return board.dataset.challenge.feedback == Feedback.BOARD_LADDER


def feedback_name(board: Board) -> str:
    """The board's "feedback" in its JSON: "board_ladder" or "ladder"."""
    return "board_ladder" if shared(board) else "ladder"


def _ranking_scores(board: Board):
    """The listed entries' Score rows of the dataset's ranking loss on the board's split
    (without late joiners' entries where they get no public feedback)."""
    found = Score.objects.filter(
        dataset=board.dataset, split=board.split, loss=board.dataset.effective_ranking_loss
    ).filter(listed_q("submission__"))
    challenge = board.dataset.challenge
    if late_feedback_withheld(challenge, board.split, user=AnonymousUser()):
        found = found.exclude(late_q(challenge, "submission__"))
    return found


FOUND_FIELDS = (
    "submission_id",
    "submission__team_id",
    "submission__user_id",
    "submission__method",
    "submission__created",
)


def _board_found(board: Board, *, offset: int, limit: int | None) -> list[tuple]:
    """The board's Ladder: the participants' best released entries by value, then one
    row per participant without a released score (value and unit None)."""
    steps = BoardStep.objects.filter(
        listed_q("submission__"),
        board__dataset=board.dataset,
        board__split=board.split,
        current=True,
    )
    challenge = board.dataset.challenge
    if late_feedback_withheld(challenge, board.split, user=AnonymousUser()):
        steps = steps.exclude(late_q(challenge, "submission__"))
    fields = (*FOUND_FIELDS, "value", "precision")
    participant = tuple(f"submission__{name}" for name in PARTICIPANT_FIELDS)
    released = list(steps.order_by(*BOARD_ORDER).values_list(*fields, *participant))
    holders = {(row[1], None if row[1] else row[2]) for row in released}
    others, seen = [], set(holders)
    entries = (
        _ranking_scores(board)
        .filter(submission__is_baseline=False)
        .order_by("submission__created", "submission_id")
        .values_list(*FOUND_FIELDS, *participant)
    )
    for pk, team_id, user_id, method, created, *rest in entries:
        key = (team_id, None if team_id else user_id)
        if key not in seen:  # the participant's first entry stands for them
            seen.add(key)
            others.append((pk, team_id, user_id, method, created, None, None, *rest))
    every = released + others
    return every[offset : None if limit is None else offset + limit]


def rows(board: Board, *, offset: int = 0, limit: int | None = None) -> list[LadderRow]:
    if shared(board):
        return _rows(
            board, _board_found(board, offset=offset, limit=limit), offset, board_ladder=True
        )
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
    return _rows(board, found, offset, board_ladder=False)


def _rows(board: Board, found: list[tuple], offset: int, *, board_ladder: bool) -> list:
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
            rank=None if shown is None else offset + position,
            submission=pk,
            participant=participant_label_of(participant),
            method=method,
            created=created,
            shown=shown,
            precision=precision if board_ladder else (precision or 0.0),
            entries=entries.get((team_id, None if team_id else user_id), 0),
            board=board_ladder,
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
        "feedback": "board_ladder" if row.board else "ladder",
        "scores": {loss: _json_score(row)},
        # The rounding unit only: the threshold itself is a statistic of the hidden terms.
        "precision": row.precision,
        "entries": row.entries,
    }


def _json_score(row: LadderRow):
    """The shown score as JSON: a number, "inf", or null (no released score)."""
    if row.shown is None:
        return None
    return "inf" if math.isinf(row.shown) else float(row.text)


CSV_HEADER = ["rank", "participant", "method", "submission", "url", "score", "precision", "entries"]
