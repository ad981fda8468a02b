"""Final selections: which test entries of a participant count for the final ranking.

In the test phase each participant marks up to ``Challenge.final_entries`` (K) of their
test entries per dataset as final. The final ranking (the test split's, or the private
part's when the challenge has a public part) takes each participant's best entry among
those that count: the chosen ones; without a choice, the K best on the public part;
without a public part either, every test entry (as in 2004). ``in_final_ranking`` keeps
that answer on each entry, refreshed whenever an entry, a choice or a public score
changes; it never depends on a hidden score.
"""

from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.db.models import F

from challenge_site.challenges.clock import current_phase
from challenge_site.challenges.models import Phase
from datasets.models import Dataset, ScoredSplit

from . import signals
from .entrants import Entrant, any_of_q, of_rows
from .models import Moderation, Score, Status, Submission
from .policy import listed_q, not_withdrawn_q, standing_q


class SelectionError(Exception):
    """Why a final selection was refused, in words for the participant."""


def in_force(dataset: Dataset) -> bool:
    """Whether the dataset's test ranking follows final selections: its challenge has a
    public part, or some participant chose final entries."""
    if dataset.challenge.has_public_part:
        return True
    return Submission.objects.filter(dataset=dataset, final=True).exists()


def _test_entries(dataset: Dataset, entrant: Entrant):
    return Submission.objects.filter(
        entrant.q(), dataset=dataset, is_baseline=False, phase=Phase.TEST
    )


def _chosen(dataset: Dataset, entrant: Entrant):
    """The participant's final entries that stand: chosen, and neither hidden, disqualified
    nor withdrawn (such an entry neither counts nor takes up one of the K places)."""
    return _test_entries(dataset, entrant).filter(standing_q(), final=True)


def counted_ids(*, dataset: Dataset, entrant: Entrant) -> set[int]:
    """Ids of the participant's entries that count for the final ranking."""
    return counted_ids_many(dataset=dataset, entrants=[entrant])[entrant]


def counted_ids_many(*, dataset: Dataset, entrants) -> dict[Entrant, set[int]]:
    """``counted_ids`` of several participants: the chosen entries, and then every test
    entry (no public part), read in one query each for them all; the K best on the
    public part of those who chose none, one query each."""
    entrants = set(entrants)
    tests = Submission.objects.filter(
        any_of_q(entrants), dataset=dataset, is_baseline=False, phase=Phase.TEST
    )
    counted: dict[Entrant, set[int]] = {entrant: set() for entrant in entrants}
    for pk, *owner in tests.filter(standing_q(), final=True).values_list(
        "pk", "team_id", "user_id"
    ):
        counted[of_rows(owner)].add(pk)
    unchosen = {entrant for entrant, chosen in counted.items() if not chosen}
    if not unchosen:
        return counted
    if not dataset.challenge.has_public_part:
        rows = tests.filter(not_withdrawn_q()).values_list("pk", "team_id", "user_id")
        for pk, *owner in rows:
            entrant = of_rows(owner)
            if entrant in unchosen:
                counted[entrant].add(pk)
        return counted
    for entrant in unchosen:
        entries = _test_entries(dataset, entrant).filter(not_withdrawn_q())
        best = (
            Score.objects.filter(
                submission__in=entries,
                split=ScoredSplit.PUBLIC,
                loss=dataset.effective_ranking_loss,
                value__isnull=False,
            )
            .filter(listed_q("submission__"))
            .order_by(F("value").asc(), "submission__created", "submission_id")
            .values_list("submission_id", flat=True)
        )
        counted[entrant] = set(best[: dataset.challenge.final_entries])
    return counted


def refresh(*, dataset: Dataset, entrant: Entrant) -> None:
    """Set ``in_final_ranking`` on every entry of the participant in the dataset."""
    refresh_many(dataset=dataset, entrants=[entrant])


