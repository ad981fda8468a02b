"""What follows from a change to a participant's entries: their Ladder, which entries
count for the final ranking, and the intervals of every split the entries are scored on.

A participant is an ``entrants.Entrant``: a team, or a user without one. Scoring,
moderation, withdrawal, deletion and final choices call ``entries_changed`` inside their
transaction; the participant's lock row is taken first (``lock_owners``, before any
submission row), so that two changes at once are applied one after the other and never
deadlock. The submission rows are locked FOR NO KEY UPDATE (``no_key=True``): a change
holding an entry's row while it waits for the board's Ladder must not block the board's
own change from pointing at that entry (its holder, a foreign key, takes FOR KEY SHARE),
which FOR UPDATE would, in a cycle (tests/submissions/test_row_locks.py).
"""

from django.contrib.auth import get_user_model
from django.db import transaction

from challenge_site.teams.models import Team
from datasets.models import TEST_PARTS, Dataset, Split

from . import board_ladder, finals, ladder, signals
from .entrants import Entrant, lock_all, of_rows
from .models import Submission


def lock(*, dataset_id: int, entrant: Entrant) -> None:
    """Serialise the participant's changes on the dataset (the rows submit locks)."""
    entrant.lock(dataset_id=dataset_id)


def owners_of(submission_ids) -> set[tuple[int, Entrant]]:
    """(dataset id, participant) of each of these submissions (baselines have none)."""
    return {
        (dataset_id, of_rows(pair))
        for dataset_id, *pair in Submission.objects.filter(pk__in=submission_ids, is_baseline=False)
        .values_list("dataset_id", "team_id", "user_id")
        .distinct()
    }


def owners_from(submission: Submission) -> set[tuple[int, Entrant]]:
    """``owners_of`` one submission already read (its dataset, team and user ids)."""
    if submission.is_baseline:
        return set()
    return {(submission.dataset_id, of_rows((submission.team_id, submission.user_id)))}


def lock_owners(submission_ids, *, read: set[tuple[int, Entrant]] | None = None) -> None:
    """Lock the participants of these submissions, in one order, before the caller locks
    or changes the submissions themselves: every transaction that ends in
    ``entries_changed`` takes its locks participant first, submissions second, so two of
    them never wait for each other (finals.refresh updates all of a participant's
    entries).

    An entry's participant can change while this waits: its user joins a team, which
    makes their entries the team's. The owners are read again once locked, and a new
    one (the team) locked too, so the caller never locks the entry and then waits for
    its team (while the team's other changes wait for the entry). A team's row comes
    after its members' quota rows in every transaction (submit, join), and an entry
    only ever moves from its user to a team, so the loop ends and keeps that order.
    ``read``: their ``owners_of`` as the caller read them just before (then locked
    first, and read again as above)."""
    ids = list(submission_ids)
    locked: set[tuple[int, Entrant]] = set()
    while True:
        owners = read if read is not None else owners_of(ids)
        read = None
        new = owners - locked
        if not new:
            return
        by_dataset: dict[int, set[Entrant]] = {}
        for dataset_id, entrant in new:
            by_dataset.setdefault(dataset_id, set()).add(entrant)
        for dataset_id in sorted(by_dataset):
            lock_all(by_dataset[dataset_id], dataset_id=dataset_id)
        locked |= new


def scored_splits(splits, *, has_public_part: bool) -> list[str]:
    """The splits a submission with predictions for ``splits`` is scored on: the test's
    parts too when the challenge has them."""
    found = {str(split) for split in splits}
    if has_public_part and Split.TEST in found:
        found.update(str(part) for part in TEST_PARTS)
    return sorted(found)


def entries_changed(
    *, dataset: Dataset, entrant: Entrant | None, splits, locked: bool = False
) -> None:
    """Recompute what depends on the participant's listed entries (inside a transaction).
    ``entrant`` None (the baseline) only asks for the intervals. ``splits``: every split
    the changed entries are (or were) scored on; a Ladder split none of them is scored
    on is left as it is (its entries, and so its steps, did not change; a new ranking
    loss or new options recompute every Ladder, receivers.py). ``locked``: the caller
    holds the participant's lock already (``lock_owners`` in this transaction)."""
    if entrant is None:
        _ask_intervals(dataset, splits)
        with transaction.atomic():  # the baseline's rows: deleted and written as one
            listing_changed(dataset=dataset, entrant=None)
        return
    with transaction.atomic():
        if not locked:
            entrant.lock(dataset_id=dataset.pk)
        entrants_changed(dataset=dataset, changes={entrant: splits})


def entrants_changed(*, dataset: Dataset, changes: dict[Entrant, set[str]]) -> None:
    """``entries_changed`` for several participants at once (a batch of scoring runs),
    whose locks the caller holds (``lock_owners``): each participant's Ladder, finals and
    best rows, then the board's Ladder once per split, the intervals asked for once per
    split and the dataset's generation moved on once."""
    has_public_part = dataset.challenge.has_public_part
    scored = {
        entrant: set(scored_splits(splits, has_public_part=has_public_part))
        for entrant, splits in changes.items()
    }
    everywhere = set().union(*scored.values())
    _ask_intervals(dataset, everywhere)
    for split in ladder.LADDER_SPLITS:
        if split in everywhere:
            whose = [entrant for entrant, splits in scored.items() if split in splits]
            ladder.refresh_many(dataset=dataset, entrants=whose, split=split)
    finals.refresh_many(dataset=dataset, entrants=list(scored))
    # The board's row after the participants': every transaction takes them so.
    for split in ladder.LADDER_SPLITS:
        if split in everywhere:
            board_ladder.refresh(dataset=dataset, split=split)
    signals.listing_changed.send(sender=Dataset, dataset=dataset, entrants=list(scored))


def _ask_intervals(dataset: Dataset, splits) -> None:
    changed = scored_splits(splits, has_public_part=dataset.challenge.has_public_part)
    for split in changed:
        signals.intervals_stale.send(sender=Dataset, dataset_id=dataset.pk, split=split)


def listing_changed(*, dataset: Dataset, entrant: Entrant | None) -> None:
    """The participant's listed entries or their scores changed (inside the transaction,
    after the participant's lock): their best-per-participant rows follow, and the
    dataset's generation moves on (its cached plots and fragments are out of date): the
    leaderboard's receivers of ``signals.listing_changed`` do both."""
    signals.listing_changed.send(sender=Dataset, dataset=dataset, entrant=entrant)


def entry_deleted(*, dataset_id: int, entrant: Entrant | None, splits) -> None:
    """After a deleted entry's transaction commits: recompute for its participant, if
    the dataset and the participant are still there (a whole dataset may have gone)."""
    dataset = Dataset.objects.select_related("challenge").filter(pk=dataset_id).first()
    if dataset is None:
        return
    if entrant is not None and not _exists(entrant):
        entrant = None
    entries_changed(dataset=dataset, entrant=entrant, splits=splits)


def _exists(entrant: Entrant) -> bool:
    if entrant.team_id is not None:
        return Team.objects.filter(pk=entrant.team_id).exists()
    return get_user_model().objects.filter(pk=entrant.user_id).exists()
