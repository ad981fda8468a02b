"""The statistics behind the probing flags, computed when an entry is scored.

``record`` fills the entry's fields inside the scoring transaction (outcomes.store),
from its outcome, the dataset's baseline and at most ``RECENT`` (+ ``COMBINE_MAX`` for an
account already flagged for boosting) earlier entries of its participant: the cost is
O(rows × a bounded number of entries). What each number means and why its threshold:
docs/probing.md; the flags read from them: probing.py.
"""

import math
from datetime import timedelta

import numpy as np
from django.db.models import Q, Subquery

import scoring
import scoring.probing as stats
from challenge_site.challenges.models import Participant
from challenge_site.challenges.splits import ScoredSplit

from . import terms as stored_terms
from .entrants import Entrant
from .models import SplitResult, Submission
from .policy import valid_q

# "A few rows": at most this many (or this share of the examples, if more).
FEW_ROWS = 10
FEW_SHARE = 0.01
# The split compared, the first of these that the entry has.
COMPARED_SPLITS = ("test", "val", "train")
# Near chance: a sign-test z against the baseline below this (not better than chance,
# one-sided: worse counts too); an honest model is far above it at a few hundred rows.
Z_CHANCE = 3.0
# Random-like: near chance and |correlation| with every recent entry below this (two
# random vectors of n rows: |r| ~ 1/√n; two fits of one model: r > 0.5).
R_RANDOM = 0.2
# Concentrated change: the top few rows carry at least this share of the L1 change.
CONCENTRATED = 0.9
# Earlier entries of the participant each entry is compared with.
RECENT = 10
# Boosting: this many random-like entries from one participant in a dataset.
BOOST_MIN = 10
# The vote of the random-like entries: at most this many read (those of highest z),
# and the correlation that flags it.
COMBINE_MAX = 64
COMBINED_R = 0.3
# Bursts: at least BURST_MIN new accounts' near-chance first entries within BURST_WINDOW,
# and BURST_RATE times more than the daily sign-up rate before the test phase.
BURST_MIN = 5
BURST_WINDOW = timedelta(hours=24)
BURST_RATE = 3.0


def _key(task: str) -> str:
    return scoring.default_ranking_loss(task).terms_key


def compared(outcome):
    """The split the entry is compared on (its whole test split, else validation …)."""
    by_split = {str(result.split): result for result in outcome.splits}
    return next((by_split[split] for split in COMPARED_SPLITS if split in by_split), None)


def _shown(outcome, result):
    """The split whose score participants see: the test's public part when it has one."""
    by_split = {str(r.split): r for r in outcome.splits}
    if result is not None and str(result.split) == "test":
        return by_split.get(str(ScoredSplit.PUBLIC), result)
    return result


def few_rows(n: int) -> int:
    return stats.top_rows(n, few=FEW_ROWS, share=FEW_SHARE)


def random_like_q() -> Q:
    """The entries whose stored statistics say "near chance, like a random vector"."""
    return Q(chance_z__lt=Z_CHANCE) & (Q(max_corr__isnull=True) | Q(max_corr__lt=R_RANDOM))


def is_random_like(submission: Submission) -> bool:
    return (
        submission.chance_z is not None
        and submission.chance_z < Z_CHANCE
        and (submission.max_corr is None or submission.max_corr < R_RANDOM)
    )


def differing_share(a: np.ndarray, b: np.ndarray) -> float | None:
    """Share of examples whose terms differ (equal infinities are equal); None when the
    two cover different numbers of examples. Kept as ``near_previous`` for reference:
    a jitter makes it 1, which is why the flags use ``change_share``."""
    if a.shape != b.shape or a.size == 0:
        return None
    same = (a == b) | np.isclose(a, b, rtol=1e-12, atol=1e-15)
    return float(np.mean(~same))