def refresh_many(*, dataset: Dataset, entrants) -> None:
    """``refresh`` for several participants (a batch of scoring runs): what counts is
    read for them all (``counted_ids_many``), then set in two UPDATEs."""
    if not entrants:
        return
    counted = set().union(*counted_ids_many(dataset=dataset, entrants=entrants).values())
    entries = Submission.objects.filter(any_of_q(entrants), dataset=dataset, is_baseline=False)
    entries.filter(pk__in=counted).exclude(in_final_ranking=True).update(in_final_ranking=True)
    entries.exclude(pk__in=counted).exclude(in_final_ranking=False).update(in_final_ranking=False)


def refresh_dataset(*, dataset: Dataset) -> None:
    """Every participant's final entries (K or the ranking loss changed), and the kept
    best-per-participant rows of the final boards with them."""
    pairs = (
        Submission.objects.filter(dataset=dataset, is_baseline=False)
        .values_list("team_id", "user_id")
        .distinct()
    )
    for entrant in {of_rows(pair) for pair in pairs}:
        refresh(dataset=dataset, entrant=entrant)
        _final_boards_follow(dataset=dataset, entrant=entrant, bump=False)
    # Once for the whole dataset: a new K or ranking loss changes its final boards.
    signals.boards_stale.send(sender=Dataset, dataset_id=dataset.pk)


def _final_boards_follow(*, dataset: Dataset, entrant: Entrant, bump: bool = True) -> None:
    """After ``refresh`` outside standings.entries_changed: the participant's kept best
    rows of the final boards (the leaderboard's, final=True) follow ``in_final_ranking``,
    and, with ``bump``, the dataset's cached plots and counts go stale (the receivers of
    ``signals.listing_changed``)."""
    signals.listing_changed.send(sender=Dataset, dataset=dataset, entrant=entrant, bump=bump)


# --- The participant's choice ---------------------------------------------------------


def selectable(submission: Submission, *, now: datetime) -> bool:
    """Whether the entry's owner may mark it as final now: a test-phase entry whose files
    are valid (a failed one may be rescored), not moderated, before the deadline. Any
    final entry may be unmarked during the test phase."""
    challenge = submission.dataset.challenge
    return (
        not submission.is_baseline
        and submission.phase == Phase.TEST
        and submission.status != Status.INVALID
        and submission.moderation == Moderation.NONE
        and submission.withdrawn_at is None
        and current_phase(challenge, now=now) == Phase.TEST
    )


@dataclass(frozen=True)
class Selection:
    chosen: list[int]  # the participant's final entries, oldest first
    limit: int


def selection(*, dataset: Dataset, entrant: Entrant) -> Selection:
    chosen = list(_chosen(dataset, entrant).order_by("created", "pk").values_list("pk", flat=True))
    return Selection(chosen, dataset.challenge.final_entries)


def choose(*, submission: Submission, final: bool, now: datetime) -> None:
    """Mark (``final``) or unmark the entry as one of its owner's final entries.

    SelectionError when the entry may not be chosen now, or when K are chosen already
    (the participant unmarks one first: nothing is unmarked behind their back)."""
    dataset = submission.dataset
    with transaction.atomic():
        entrant = Entrant.of(submission)
        entrant.lock(dataset_id=dataset.pk)
        submission = Submission.objects.select_related("dataset__challenge").get(pk=submission.pk)
        if current_phase(dataset.challenge, now=now) != Phase.TEST:
            raise SelectionError("Final entries are chosen during the test phase only.")
        if final and not selectable(submission, now=now):
            raise SelectionError(
                "Only your valid test-phase entries that are not moderated can be final."
            )
        if submission.final == final:
            return
        if final:
            limit = dataset.challenge.final_entries
            chosen = _chosen(dataset, entrant).count()
            if chosen >= limit:
                raise SelectionError(
                    f"You have chosen {chosen} final entries for {dataset.name}, the most "
                    f"this challenge allows ({limit}): unmark one first."
                )
        submission.final = final
        submission.save(update_fields=["final"])
        refresh(dataset=dataset, entrant=entrant)
        _final_boards_follow(dataset=dataset, entrant=entrant)
