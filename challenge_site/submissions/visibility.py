"""A submission's scores arranged for its page and the API, split by split.

Who may see which split is challenges.policy's to say (split_visible); this module
only lays out what it allows.
"""

import math
from dataclasses import dataclass

from django.utils import timezone

import scoring
import scoring.ladder
from challenge_site.challenges.policy import (
    board_ladder_applies,
    ladder_applies,
    late_feedback_withheld,
    slices_visible,
    split_visible,
)
from datasets.models import TEST_PARTS, ScoredSplit

from . import board_ladder, late_joiners
from .ladder import first_shown
from .models import Submission

# A slice's score is stored under "LOSS@SLICE" (evaluation.slice_key).
SLICE_SEPARATOR = "@"

SPLIT_ORDER = [
    ScoredSplit.TRAIN,
    ScoredSplit.VAL,
    ScoredSplit.TEST,
    ScoredSplit.PUBLIC,
    ScoredSplit.PRIVATE,
]


@dataclass(frozen=True)
class ScoreCell:
    loss: scoring.Loss
    value: float | None
    computed: bool  # False for a loss registered after the submission was scored

    @property
    def is_inf(self) -> bool:
        return self.value is not None and math.isinf(self.value)


@dataclass(frozen=True)
class LadderScore:
    """What the Ladder shows of one entry on one split (challenge_site.submissions.ladder)."""

    loss: scoring.Loss
    shown: float | None  # the participant's shown score after this entry; None: no part
    precision: float | None  # the shown score's rounding unit (a power of ten; 0: exact)
    accepted: bool | None  # this entry set the shown score
    first: bool = False  # … and it is the participant's first shown score (none to beat)
    board: bool = False  # the board's Ladder: ``shown`` is this entry's released score
    # Said instead of a score: not released on the board, or a late joiner's entry.
    note: str = ""

    @property
    def text(self) -> str:
        if self.shown is None:
            return self.note or "–"
        return scoring.ladder.format_shown(self.shown, self.precision or 0.0)

    @property
    def precision_text(self) -> str:
        return scoring.ladder.format_unit(self.precision)


@dataclass(frozen=True)
class SliceScores:
    """A split's losses on one of its slices (scoring.md §8), stored as "LOSS@SLICE"."""

    name: str
    cells: list[ScoreCell]


@dataclass(frozen=True)
class SplitScores:
    split: ScoredSplit
    visible: bool
    cells: list[ScoreCell]
    result: object  # the SplitResult, or None (and None under the Ladder)
    ladder: LadderScore | None = None  # set instead of cells when shown through the Ladder
    # Its slices, in order of first appearance; empty unless policy.slices_visible.
    slices: tuple[SliceScores, ...] = ()

    @property
    def label(self) -> str:
        return self.split.label

    @property
    def certain(self) -> int | None:
        """Examples of the split's whole file claiming certainty (SplitResult.certain: a
        test part's is the whole test file's); None where the split's result is not shown
        (hidden, under the Ladder), for a non-probabilistic file and for an old result."""
        return None if self.result is None else self.result.certain

    @property
    def certainty(self) -> str:
        """The page's sentence on the split's certain examples; "" when there are none
        (or the count is not shown)."""
        if not self.certain:
            return ""
        return certainty_sentence(
            self.certain,
            rows=None if self.split in TEST_PARTS else self.result.rows,
            spec=scoring.get_task(self.result.submission.dataset.task),
        )

    @property
    def decomposition(self) -> list["Decomposition"]:
        """The CORP decomposition of the split's brier and nlp (empty for regression, for a
        non-probabilistic file and for results stored before it was computed)."""
        result = self.result
        if result is None or result.non_probabilistic:
            return []
        return decomposition_of(result.plot_data, task=result.submission.dataset.task) or []


def certainty_sentence(certain: int, *, rows: int | None, spec: scoring.TaskSpec) -> str:
    """The sentence on a split's certain examples, in the task's words (TaskSpec.certain_what
    and certain_risk): "Claims certainty on 3 of 2,000 examples (probability 0 or 1): …".
    ``rows`` None for a test part, whose count is the whole test file's (a count of the
    part's own would tell which examples are in it)."""
    if rows is None:
        examples = "example" if certain == 1 else "examples"
        where = f"{certain:,} {examples} of the whole test file"
    elif certain == rows:
        where = f"all {rows:,} examples" if rows > 1 else "its one example"
    else:
        where = f"{certain:,} of {rows:,} examples"
    return f"Claims certainty on {where} ({spec.certain_what}): {spec.certain_risk}."


