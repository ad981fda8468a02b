"""Whether a dataset's winner can be told apart from its runner-up (scoring.md §5), in one
sentence under its results table.

Read off the rows the table already has: the runner-up's Score row holds the 95 %
interval of its ranking loss minus the leader's (rank 1 of the test split), over the
same B paired bootstrap resamples. No query of its own.
"""

import math
from dataclasses import dataclass

from challenge_site.submissions.templatetags.submission_format import score

from .services import DatasetResults, Row


@dataclass(frozen=True)
class Separation:
    kind: str  # "ahead", "tied", "reversed", "computing"
    text: str


def _name(row: Row) -> str:
    method = f"“{row.entry.method}”"
    return f"{method} by {row.participant}" if row.participant else method


def _between(difference: tuple[float, float]) -> str:
    lower, upper = difference
    return f"between {score(lower)} and {score(upper)} (95 % interval)"


def _computing(row: Row, loss_name: str) -> bool:
    interval = row.interval(loss_name)
    return interval is None or interval.vs_leader is None


def _runner_up(winner: Row, entries: list[Row]) -> Row | None:
    """The best entry of another participant; without one in the table, the next entry."""
    others = [row for row in entries if row.participant != winner.participant]
    return others[0] if others else next(iter(entries), None)


def separation(result: DatasetResults) -> Separation | None:
    """The sentence for one dataset's table; None where there is nothing to compare (fewer
    than two scored entries, a ranking loss without intervals, no finite winning score)."""
    loss = result.ranking
    if loss.terms is None:
        return None
    ranked = [row for row in result.rows if row.rank is not None]
    entries = [row for row in ranked if not row.is_baseline]
    if not entries or ranked[0].rank != 1:
        return None
    winner = entries[0]
    value = winner.value(loss.name)
    if value is None or not math.isfinite(value):
        return None
    if ranked[0].is_baseline:
        # The stored differences are to the leader, here the baseline.
        return _behind_baseline(winner, loss.name)
    runner = _runner_up(winner, entries[1:])
    if runner is None:
        return None
    x, y = _name(winner), _name(runner)
    if _computing(runner, loss.name):
        return Separation(
            "computing",
            f"Whether {x} is ahead of the runner-up {y} is not known yet: the 95 % intervals "
            f"of the {loss.name} scores are being computed.",
        )
    difference = runner.interval(loss.name).vs_leader
    lower, upper = difference
    if lower > 0:
        return Separation(
            "ahead",
            f"{x} is ahead of the runner-up {y}: the difference in {loss.name} is "
            f"{_between(difference)}.",
        )
    if upper < 0:
        return Separation(
            "reversed",
            f"{x} ranks first, yet the runner-up {y} does better on the bootstrap resamples: "
            f"the difference in {loss.name} ({y} minus {x}) is {_between(difference)}.",
        )
    return Separation(
        "tied",
        f"{x} and {y} cannot be told apart on this test set: the difference in {loss.name} "
        f"is {_between(difference)}, which holds 0.",
    )


def _behind_baseline(winner: Row, loss_name: str) -> Separation:
    x = _name(winner)
    if _computing(winner, loss_name):
        return Separation(
            "computing",
            f"The baseline ranks first under {loss_name}; whether the best entry, {x}, can "
            "be told apart from it is not known yet: the 95 % intervals are being computed.",
        )
    difference = winner.interval(loss_name).vs_leader
    if difference[0] > 0:
        return Separation(
            "ahead",
            f"The baseline ranks first under {loss_name}, ahead of the best entry {x}: the "
            f"difference in {loss_name} is {_between(difference)}.",
        )
    if difference[1] < 0:
        return Separation(
            "reversed",
            f"The baseline ranks first under {loss_name}, yet the best entry {x} does better "
            f"on the bootstrap resamples: the difference in {loss_name} ({x} minus the "
            f"baseline) is {_between(difference)}.",
        )
    return Separation(
        "tied",
        f"The baseline ranks first under {loss_name}, but the best entry {x} cannot be told "
        f"apart from it on this test set: the difference in {loss_name} is "
        f"{_between(difference)}, which holds 0.",
    )