def _terms_of(entries, split: str, key: str) -> dict[int, np.ndarray]:
    """{entry id: its stored terms of ``split``} (one query, then the files)."""
    names = SplitResult.objects.filter(
        submission_id__in=[e.pk for e in entries], split=split
    ).values_list("submission_id", "terms")
    found = {}
    for submission_id, name in names:
        values = stored_terms.load_array(name, key) if name else None
        if values is not None:
            found[submission_id] = np.asarray(values)
    return found


def _baseline_terms(submission: Submission, split: str, key: str) -> np.ndarray | None:
    """The dataset's scored baseline's terms of ``split`` (one query: a dataset has one
    baseline, submission_one_baseline_per_dataset), None without them."""
    # The baseline's id first (its unique partial index), then its row of the split
    # (splitresult_unique_submission_split): two index lookups whatever the planner
    # knows of the tables. As a join, a table without statistics yet (a new
    # deployment's first minute) was scanned once per row of the other.
    baseline = (
        Submission.objects.filter(valid_q(), dataset_id=submission.dataset_id, is_baseline=True)
        .order_by()
        .values("pk")[:1]
    )
    name = (
        SplitResult.objects.filter(submission_id=Subquery(baseline), split=split)
        .values_list("terms", flat=True)
        .first()
    )
    values = stored_terms.load_array(name, key) if name else None
    return None if values is None else np.asarray(values)


def _remembered_baseline(submission, split: str, key: str, baselines: dict | None):
    """``_baseline_terms``, looked up once per dataset, split and loss in ``baselines``."""
    if baselines is None:
        return _baseline_terms(submission, split, key)
    found = (submission.dataset_id, split, key)
    if found not in baselines:
        baselines[found] = _baseline_terms(submission, split, key)
    return baselines[found]


RECORDED = [
    "predictions_sha256",
    "rows_off_mode",
    "near_previous",
    "similar_run",
    "chance_z",
    "max_corr",
    "change_share",
    "random_count",
    "combined_corr",
    "burst",
]


def record(
    *,
    submission: Submission,
    outcome,
    save: bool = True,
    stored: dict[str, str] | None = None,
    baselines: dict | None = None,
) -> list[str]:
    """Fill the entry's probing fields from its scoring outcome, the baseline and its
    participant's recent entries in the dataset, and save them (unless ``save`` is False:
    the caller saves them with its own fields); returns the fields' names. ``stored``:
    split → the name of the terms file just stored (terms.save_outcome), whose compared
    array is then kept for the participant's next entries. ``baselines``: the baseline
    terms found so far in the caller's transaction (a batch's runs share them), filled
    here."""
    result = compared(outcome)
    key = _key(submission.dataset.task)
    mine = result.terms.get(key) if result else None
    mine = None if mine is None else np.asarray(mine, np.float64)
    name = (stored or {}).get(str(result.split)) if result else None
    if mine is not None and name:
        stored_terms.remember_array(name, key, mine)
    submission.rows_off_mode = result.rows_off_mode if result else None
    submission.near_previous, submission.similar_run = None, 1
    submission.max_corr = submission.change_share = submission.combined_corr = None

    shown = _shown(outcome, result)
    submission.chance_z = None
    shown_terms = shown.terms.get(key) if shown is not None else None
    if shown_terms is not None:
        reference = _remembered_baseline(submission, str(shown.split), key, baselines)
        if reference is not None:
            submission.chance_z = stats.sign_z(np.asarray(shown_terms), reference)

    entrant = Entrant.of(submission)
    earlier = list(
        Submission.objects.filter(entrant.q(), valid_q(), dataset_id=submission.dataset_id)
        .filter(
            Q(created__lt=submission.created) | Q(created=submission.created, pk__lt=submission.pk)
        )
        .exclude(pk=submission.pk)
        .order_by("-created", "-pk")[:RECENT]
    )
    if mine is not None and earlier:
        _compare_recent(submission, mine, earlier, str(result.split), key)
    previous = earlier[0] if earlier else None
    submission.random_count = (previous.random_count if previous else 0) + int(
        is_random_like(submission)
    )
    if mine is not None and previous is not None and previous.random_count >= BOOST_MIN:
        submission.combined_corr = _combination(submission, mine, str(result.split), key)
    submission.burst = _burst(submission, first=not earlier)
    if save:
        submission.save(update_fields=RECORDED)
    return list(RECORDED)


