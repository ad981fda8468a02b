"""Signs that a participant probes the leaderboard instead of modelling, for organisers.

Three flags, each explained where it is shown (the submissions console):

- **constant but for a few rows**: the file predicts one value for every example but a
  handful; the shown score then tells about those few examples' targets (Whitehill
  2017 climbed a log-loss leaderboard this way).
- **run of near-identical entries**: ``RUN_LENGTH`` or more entries in a row from one
  participant, each differing from the one before on at most ``NEAR_SHARE`` of the
  examples: variations kept when the shown score improves (Blum & Hardt 2015).
- **same file as another account**: byte-identical prediction files uploaded by
  several accounts, which multiplies one participant's feedback and limits.

``record`` fills the entry's fields when it is scored (inside the scoring transaction);
``flags`` reads them back for a page of entries with one query.
"""

from dataclasses import dataclass

import numpy as np
from django.db.models import Exists, F, OuterRef, Q, Value
from django.db.models.functions import Coalesce

import scoring

from . import terms as stored_terms
from .entrants import Entrant, of_rows
from .models import Submission
from .policy import valid_q

# At most this many rows (or this share of them) off the most common prediction.
FEW_ROWS = 10
FEW_SHARE = 0.01
# Near-identical: at most this share of the examples has a different loss term.
NEAR_SHARE = 0.05
RUN_LENGTH = 5
# The split compared, the first of these that the entry has.
COMPARED_SPLITS = ("test", "val", "train")


@dataclass(frozen=True)
class Flag:
    code: str
    label: str
    explanation: str


CONSTANT = "constant"
RUN = "run"
SAME_FILE = "same_file"
FLAGS = {
    CONSTANT: (
        "constant but for a few rows",
        "Every example gets the same prediction but at most "
        f"{FEW_ROWS} (or {FEW_SHARE:.0%}) of them: the score then tells about those "
        "few examples' targets.",
    ),
    RUN: (
        "run of near-identical entries",
        f"{RUN_LENGTH} or more entries in a row from one participant, each differing from "
        f"the one before on at most {NEAR_SHARE:.0%} of the examples: variations kept "
        "when the shown score improves.",
    ),
    SAME_FILE: (
        "same file as another account",
        "Another account uploaded byte-identical prediction files to this dataset: one "
        "participant may be using several accounts' feedback and limits.",
    ),
}


def _compared(outcome):
    by_split = {str(result.split): result for result in outcome.splits}
    return next((by_split[split] for split in COMPARED_SPLITS if split in by_split), None)


def _key(task: str) -> str:
    return scoring.default_ranking_loss(task).terms_key


def differing_share(a: np.ndarray, b: np.ndarray) -> float | None:
    """Share of examples whose terms differ (equal infinities are equal); None when the
    two cover different numbers of examples."""
    if a.shape != b.shape or a.size == 0:
        return None
    same = (a == b) | np.isclose(a, b, rtol=1e-12, atol=1e-15)
    return float(np.mean(~same))


def record(*, submission: Submission, outcome) -> None:
    """Fill the entry's probing fields from its scoring outcome (and its participant's
    previous scored entry in the dataset), and save them."""
    result = _compared(outcome)
    submission.rows_off_mode = result.rows_off_mode if result else None
    submission.near_previous, submission.similar_run = None, 1
    key = _key(submission.dataset.task)
    mine = result.terms.get(key) if result else None
    previous = (
        Submission.objects.filter(
            Entrant.of(submission).q(),  # a team's members take turns: the team's previous
            valid_q(),
            dataset_id=submission.dataset_id,
        )
        .filter(
            Q(created__lt=submission.created) | Q(created=submission.created, pk__lt=submission.pk)
        )
        .order_by("-created", "-pk")
        .first()
    )
    if previous is not None and mine is not None:
        name = (
            previous.split_results.filter(split=result.split)
            .values_list("terms", flat=True)
            .first()
        )
        theirs = stored_terms.load(name).get(key) if name else None
        if theirs is not None:
            share = differing_share(np.asarray(mine), theirs)
            submission.near_previous = share
            if share is not None and share <= NEAR_SHARE:
                submission.similar_run = max(previous.similar_run, 1) + 1
    submission.save(
        update_fields=["predictions_sha256", "rows_off_mode", "near_previous", "similar_run"]
    )


def is_constant_but_few(rows_off_mode: int | None, rows: int | None) -> bool:
    if not rows_off_mode or not rows:
        return False
    return rows_off_mode <= max(FEW_ROWS, int(FEW_SHARE * rows))


def flags(submissions) -> dict[int, list[Flag]]:
    """{submission id: its flags} for the given entries (each with ``dataset``), one
    query for the shared files whatever their number."""
    submissions = list(submissions)
    hashes = {s.predictions_sha256 for s in submissions if s.predictions_sha256}
    owners: dict[tuple[int, str], set] = {}
    if hashes:
        for dataset_id, digest, *pair in Submission.objects.filter(
            predictions_sha256__in=hashes, dataset_id__in={s.dataset_id for s in submissions}
        ).values_list("dataset_id", "predictions_sha256", "team_id", "user_id"):
            # Per participant: a team's members sending the same file is one participant.
            owners.setdefault((dataset_id, digest), set()).add(of_rows(pair))
    found = {}
    for submission in submissions:
        codes = []
        rows = _rows(submission)
        if is_constant_but_few(submission.rows_off_mode, rows):
            codes.append(CONSTANT)
        if submission.similar_run >= RUN_LENGTH:
            codes.append(RUN)
        if len(owners.get((submission.dataset_id, submission.predictions_sha256), ())) > 1:
            codes.append(SAME_FILE)
        found[submission.pk] = [Flag(code, *FLAGS[code]) for code in codes]
    return found


def _rows(submission: Submission) -> int | None:
    dataset = submission.dataset
    for split in COMPARED_SPLITS:
        if split in submission.splits:
            return getattr(dataset, f"n_{split}")
    return None


def flagged_filter(code: str) -> Q:
    """A filter on Submission for the entries flagged ``code`` (the admin's list filter).
    For constant files the share is taken of the larger of the validation and test sizes,
    so the filter may keep a few validation entries the column does not flag."""
    if code == CONSTANT:
        few = (
            Q(rows_off_mode__lte=FEW_ROWS)
            | Q(rows_off_mode__lte=F("dataset__n_test") * FEW_SHARE)
            | Q(rows_off_mode__lte=F("dataset__n_val") * FEW_SHARE)
        )
        return Q(rows_off_mode__gte=1) & few
    if code == RUN:
        return Q(similar_run__gte=RUN_LENGTH)
    if code == SAME_FILE:
        # One number per participant, never NULL (comparing NULLs would drop rows): the
        # team's id, minus the user's id for a user without a team, 0 for the baseline.
        others = (
            Submission.objects.filter(
                dataset_id=OuterRef("dataset_id"),
                predictions_sha256=OuterRef("predictions_sha256"),
            )
            .annotate(entrant=Coalesce("team_id", F("user_id") * -1, Value(0)))
            .exclude(entrant=Coalesce(OuterRef("team_id"), OuterRef("user_id") * -1, Value(0)))
        )
        return ~Q(predictions_sha256="") & Q(Exists(others))
    raise ValueError(f"not a probing flag: {code}")