@dataclass(frozen=True)
class Decomposition:
    """S = MCB − DSC + UNC for one loss (spec §6); +inf as math.inf, n/a as None."""

    loss: scoring.Loss
    score: float | None
    mcb: float | None
    dsc: float | None
    unc: float | None
    # 95 % bootstrap intervals (scoring.corp_bands.decomposition_intervals) as
    # (lower, upper), None for results stored before them or where MCB is infinite.
    mcb_interval: tuple[float, float] | None = None
    dsc_interval: tuple[float, float] | None = None


def _interval(stored, name: str, part: str) -> tuple[float, float] | None:
    """A stored [lower, upper] of the decomposition's intervals; an upper bound stored
    as None (JSON) is +inf (a resample that draws a true class given probability 0)."""
    try:
        lower, upper = stored[name][part]
    except (KeyError, TypeError, ValueError):
        return None
    if lower is None:
        return None
    return float(lower), math.inf if upper is None else float(upper)


def decomposition_of(plot_data: dict, *, task: str) -> list[Decomposition] | None:
    """The stored decomposition of a split's plot data, None if it has none.

    Plot data is stored with every non-finite number as None. DSC and UNC are always
    finite, and MCB (with the score) is infinite only where a true class got probability
    0: a None MCB beside a finite DSC and UNC is +inf.
    """
    stored = plot_data.get("decomposition")
    if not isinstance(stored, dict):
        return None
    rows = []
    for name, parts in stored.items():
        loss = scoring.find_loss(task, name)
        if loss is None or not isinstance(parts, dict):
            continue
        score, mcb, dsc, unc = (parts.get(key) for key in ("score", "mcb", "dsc", "unc"))
        if mcb is None and dsc is not None and unc is not None:
            score, mcb = math.inf, math.inf
        intervals = plot_data.get("decomposition_intervals")
        mcb_interval = _interval(intervals, name, "mcb") if mcb != math.inf else None
        dsc_interval = _interval(intervals, name, "dsc")
        rows.append(Decomposition(loss, score, mcb, dsc, unc, mcb_interval, dsc_interval))
    order = scoring.losses_for(task)  # the registry's order, as in the score table
    return sorted(rows, key=lambda row: order.index(row.loss))


def score_table(submission: Submission, *, user, now=None) -> list[SplitScores]:
    """One entry per split with predictions (and the test's parts when scored on them);
    losses in the registry's order. Under the Ladder a split shows its LadderScore only.

    Uses ``submission.scores`` and ``submission.split_results`` (prefetch them for lists).
    """
    now = now or timezone.now()
    challenge = submission.dataset.challenge
    rows = list(submission.scores.all())
    stored = {(s.split, s.loss): s.value for s in rows}
    results = {r.split: r for r in submission.split_results.all()}
    losses = submission.dataset.shown_losses()  # the dataset's columns
    table = []
    for split in SPLIT_ORDER:
        if split not in submission.splits and split not in results:
            continue
        visible = split_visible(challenge, split, user=user)
        if (
            visible
            and split in results
            and (ladder := _ladder_score(submission, split, rows, user=user, now=now))
        ):
            table.append(SplitScores(split, True, [], None, ladder))
            continue
        cells, slices = [], ()
        if visible and split in results:
            cells = [
                ScoreCell(loss, stored.get((split, loss.name)), (split, loss.name) in stored)
                for loss in losses
            ]
            sliced = any(r.split == split and SLICE_SEPARATOR in r.loss for r in rows)
            if sliced and slices_visible(challenge, split, user=user, now=now):
                slices = slice_scores(rows, split, losses)
        result = results.get(split) if visible else None
        table.append(SplitScores(split, visible, cells, result, None, slices))
    return table


def _ladder_score(submission: Submission, split: str, rows, *, user, now) -> LadderScore | None:
    """What ``user`` sees of the entry's ``split`` in place of its exact scores (a late
    joiner's entry without feedback, the board's Ladder, the participant's Ladder), or
    None where the exact scores are shown."""
    challenge = submission.dataset.challenge
    ranking = submission.dataset.effective_ranking_loss
    loss = scoring.get_loss(submission.dataset.task, ranking)
    if late_feedback_withheld(challenge, split, user=user) and late_joiners.is_late(submission):
        mine = submission.user_id == getattr(user, "pk", None)
        note = late_joiners.WITHHELD if mine else late_joiners.WITHHELD_OTHERS
        return LadderScore(loss, None, None, None, note=note)
    if not ladder_applies(challenge, split, user=user, now=now):
        return None
    if board_ladder_applies(challenge, split, user=user, now=now):
        found = board_ladder.released(submission_id=submission.pk, split=split)
        if found is None:  # takes no part (its ranking loss is n/a, or it is not listed)
            return LadderScore(loss, None, None, None, board=True)
        value, precision = found
        note = board_ladder.NOT_RELEASED if value is None else ""
        return LadderScore(loss, value, precision, value is not None, board=True, note=note)
    row = next((r for r in rows if r.split == split and r.loss == ranking), None)
    return LadderScore(
        loss,
        row.ladder_value if row else None,
        row.ladder_precision if row else None,
        row.ladder_accepted if row else None,
        first=bool(row and row.ladder_accepted) and first_shown(row),
    )