def _compare_recent(submission, mine, earlier, split, key) -> None:
    """max |r| and the most concentrated change against the recent entries; the run of
    few-row changes continues the previous entry's."""
    theirs = _terms_of(earlier, split, key)
    k = few_rows(mine.size)
    correlations, shares = [], []
    for entry in earlier:
        other = theirs.get(entry.pk)
        if other is None:
            continue
        r = stats.correlation(mine, other)
        if r is not None:
            correlations.append(abs(r))
        share = stats.change_share(mine, other, k=k)
        if share is not None:
            shares.append(share)
    submission.max_corr = max(correlations, default=None)
    submission.change_share = max(shares, default=None)
    previous = earlier[0]
    if previous.pk in theirs:
        submission.near_previous = differing_share(mine, theirs[previous.pk])
    if submission.change_share is not None and submission.change_share >= CONCENTRATED:
        submission.similar_run = max(previous.similar_run, 1) + 1


def _combination(submission, mine, split, key) -> float | None:
    """Correlation with the z-weighted mean of the participant's earlier random-like
    entries (at most COMBINE_MAX, those of highest z): the vote of Blum & Hardt's kept
    vectors."""
    entries = list(
        Submission.objects.filter(
            Entrant.of(submission).q(),
            valid_q(),
            random_like_q(),
            dataset_id=submission.dataset_id,
            created__lte=submission.created,
        )
        .exclude(pk=submission.pk)
        # The best by z: the vectors the attack most likely kept (the latest would miss
        # most of them once it made more than COMBINE_MAX).
        .order_by("-chance_z", "-created", "-pk")[:COMBINE_MAX]
    )
    theirs = _terms_of(entries, split, key)
    kept = [(e.chance_z, theirs[e.pk]) for e in entries if e.pk in theirs]
    if not kept:
        return None
    weights, vectors = zip(*kept, strict=True)
    return stats.combination_corr(mine, list(vectors), list(weights))


def joined(submission: Submission):
    """When the entry's user joined its challenge (their account's creation if the
    challenge keeps no participation row for them)."""
    found = (
        Participant.objects.filter(
            challenge_id=submission.dataset.challenge_id, user_id=submission.user_id
        )
        .values_list("joined", flat=True)
        .first()
    )
    return found or submission.user.date_joined


def burst_threshold(challenge) -> int:
    """BURST_MIN, or BURST_RATE times the new participants per day before the test
    phase (their daily rate over the validation phase) if that is more."""
    days = max((challenge.test_start - challenge.start).total_seconds() / 86400, 1.0)
    before = Participant.objects.filter(
        challenge=challenge, joined__gte=challenge.start, joined__lt=challenge.test_start
    ).count()
    return max(BURST_MIN, math.ceil(BURST_RATE * before / days))


def _burst(submission: Submission, *, first: bool) -> int | None:
    """For a new account's near-chance first entry in the test phase: how many such
    entries (this one included) were made within BURST_WINDOW up to it when they are a
    burst, else 0; None for any other entry. The earlier members are not written to
    (another scoring transaction may hold them): probing.flags finds them by this
    entry's time and count."""
    challenge = submission.dataset.challenge
    if (
        not first
        or submission.user_id is None
        or submission.created < challenge.test_start
        or (submission.chance_z is not None and submission.chance_z >= Z_CHANCE)
        or joined(submission) < challenge.test_start
    ):
        return None
    since = max(challenge.test_start, submission.created - BURST_WINDOW)
    count = (
        Submission.objects.filter(
            dataset_id=submission.dataset_id,
            burst__isnull=False,
            created__gte=since,
            created__lte=submission.created,
        )
        .exclude(pk=submission.pk)
        .count()
        + 1
    )
    return count if count >= burst_threshold(challenge) else 0