def slice_scores(rows, split: str, losses: list[scoring.Loss]) -> tuple[SliceScores, ...]:
    """The split's "LOSS@SLICE" rows as one SliceScores per slice, the slices in order of
    first appearance (the order they were written in: ascending ids), the losses as the
    split's. Only called once policy.slices_visible allows it."""
    found: dict[str, dict[str, float | None]] = {}
    for row in sorted(rows, key=lambda row: row.pk):
        if row.split != split or SLICE_SEPARATOR not in row.loss:
            continue
        loss, _, name = row.loss.partition(SLICE_SEPARATOR)
        found.setdefault(name, {})[loss] = row.value
    return tuple(
        SliceScores(
            name, [ScoreCell(loss, values.get(loss.name), loss.name in values) for loss in losses]
        )
        for name, values in found.items()
    )


def json_value(value: float | None):
    """JSON has no infinity: "inf" (and "-inf") as strings, n/a as null."""
    if value is not None and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def api_scores(submission: Submission, *, user, table: list[SplitScores] | None = None) -> dict:
    """{split: {loss: value or null}} for the splits the user may see (``table``: the
    submission's score_table for ``user``, if already made)."""
    if table is None:
        table = score_table(submission, user=user)
    return {
        str(entry.split): {
            **{cell.loss.name: json_value(cell.value) for cell in entry.cells if cell.computed},
            # Each loss on each slice, "LOSS@SLICE" (scoring.md §8): only once visible.
            **{
                f"{cell.loss.name}{SLICE_SEPARATOR}{part.name}": json_value(cell.value)
                for part in entry.slices
                for cell in part.cells
                if cell.computed
            },
        }
        for entry in table
        if entry.visible and entry.result is not None
    }


def api_ladder(submission: Submission, *, user, table: list[SplitScores] | None = None) -> dict:
    """{split: {"loss", "shown", "precision", "accepted"}} for the splits the user sees
    through the Ladder (their exact scores are left out of ``scores``)."""
    if table is None:
        table = score_table(submission, user=user)
    return {
        str(entry.split): {
            "loss": entry.ladder.loss.name,
            "shown": None if entry.ladder.shown is None else json_value(entry.ladder.shown),
            # The rounding unit only: the threshold is a statistic of the hidden terms.
            "precision": entry.ladder.precision,
            "accepted": entry.ladder.accepted,
            # "board" (the board's Ladder: shown is this entry's released score) or
            # "participant" (the participant's own Ladder).
            "ladder": "board" if entry.ladder.board else "participant",
            # Why there is no score: not released on the board, or a late joiner's entry.
            "note": entry.ladder.note,
        }
        for entry in table
        if entry.ladder is not None
    }


def api_certain(submission: Submission, *, user, table: list[SplitScores] | None = None) -> dict:
    """{split: count or null} for the splits whose exact scores the user sees (the rule
    of :func:`api_scores`): the examples of the split's whole file whose prediction claims
    certainty (a test part: the whole test file's count); null for a non-probabilistic
    file and for a split scored before it was counted."""
    if table is None:
        table = score_table(submission, user=user)
    return {
        str(entry.split): entry.certain
        for entry in table
        if entry.visible and entry.result is not None
    }


def api_decomposition(submission: Submission, *, user) -> dict:
    """{split: {loss: {"mcb", "dsc", "unc"}}} for the classification splits whose scores
    the user may see (the rule of :func:`api_scores`); a loss is null where it is n/a (a
    non-probabilistic file), a split without a stored decomposition is left out."""
    out = {}
    for entry in score_table(submission, user=user):
        if not (entry.visible and entry.result is not None):
            continue
        rows = decomposition_of(entry.result.plot_data, task=submission.dataset.task)
        if rows is None:
            continue
        out[str(entry.split)] = {
            row.loss.name: None
            if entry.result.non_probabilistic
            else {key: json_value(getattr(row, key)) for key in ("mcb", "dsc", "unc")}
            for row in rows
        }
    return out
